#!/usr/bin/env bash
# Verdicts must not depend on load: the race, hostile and channel matrices beside two CPU-burning
# processes (as many as the machine has cores, on the two-core machines this project runs on).
#
#   bash benchmarks/under_load.sh [race|all] [pytest options...]
#   bash benchmarks/under_load.sh list [race|all]    # the selection, one test (or folder) a line
#
# `race`: every double-spend and check-then-spend test, and the race gate's own (a lone redemption
# never waits; a race's announced redemptions all pass the check before any goes on). `all`: those, the hostile
# targets and every out-of-band channel. The burners are bounded (`timeout`) and stopped on exit.
# PYTHON names the interpreter (default: python3 on PATH); MCA_DEADLINE_SCALE is passed through.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
which="${1:-race}"
[ $# -gt 0 ] && shift
# `list`: what `race` or `all` runs, for `.ci/run` to leave out of the suite it runs without burners.
listing=false
if [ "$which" = list ]; then
  listing=true
  which="${1:-race}"
  [ $# -gt 0 ] && shift
fi

# tests/reference first: test modules import their folder's conftest by name, and the last
# conftest loaded for the command line's arguments is the one `from conftest import` finds.
race=(
  "tests/reference/test_reference_server.py::test_flaw_check_then_delete_ledger"
  "tests/reference/test_race_gate.py"
  "tests/matrix/test_detection_matrix.py::test_each_flaw_is_caught_by_its_family_and_fools_no_other[check-then-delete-ledger]"
  "tests/matrix/test_detection_matrix.py::test_each_flaw_is_caught_by_its_family_and_fools_no_other[no-ledger]"
  "tests/matrix/test_elsewhere.py::test_one_approval_redeemed_many_times_at_once_takes_effect_once_on_the_careful_server"
  "tests/matrix/test_elsewhere.py::test_an_approval_checked_then_spent_a_moment_later_is_taken_by_every_redemption_at_once"
  "tests/matrix/test_payments.py::test_each_payment_flaw_is_caught_by_its_family_and_fools_no_other[racy-ledger]"
)
case "$which" in
  race) selection=("${race[@]}") ;;
  all) selection=("${race[@]}" tests/hostile tests/matrix/test_elsewhere.py tests/matrix/test_human_http.py tests/matrix/test_type_ahead.py) ;;
  *) echo "under_load.sh: say race or all, not '$which'" >&2; exit 4 ;;
esac
if $listing; then
  printf '%s\n' "${selection[@]}"
  exit 0
fi

burners=()
stop() { for pid in "${burners[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
for _ in 1 2; do
  timeout 3600 "$python" -c "while True: pass" &
  burners+=("$!")
done
echo "under_load.sh: ${#burners[@]} CPU burners beside the $which matrices; load $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" -m pytest -m "" -n 2 "${selection[@]}" "$@"
