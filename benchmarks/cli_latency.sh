#!/usr/bin/env bash
# Commands that answer at once (issue 34): `--version`, `--help`, a usage error, a profile YAML
# syntax error, a profile key typo and `fleet --matrix`, each a fresh process, against the goal of
# half a second of CPU (wall time on a shared machine counts the other processes' turns).
#
#   bash benchmarks/cli_latency.sh [REPEAT]
#
# Prints a line per case (median wall and CPU seconds, ok or over) and exits 1 if any is over.
# PYTHON names the interpreter (default: python3 on PATH). Never run by the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
echo "cli_latency.sh: load $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
"$python" -m mcp_confirm_audit.cli.main bench-cli --repeat "${1:-7}"
