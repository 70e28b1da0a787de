"""Widgets of the gputop TUI."""
