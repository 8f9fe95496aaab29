"""One audit of one target: its session, the controls, what is observed, the actions and the verdict."""
