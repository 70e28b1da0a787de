"""`python -m gputop`, and the `gputop` command."""

from __future__ import annotations

import contextlib
import os
import sys

from gputop.cli.main import main


def run() -> None:
    """Run gputop, then end the process at once with main()'s status.

    When main() returns, everything gputop opened is closed and the terminal given back. What
    would follow is the interpreter's own teardown (after the full screen, 0.2-0.6 s of freeing
    modules on a loaded 2-core machine) and the exit handlers of the libraries loaded, the
    driver's among them, while a call may still be stuck in it. The operating system frees all
    of it at once, so quitting waits on none of it.
    """
    try:
        status = main()
    except KeyboardInterrupt:  # a second Ctrl+C while gputop was already closing
        status = 130
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that went away, a stream already closed
            stream.flush()
    os._exit(status)


if __name__ == "__main__":
    run()
