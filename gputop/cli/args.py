"""The ``gputop`` command line's words: the parser, the types of its values, and how a bad one is said
(one line, exit status 2), serve's options included. What each command then does is in ``main`` (the TUI),
``commands`` and ``serve.command``."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from gputop import __version__
from gputop.core.glyphs import for_terminal
from gputop.core.output.metric_names import NAME_SETS
from gputop.core.run_config import DEFAULT_INTERVAL_S
from gputop.core.sampler import MAX_INTERVAL_S, MIN_INTERVAL_S

EXIT_USAGE = 2
DEFAULT_LISTEN = "127.0.0.1:9400"
DEFAULT_SERVE_LISTEN = "127.0.0.1:8000"
MIN_ONCE_WIDTH = 60
N = TypeVar("N", int, float)


def fail(message: str) -> int:
    """Say what is wrong in one line on stderr (in the ASCII set where it was chosen); the exit status for it."""
    print(f"gputop: {for_terminal(message)}", file=sys.stderr)
    return EXIT_USAGE


def _number(text: str, parse: Callable[[str], N], unit: str) -> N:
    """``text`` read by ``parse`` (int or float), or argparse's error saying it is no number of ``unit``."""
    try:
        return parse(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of {unit}: {text!r}") from None


def width_value(text: str) -> int:
    """argparse type for --width: a number of columns, at least MIN_ONCE_WIDTH."""
    value = _number(text, int, "columns")
    if value < MIN_ONCE_WIDTH:
        raise argparse.ArgumentTypeError(f"must be at least {MIN_ONCE_WIDTH} columns, not {text}")
    return value


def interval_value(text: str) -> float:
    """argparse type for an interval in seconds."""
    value = _number(text, float, "seconds")
    if not math.isfinite(value) or not MIN_INTERVAL_S <= value <= MAX_INTERVAL_S:
        raise argparse.ArgumentTypeError(
            f"must be between {MIN_INTERVAL_S:g} and {MAX_INTERVAL_S:g} seconds, not {text}"
        )
    return value


def count_value(text: str) -> int:
    """argparse type for a count: a whole number, 0 or more."""
    value = _number(text, int, "series")
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def duration_value(text: str) -> float:
    """argparse type for a positive duration in seconds."""
    value = _number(text, float, "seconds")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text}")
    return value


# The main keys of the TUI, for --help (tests/test_cli.py holds each to the key map; F1 lists them all).
KEYS_EPILOG = """\
keys in the TUI (F1 lists them all):
  Up Down  Enter   move the cursor; the selected process in full
  k  F9            send a signal to the selected process (or those tagged with Space)
  /  F4  Esc       filter by command, user, PID or container; clear the filter
  t  F5            the process tree: workers under their launcher
  -  +             in the tree: fold, unfold the subtree under the selected line
  M  P  T  N       sort by GPU memory, CPU, run time, PID (< > move the sort column)
  u  0-9  a        one user's processes, one GPU's, all GPUs again
  g                the selected process's GPU in detail, with its history
  c                compact or full GPU cards (gputop picks by the room until told)
  ]  [             faster, slower refresh
  !                the alert log
  q  F10           quit
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gputop",
        description="A terminal GPU monitor: GPUs, their processes, and trouble coming.",
        epilog=KEYS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"gputop {__version__}")
    parser.add_argument("--demo", action="store_true", help="run on a simulated machine (no GPU needed)")
    parser.add_argument("--demo-gpus", type=int, default=4, metavar="N", help="GPUs in the demo machine (1-16)")
    parser.add_argument(
        "--nvml-capture", metavar="FILE",
        help="run on a capture's NVML answers (gputop doctor --capture) instead of this machine's driver",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--once", action="store_true", help="print one readable table and exit")
    output.add_argument("--json", action="store_true", help="print one JSON document and exit")
    parser.add_argument(
        "-i",
        "--interval",
        type=interval_value,
        default=None,
        metavar="S",
        help=f"seconds between samples (default: the settings file's, else {DEFAULT_INTERVAL_S:g};"
        f" minimum {MIN_INTERVAL_S:g})",
    )
    parser.add_argument("--readonly", action="store_true", help="no signal actions anywhere")
    parser.add_argument("--no-mouse", action="store_true", help="turn mouse reporting off (slow links)")
    parser.add_argument(
        "--color", choices=("auto", "always", "never"), default="auto",
        help="colour in --once (auto: on a terminal, unless NO_COLOR is set)",
    )
    parser.add_argument(
        "--ascii", action="store_true",
        help="draw with ASCII only: bars, borders and marks (the default on a non-UTF-8 locale or TERM=linux/vt*)",
    )
    parser.add_argument(
        "--by", choices=("user", "job", "pod", "container"), default=None,
        help="--once: the GPUs' holders grouped by user, job, pod or container",
    )
    parser.add_argument(
        "--width", type=width_value, default=None, metavar="N", help="--once in N columns (default: the terminal's)"
    )
    parser.add_argument("--record", metavar="FILE", help="record every tick of the TUI to FILE (JSON lines; .gz: gzip)")
    parser.add_argument("--bell", action="store_true", help="ring the terminal bell when an alert is raised")
    parser.add_argument("--config", type=Path, metavar="PATH", help="settings file (default: the XDG location)")
    parser.add_argument(
        "--full-redraw", action="store_true", help="let Textual write whole regions (no changed-cell output)"
    )
    parser.add_argument("--debug", action="store_true", help="say in the TUI when gputop falls back on something")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser("replay", help="open the TUI on a recording")
    replay.add_argument("file", metavar="FILE")
    add_cluster_commands(commands)
    add_serve_command(commands)
    doctor = commands.add_parser("doctor", help="say why gputop cannot see a GPU or its processes, and what to do")
    doctor.add_argument("--json", action="store_true", dest="doctor_json", help="one JSON document, for scripts")
    doctor.add_argument(
        "--capture", metavar="FILE",
        help="record every NVML call gputop makes and its answer, with gputop's --json of each tick, to FILE"
        " (.gz: gzip): attach it to a bug report (docs/capture.md)",
    )
    doctor.add_argument(
        "--seconds", type=duration_value, default=10.0, metavar="N", help="--capture: for N seconds (default 10)"
    )
    doctor.add_argument(
        "--no-anonymize", action="store_true",
        help="--capture: keep GPU serials, UUIDs, PCI bus ids and the host name (replaced by stand-ins by default)",
    )
    doctor.add_argument(
        "--keep-names", action="store_true", help="--capture: keep processes' users and commands (replaced by default)"
    )
    record = commands.add_parser("record", help="sample without a TUI into a JSON-lines file (.gz: gzip)")
    record.add_argument("file", metavar="FILE")
    record.add_argument("--duration", type=duration_value, default=None, metavar="S", help="stop after S seconds")
    record.add_argument(
        "--interval", type=interval_value, default=None, metavar="S", dest="record_interval",
        help="seconds between samples (default: the top-level --interval)",
    )
    return parser


def add_cluster_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``gputop export`` (Prometheus /metrics) and ``gputop cluster`` (a cluster view on Prometheus)."""
    export = commands.add_parser("export", help="serve the GPUs as Prometheus metrics on /metrics")
    export.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT", help=f"default {DEFAULT_LISTEN}")
    export.add_argument(
        "--interval", type=interval_value, dest="export_interval", metavar="S", help="seconds between samples"
    )
    export.add_argument("--hostname", metavar="NAME", help="the hostname label (default: this machine's name)")
    export.add_argument(
        "--names", choices=NAME_SETS, default="both",
        help="metric names: gputop's own, DCGM exporter's (DCGM_FI_*), or both (default)",
    )
    export.add_argument(
        "--max-process-series", type=count_value, default=1000, metavar="N",
        help="serve at most N per-process series, the largest by GPU memory (default 1000)",
    )
    export.add_argument(
        "--web-config-file", metavar="FILE",
        help="TLS and basic auth, in the Prometheus exporter-toolkit format (needs gputop-monitor[web])",
    )
    shipped = export.add_mutually_exclusive_group()
    shipped.add_argument(
        "--print-dashboard", action="store_true", help="print gputop's Grafana dashboard (JSON) and exit"
    )
    shipped.add_argument(
        "--print-alert-rules", action="store_true", help="print gputop's Prometheus alert rules (YAML) and exit"
    )
    export.add_argument(
        "--job-label", action="store_true",
        help="a job label (the Slurm job id) on the per-process series (a series per job: off by default)",
    )

    cluster = commands.add_parser("cluster", help="watch many machines' GPUs through Prometheus")
    cluster.add_argument("--prometheus", required=True, metavar="URL", help="e.g. http://prometheus:9090")
    cluster.add_argument("--hosts", metavar="REGEX", help="only hostnames matching this (anchored) regex")
    cluster.add_argument(
        "--interval", type=interval_value, dest="cluster_interval", default=5.0, metavar="S",
        help="seconds between refreshes (default 5)",
    )
    cluster.add_argument(
        "--stale-after", type=interval_value, metavar="S",
        help="a host whose newest sample is older than this is stale (default 3 x max(interval, 15))",
    )


# serve's own options; what each tab runs, and the checks made first, are in serve/command.py.
def add_serve_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help=f"the TUI in a browser tab (http://{DEFAULT_SERVE_LISTEN}/ by default)",
        usage="gputop [OPTIONS] serve [--listen HOST:PORT] [--readonly | --allow-signals] [--token TOKEN]"
        " [OPTIONS] [replay FILE | cluster --prometheus URL ...]",
        description="Serve gputop (or `replay FILE`, or `cluster ...`) to browsers: each tab runs its own gputop.",
        allow_abbrev=False,  # an abbreviated gputop option must go to the tabs, not match one of these
    )
    serve.add_argument(
        "--listen", default=DEFAULT_SERVE_LISTEN, metavar="HOST:PORT",
        help=f"default {DEFAULT_SERVE_LISTEN}; any address but loopback needs the token",
    )
    access = serve.add_mutually_exclusive_group()
    access.add_argument(
        "--readonly", action="store_true", dest="serve_readonly", help="no signal actions in the browser (the default)"
    )
    access.add_argument("--allow-signals", action="store_true", help="let the browser send signals to processes")
    serve.add_argument(
        "--token", metavar="TOKEN", help="the token every request must carry (made up when listening beyond loopback)"
    )
