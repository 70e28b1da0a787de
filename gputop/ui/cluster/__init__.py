"""``gputop cluster``: many machines' GPUs, read from Prometheus. A separate app from the local TUI."""
