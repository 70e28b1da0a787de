"""Screens of the gputop TUI."""
