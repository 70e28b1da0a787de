"""gputop: a terminal GPU monitor."""

__version__ = "0.1.0"
