"""The owner signs a challenge: `sign.py CHALLENGE_JSON` prints `{"challenge": ..., "signature": ...}`.

The key is the owner's (ELSEWHERE_OWNER_KEY), never the agent's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys


def main(argv: list[str]) -> int:
    challenge = json.loads(argv[0])
    message = json.dumps(challenge, sort_keys=True, separators=(",", ":"))
    key = os.environ["ELSEWHERE_OWNER_KEY"]
    signature = hmac.new(key.encode(), message.encode(), hashlib.sha256).hexdigest()
    print(json.dumps({"challenge": challenge, "signature": signature}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
