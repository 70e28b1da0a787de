"""What the commands besides the TUI run: ``--once`` and ``--json``, ``record``, ``export``, ``cluster``
and ``doctor``.

Each imports what it needs when it runs, so the TUI's start imports none of it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time

from gputop.cli.args import MIN_ONCE_WIDTH, fail
from gputop.cli.stdout import emit
from gputop.core.glyphs import for_terminal, wants_no_colour
from gputop.core.model import Snapshot
from gputop.core.sampler import Sampler, TickLoop
from gputop.core.settings import Settings
from gputop.core.sources.base import SourceUnavailable

# psutil's CPU figures and the network rates need two readings some time apart.
_ONCE_SETTLE_S = 0.25


def run_doctor(args: argparse.Namespace) -> int:
    """``gputop doctor``: every check, in words or JSON; 0 when gputop can run here, 1 when it cannot."""
    if args.capture:
        from gputop.cli.capture_command import run_capture

        return run_capture(args)
    from gputop.core.doctor import diagnose

    diagnosis = diagnose()
    if args.doctor_json or args.json:
        written = emit(diagnosis.to_json() + "\n")
    else:
        columns = shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100
        written = emit(for_terminal(diagnosis.to_text(columns)))
    return written or (0 if diagnosis.runnable else 1)


def run_once(sampler: Sampler, args: argparse.Namespace, settings: Settings) -> int:
    """``--once`` (a table) or ``--json``: two samples, so the rates and CPU figures mean something."""
    from gputop.core.analysis.foresight import Watcher
    from gputop.core.analysis.hold import IMMEDIATE
    from gputop.core.output.once_table import render_text
    from gputop.core.output.snapshot_json import dumps, snapshot_to_dict

    # Two samples a quarter of a second apart are too little history for a
    # forecast: --json says so with a null forecast and null growth rates.
    # A report, not a watch: the alerts are the conditions now, not held by time.
    watcher = Watcher(settings.thresholds, hold=IMMEDIATE)
    watcher.update(sampler.sample())
    time.sleep(_ONCE_SETTLE_S)
    snapshot = sampler.sample()
    foresight = watcher.update(snapshot)
    if snapshot.gpus and not any(gpu.answering for gpu in snapshot.gpus):
        return fail(f"no GPU answered: {snapshot.gpus[0].last_error}")
    if args.json:
        from gputop.core.analysis.owners import owners_document

        document = snapshot_to_dict(
            snapshot, foresight.forecasts, watcher.monitor.active.values(), foresight.diagnoses
        )
        document["owners"] = owners_document(snapshot, foresight.diagnoses)
        return emit(dumps(document, indent=2) + "\n")
    terminal = sys.stdout.isatty() and not wants_no_colour(os.environ)
    colour = args.color == "always" or (args.color == "auto" and terminal)
    width = args.width or max(MIN_ONCE_WIDTH, shutil.get_terminal_size((80, 24)).columns)
    if args.by is not None:
        from gputop.core.analysis.owners import owner_rollup
        from gputop.core.output.owner_table import render_owners

        rows = owner_rollup(snapshot, args.by, foresight.diagnoses)
        return emit(for_terminal(render_owners(rows, args.by, snapshot.timestamp, width)))
    alerts = list(watcher.monitor.active.values())
    table = render_text(
        snapshot, colour=colour, width=width, alerts=alerts, diagnoses=foresight.diagnoses,
        sort_column=settings.sort_column, sort_descending=settings.sort_descending,
        # To a pipe or a file, as ps ww: whole command lines, unless --width asks for a width.
        whole_commands=args.width is None and not sys.stdout.isatty(),
    )
    return emit(for_terminal(table))


def run_record(sampler: Sampler, args: argparse.Namespace, settings: Settings) -> int:
    """``gputop record FILE``: every tick, with its forecasts, alerts and diagnoses, until the duration or Ctrl+C."""
    from gputop.core.analysis.foresight import Watcher
    from gputop.core.recording.record import Recorder, RecordingError

    interval_s = args.record_interval or args.interval or settings.interval_s
    watcher = Watcher(settings.thresholds)
    try:
        recorder = Recorder(args.file)
    except RecordingError as error:
        return fail(str(error))

    def write(snapshot: Snapshot) -> None:
        foresight = watcher.update(snapshot)
        recorder.write(snapshot, forecasts=foresight.forecasts, alerts=foresight.events, diagnoses=foresight.diagnoses)

    def reraise(error: BaseException) -> None:
        raise error

    failure = None
    try:
        TickLoop(sampler, interval_s, write, reraise, duration_s=args.duration).run()
    except KeyboardInterrupt:
        pass
    except RecordingError as error:
        failure = str(error)
    finally:
        try:
            recorder.close()  # a gzip file's last block and its trailer are written here: it can fail too
        except RecordingError as error:
            failure = failure or str(error)
    if failure is not None:
        return fail(failure)
    print(f"gputop: recorded {recorder.count} snapshots to {args.file}", file=sys.stderr)
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``gputop export``: /metrics for Prometheus until SIGTERM or Ctrl+C."""
    if args.print_dashboard or args.print_alert_rules:
        from gputop.core.output import monitoring

        return emit(monitoring.read(monitoring.DASHBOARD if args.print_dashboard else monitoring.ALERT_RULES))
    from gputop.core.output.export_server import WebConfig, WebConfigError, load_web_config
    from gputop.core.output.exporter import Exporter, ListenError, describe_bind_error, parse_listen
    from gputop.core.sources.factory import open_source

    try:
        host, port = parse_listen(args.listen)
        web = load_web_config(args.web_config_file) if args.web_config_file else WebConfig()
        sampler = Sampler(open_source(args, args.settings), net_interfaces=args.settings.net_interfaces)
        sampler.open()
    except (ListenError, WebConfigError, SourceUnavailable) as error:
        return fail(str(error))
    exporter = Exporter(
        sampler, args.export_interval or args.interval, hostname=args.hostname, thresholds=args.settings.thresholds,
        names=args.names, max_process_series=args.max_process_series, web=web, job_label=args.job_label,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        try:
            bound_host, bound_port = exporter.start(host, port)
        except WebConfigError as error:
            return fail(str(error))
        except OSError as error:
            return fail(describe_bind_error(host, port, error))
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        scheme = "https" if web.cert_file else "http"
        print(f"gputop: serving {scheme}://{shown}:{bound_port}/metrics", file=sys.stderr, flush=True)
        while not stop.wait(1.0):
            pass
        return 0
    except KeyboardInterrupt:
        return 0
    finally:
        exporter.stop()
        sampler.close()


def run_cluster(args: argparse.Namespace) -> int:
    """``gputop cluster``: the cluster view on a Prometheus server."""
    from gputop.core.cluster.model import ClusterOptions, ConfigError

    try:
        options = ClusterOptions.create(
            args.prometheus, hosts=args.hosts, interval_s=args.cluster_interval, stale_after_s=args.stale_after
        )
    except ConfigError as error:
        return fail(str(error))
    from gputop.ui.cluster.app import run_cluster as run_cluster_view

    try:
        return run_cluster_view(options)
    except KeyboardInterrupt:
        return 130
