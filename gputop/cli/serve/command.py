"""``gputop serve``: what each tab runs, and the checks made first (its options are in ``cli/args.py``).

Every browser tab runs ``python -m gputop`` with the options ``serve`` was
given (before or after the word ``serve``), ``--readonly`` unless
``--allow-signals``. What would fail in every tab (a bad option, an unreadable
recording, no driver) fails here once, with one line and status 2.
"""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from typing import Any

from gputop.core.settings import Settings

SERVED_COMMANDS = (None, "replay", "cluster")


def parse_command_line(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """``parser.parse_args``, except that what ``serve`` does not know is kept for its tabs in ``served``."""
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.command != "serve":
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.served = unknown
    return args


def top_level_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The top-level options that ``args`` holds, written back as command-line words."""
    words: list[str] = []
    # argparse lists its actions only in this attribute; each option found there is passed on.
    for action in parser._actions:
        if not action.option_strings:
            continue
        value = getattr(args, action.dest, action.default)
        if value is None or value == action.default:
            continue
        words += [action.option_strings[-1]] if action.nargs == 0 else [action.option_strings[-1], str(value)]
    return words


class ServeError(Exception):
    """What cannot be served, as one line."""


def tab_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace, settings: Settings) -> list[str]:
    """The arguments each tab's ``gputop`` gets; raises ServeError (and argparse exits) on what cannot run."""
    if args.readonly and args.allow_signals:
        raise ServeError("--readonly and --allow-signals contradict each other")
    words = top_level_options(parser, args) + list(args.served)
    if not args.allow_signals and "--readonly" not in words:
        words.insert(0, "--readonly")
    served = parser.parse_args(words)  # a bad option is argparse's usual message and status 2, once
    if served.command not in SERVED_COMMANDS:
        raise ServeError(f"serve shows the TUI, `replay FILE` or `cluster ...` in a browser, not `{served.command}`")
    if served.once or served.json:
        raise ServeError("--once and --json print once and exit: there is nothing to serve")
    if served.record:
        raise ServeError("--record: every tab would write the same file; record in a terminal instead")
    check_served(served, settings)
    return words


def check_served(served: argparse.Namespace, settings: Settings) -> None:
    """Fail now, once, on what would fail in every tab: an unusable recording, Prometheus URL or GPU source."""
    from gputop.core.sources.base import SourceUnavailable
    from gputop.core.sources.factory import open_source

    if served.command == "replay":
        from gputop.core.recording.record import RecordingError, read_recording

        try:
            recording = read_recording(served.file)
        except RecordingError as error:
            raise ServeError(str(error)) from None
        if not recording.snapshots:
            raise ServeError(f"nothing to replay: {recording.damage}")
    elif served.command == "cluster":
        from gputop.core.cluster.model import ClusterOptions, ConfigError

        try:
            ClusterOptions.create(served.prometheus, hosts=served.hosts)
        except ConfigError as error:
            raise ServeError(str(error)) from None
    else:
        try:
            source = open_source(served, settings)
            source.open()
            source.close()
        except SourceUnavailable as error:
            raise ServeError(str(error)) from None


def run_serve(args: argparse.Namespace) -> int:
    """``gputop serve``: check, listen, print the URL to open, serve until Ctrl+C; 2 when it cannot."""
    # Here, not at the top: asyncio imports ssl (OpenSSL, 4 MiB), which the TUI does without
    # (ui.terminal.textual_imports).
    import asyncio
    import secrets

    from gputop.cli.args import build_parser, fail
    from gputop.core.output.exporter import ListenError, describe_bind_error, parse_listen

    settings: Settings = args.settings  # main has read them and printed their warnings
    if args.interval == settings.interval_s:
        # main filled in the settings' interval; each tab reads the same settings, so it need not be told.
        args.interval = None
    try:
        host, port = parse_listen(args.listen)
        words = tab_arguments(build_parser(), args, settings)
    except (ListenError, ServeError) as error:
        return fail(str(error))
    if args.token == "":
        return fail("--token must not be empty")
    try:
        from gputop.cli.serve.server import GputopServer, is_loopback
        from gputop.cli.serve.textual_serve_private import check_internals
    except ImportError as error:
        return fail(f"serve needs textual-serve ({error}): pip install 'gputop-monitor[serve]'")
    problem = check_internals()
    if problem is not None:
        return fail(f"serve cannot drive this textual-serve ({problem}): pip install 'gputop-monitor[serve]'")
    token = args.token if args.token or is_loopback(host) else secrets.token_urlsafe(18)
    server = GputopServer(
        [sys.executable, "-m", "gputop", *words],
        host=host,
        port=port,
        token=token,
        max_tabs=settings.serve_max_tabs,
    )

    def started(addresses: list[Any]) -> None:
        bound_port = addresses[0][1]
        shown = socket.gethostname() if host in ("0.0.0.0", "::") else host
        shown = f"[{shown}]" if ":" in shown else shown
        query = f"?token={token}" if token is not None else ""
        access = "signals allowed" if args.allow_signals else "read-only"
        url = f"http://{shown}:{bound_port}/{query}"
        print(f"gputop: serving on {url} ({access}; Ctrl+C stops)", file=sys.stderr, flush=True)

    try:
        asyncio.run(server.run(started))
    except OSError as error:
        return fail(describe_bind_error(host, port, error))
    except KeyboardInterrupt:
        pass
    return 0
