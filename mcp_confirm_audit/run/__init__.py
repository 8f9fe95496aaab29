"""The audit inside pytest, registered only when a target is given: its hooks, its items and its hookspec."""
