"""The kinds of effect probe other than the sandbox, one module each, each registering itself with `probe_kind`."""
