"""The command line: run, init, bench, and the plugin's own cost (bench-plugin)."""
