"""Every use of a private textual-serve name in gputop, in this one module.

textual-serve's ``AppService`` drives one browser tab's app: it starts the process, relays the
page's protocol over its stdin and stdout, and stops it. But it starts the process through a
shell, and stops it by asking it to quit and waiting as long as that takes. ``Tab`` subclasses it
to start gputop without a shell, in a session of its own, and to end it for sure; that needs the
private names below, each with why and which public API would replace it. ``check_internals``
looks at each one before ``gputop serve`` listens: a textual-serve whose insides have changed is
refused in one line, rather than breaking in every tab. ``tests/test_textual_private.py`` keeps
every other module off textual-serve's private names.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from asyncio.subprocess import PIPE, Process
from pathlib import Path
from typing import Any

import textual_serve
from textual_serve.app_service import AppService
from textual_serve.download_manager import DownloadManager

# Not a private name but its package's layout: the page template, its script and styles, which
# gputop's own server serves (textual-serve's Server cannot check a request before serving it).
# Public replacement: a function that returns the page, or a Server with a request hook.
TEXTUAL_SERVE = Path(textual_serve.__file__).resolve().parent
PAGE_TEMPLATE = "app_index.html"

# A tab whose gputop is running gets this long to quit when asked, then SIGTERM, then SIGKILL.
QUIT_GRACE_S = 3.0
TERM_GRACE_S = 2.0

# The parameters each private method is expected to take (checked by name, so a reordering is caught).
_EXPECTED_PARAMETERS = {
    # Private 1: AppService._open_app_process(width, height), which start() awaits to start the
    # process. Why: overridden to start gputop without a shell and in its own session. Public
    # replacement: an argv (instead of a shell command) and session flag for AppService.
    "_open_app_process": ("self", "width", "height"),
    # Private 2: AppService._build_environment(width, height): the variables Textual's web driver
    # needs (its driver, size, colours). Why: the overridden start must give the same. Public
    # replacement: a public environment() method.
    "_build_environment": ("self", "width", "height"),
}
# Private 3: AppService's attributes _process and _stdin (which its run() and send_bytes() read,
# so the overridden start sets them) and _task (the task that reads the process's output, awaited
# when a tab ends so that nothing of it is left). Public replacement: the same as for 1, and an
# awaitable that is done when the tab's process and its reader have both ended.
_EXPECTED_ATTRIBUTES = ("_process", "_stdin", "_task")


def check_internals() -> str | None:
    """Why the private names ``Tab`` uses cannot be trusted in this textual-serve; None when they can."""
    for name, expected in _EXPECTED_PARAMETERS.items():
        method = getattr(AppService, name, None)
        if not callable(method):
            return f"AppService.{name} is gone"
        found = tuple(inspect.signature(method).parameters)
        if found != expected:
            return f"AppService.{name} takes ({', '.join(found)}), expected ({', '.join(expected)})"

    async def unused(*_data: object) -> None:
        """The writers and closer of a service that is only looked at."""

    service = AppService("", write_bytes=unused, write_str=unused, close=unused, download_manager=DownloadManager())
    for name in _EXPECTED_ATTRIBUTES:
        if not hasattr(service, name):
            return f"AppService has no {name}"
    if not (TEXTUAL_SERVE / "templates" / PAGE_TEMPLATE).is_file() or not (TEXTUAL_SERVE / "static").is_dir():
        return f"its page ({PAGE_TEMPLATE}) or static files are gone"
    return None


class Tab(AppService):
    """One browser tab's gputop: started without a shell in its own session, always ended."""

    def __init__(self, argv: list[str], **kwargs: Any) -> None:
        super().__init__(" ".join(argv), **kwargs)
        self.argv = argv
        self.running = False  # the app has drawn something, so it can be asked to quit
        self._ending: asyncio.Future[None] | None = None

    async def _open_app_process(self, width: int = 80, height: int = 24) -> Process:
        # Its own session: a Ctrl+C in the server's terminal reaches the server, which ends the tabs.
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=PIPE,
            stdout=PIPE,
            stderr=PIPE,
            env=self._build_environment(width=width, height=height),
            start_new_session=True,
        )
        self._process = process
        self._stdin = process.stdin
        if self._ending is not None:
            process.kill()  # stopped while it was starting: the stop found nothing to end
        return process

    @property
    def ending(self) -> bool:
        """Its gputop is being ended: the tab no longer counts against the cap."""
        return self._ending is not None

    async def on_data(self, payload: bytes) -> None:
        self.running = True
        await super().on_data(payload)

    async def stop(self) -> None:
        """End the process (once, however often called, and even if the caller is cancelled)."""
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end())
        await asyncio.shield(self._ending)

    async def _end(self) -> None:
        process = self._process
        if process is None:
            return
        if self.running and process.returncode is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(super().stop(), QUIT_GRACE_S)
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), TERM_GRACE_S)
            except asyncio.TimeoutError:
                process.kill()
        await process.wait()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task  # ends at the closed stdout
            self._task = None
