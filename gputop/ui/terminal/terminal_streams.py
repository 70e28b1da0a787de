"""Where the full screen draws and reads its keys: the terminal, whatever else was redirected.

Textual reads the keys from standard input and draws on standard error. With standard error sent to a
file (``gputop 2>err.log``) the screen would go into the file while the terminal kept the first frame,
frozen, and after ``q`` the alternate screen. ``drawing_on_terminal()`` points standard error at the
terminal standard output is for as long as the full screen runs, and back at the file after it, so the
messages printed after the screen closes still go where the user sent them.

With no terminal for the keys, or none to draw on (``gputop < /dev/null | cat``, ``ssh host gputop``
without ``-t``), ``terminal_refusal()`` says so in one line, pointing at the outputs made for pipes.
Imported before Textual: it reads nothing of it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import TextIO

FOR_PIPES = "use --once for a table or --json for JSON"


def _is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):  # closed, or not a real file
        return False


def terminal_refusal(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why the full screen cannot run here, or None when it can."""
    if environ.get("TEXTUAL_DRIVER"):
        return None  # a driver of its own, not the terminal's (a browser tab of `gputop serve`)
    keys = _is_terminal(sys.stdin)
    screen = _is_terminal(sys.stdout) or _is_terminal(sys.stderr)
    if keys and screen:
        return None
    if not keys and not screen:
        missing = "standard input and output are not a terminal"
    elif not keys:
        missing = "standard input is not a terminal, so keys cannot be read"
    else:
        missing = "neither standard output nor standard error is a terminal to draw on"
    return f"the live view needs a terminal ({missing}): {FOR_PIPES}"


@contextlib.contextmanager
def drawing_on_terminal() -> Iterator[None]:
    """Within the block, standard error is standard output's terminal when only that one is a terminal."""
    if _is_terminal(sys.stderr) or not _is_terminal(sys.stdout):
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    error_fd = sys.__stderr__.fileno() if sys.__stderr__ is not None else 2
    redirected = os.dup(error_fd)
    os.dup2(sys.stdout.fileno(), error_fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os.dup2(redirected, error_fd)
        os.close(redirected)
