"""The `arena` command line and its subcommands."""
