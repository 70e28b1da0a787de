"""What the printing commands (``--once``, ``--json``, ``export --print-*``, ``doctor``) write, and what
happens when it cannot be written: one line on stderr, never a traceback.

A reader that went away (``gputop --json | head -1``) is not an error worth a word: gputop stops
quietly, as ``cat`` does, with the status a shell shows for a program ended by SIGPIPE.
"""

from __future__ import annotations

import os
import signal
import sys

from gputop.cli.args import fail

# 128 + SIGPIPE: what `$?` says after `cat big | head -1` (cat is ended by the signal).
EXIT_READER_GONE = 128 + signal.SIGPIPE


def emit(text: str) -> int:
    """Write ``text`` to stdout and flush it; 0, or the exit status once the failure is said (or, for a
    reader that went away, kept quiet)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_READER_GONE
    except OSError as error:
        _discard_stdout()
        return fail(f"cannot write to standard output: {error.strerror or error}")
    return 0


def _discard_stdout() -> None:
    """Send what is still buffered, and anything written later, nowhere: the last flush at exit must
    not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor behind stdout: nothing is flushed to one either
        pass
