"""The command line: the parser (args), the TUI's start (main), the other commands (commands, serve/)."""

from gputop.cli.distribution import refuse_if_shadowed

# Before anything else of the command line is imported: another project's `gputop` command (installed over
# this one's) imports this package too, and would otherwise end in a TypeError.
refuse_if_shadowed()
