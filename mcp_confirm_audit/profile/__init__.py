"""The target profile: its keys, how it is loaded, and the HTTP headers it names."""
