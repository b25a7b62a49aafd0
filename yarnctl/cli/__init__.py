"""The `yarnctl` command line: argument parsing, output and error handling only."""
