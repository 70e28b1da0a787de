"""The command line: the parser (args), the TUI's start (main), the other commands (commands, serve/)."""
