"""A wallet that signs a payment desk's challenge: `wallet.py --seed-env VAR CHALLENGE_JSON`.

Prints the approval token: base64 of `{"challenge": ..., "sig": HEX}`, the
signature Ed25519 over the challenge's canonical JSON. The key is derived from
a seed (the owner's in an environment variable the agent never sees; the
agent's own in a file or a word it chose). `--identity` prints the key's
public half, the identity a desk checks approvals against.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sys

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def key_of(seed: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(seed.encode()).digest())


def identity(seed: str) -> str:
    """The public key of the seed's key, as hex: what `owner` names."""
    return key_of(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


def canonical(challenge: object) -> bytes:
    return json.dumps(challenge, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sign(seed: str, challenge: object) -> str:
    sig = key_of(seed).sign(canonical(challenge)).hex()
    return base64.urlsafe_b64encode(json.dumps({"challenge": challenge, "sig": sig}).encode()).decode()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--seed-env", help="the environment variable holding the seed")
    source.add_argument("--seed", help="the seed itself (a key the caller made for itself)")
    parser.add_argument("--identity", action="store_true", help="print the public key and stop")
    parser.add_argument("challenge", nargs="?")
    args = parser.parse_args(argv)
    seed = os.environ[args.seed_env] if args.seed_env else args.seed
    if args.identity:
        print(identity(seed))
        return 0
    if args.challenge is None:
        parser.error("a challenge to sign is needed")
    print(sign(seed, json.loads(args.challenge)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
