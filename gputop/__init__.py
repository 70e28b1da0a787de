"""gputop: a terminal GPU monitor."""

__version__ = "0.1.0"
# The distribution this package comes from: another project's `gputop` package installed over this one's
# files replaces this module, and the command line then says so (gputop/cli/distribution.py).
DISTRIBUTION = "gputop-monitor"
