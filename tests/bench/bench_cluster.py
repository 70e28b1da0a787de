"""The cluster view at 100 / 1,000 / 3,000 hosts: what a refresh costs, how soon rows show, how fast keys answer.

Each size: the fleet simulator (``tests/prom/fleet.py``: 8 GPUs and 32 processes per host,
each host its own scrape target; ``--diagnoses`` adds what a real exporter's diagnoses serve)
scraped by a real Prometheus every ``--scrape`` seconds; ``--legacy N``: every Nth host
serves its GPUs' series alone, as an exporter from before the host series did. Each tree of
``--trees`` (``new=.``, and e.g. ``old=DIR`` from ``git archive main | tar -x -C DIR``) is
measured against the same Prometheus in the same run:

* the reader (in a worker process with that tree first on ``sys.path``; the trees' workers run
  at once and take turns, so old and new meet the same machine): the first refresh,
  then ``--refreshes`` refreshes one interval apart, as the view asks them (every host, the
  history of a screenful); per refresh: wall time, requests, bytes on the wire, CPU seconds
  of Prometheus (all of it, and what scraping alone would have used over the same time), of
  the simulator, of the reader, of everything else on the machine, and what no one used (idle:
  none left means the refresh waited for a CPU); the host screen's read; then each query of
  a refresh alone (three times, sequentially): Prometheus' own timings (``stats=all``), its CPU,
  series and bytes;
* ``gputop cluster --interval 5`` in a 120x40 pty: when the first host's row showed, and when
  its figures did; how long each key took to change the screen (``M``, ``T``, ``/``, a filter
  key, Esc, Enter, and from Enter until the host's processes show, Esc back; each 3 times: until the bytes
  that made the change were written, not counting the emulator's own parsing); CPU and peak
  RSS over ``--app-seconds``.

``--owners-only``: the first refresh, then the owner screen's read of each kind (``o``) three
times per tree, and what the shipped recording rules cost Prometheus per evaluation. Prometheus
loads this tree's shipped rules (``--rule-interval``); a tree from before them aggregates the raw
series. E.g. ``--hosts 1000 --diagnoses --owners-only --trees new=.,old=/tmp/old``.

Run from the repository root, under the machine's lock::

    flock /tmp/gputop-heavy.lock python tests/bench/bench_cluster.py --hosts 1000 --trees new=.,old=/tmp/old
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gzip
import json
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pyte

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests")]

from prom import FleetProcess, PrometheusServer, wait_for  # noqa: E402

SCREENFUL = 35  # hosts on a 40-line terminal
FIRST_SLOT_S = 12.0  # each tree's first refresh has this long to itself
ALONE_SLOT_S = 30.0  # and this long for its queries one by one


def cpu_seconds(pid: int) -> float:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(times.user + times.system)


def machine_busy_seconds() -> float:
    """CPU seconds all cores have spent busy since boot (/proc/stat)."""
    fields = [float(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


# -- the reader, in a worker process ---------------------------------------------------------


def worker(args: argparse.Namespace) -> int:
    """One tree's reader against the Prometheus at ``args.url``; one JSON line per measurement."""
    sys.path.insert(0, str(Path(args.tree).resolve()))
    from gputop.core.cluster.model import ClusterOptions
    from gputop.core.cluster.reader import ClusterReader

    reader = ClusterReader(ClusterOptions.create(args.url, interval_s=args.interval))
    screenful = sorted(args.hostnames.split(","))[:SCREENFUL]

    def measured(what: str, fetch: Callable[[], Any]) -> Any:
        before = (
            time.monotonic(), reader.client.traffic, cpu_seconds(args.prometheus), cpu_seconds(args.fleet),
            time.process_time(), machine_busy_seconds(),
        )
        result = fetch()
        wall, traffic = time.monotonic() - before[0], reader.client.traffic
        prometheus = cpu_seconds(args.prometheus) - before[2]
        fleet = cpu_seconds(args.fleet) - before[3]
        own = time.process_time() - before[4]
        machine = machine_busy_seconds() - before[5]
        print(json.dumps({
            "what": what,
            "wall": wall,
            "requests": traffic.requests - before[1].requests,
            "bytes": traffic.bytes_received - before[1].bytes_received,
            "prometheus_cpu": prometheus,
            "scraping_cpu": args.scraping_rate * wall,
            "fleet_cpu": fleet,
            "reader_cpu": own,
            "others_cpu": max(0.0, machine - prometheus - fleet - own),
            "idle_cpu": max(0.0, (os.cpu_count() or 1) * wall - machine),
        }), flush=True)
        return result

    # The trees' workers run at once, each in its own slots of a shared timetable (``--slot`` of
    # ``--slots``): their refreshes take turns, so each sees the same machine, never the other's load.
    slots, slot = args.slots, args.slot

    def at(start: float) -> None:
        time.sleep(max(0.0, start - time.time()))

    at(args.start + slot * FIRST_SLOT_S)
    state = measured("first", lambda: reader.fetch((), None, 600))
    assert len(state.hosts) == args.expect, (len(state.hosts), args.expect)
    if args.owners_only:
        # The owner screen's read of each kind, three times, in turns as the refreshes.
        from gputop.core.cluster.client import PrometheusError

        for n, kind in enumerate(k for k in ("user", "job", "pod", "container") for _ in range(3)):
            at(args.start + slots * FIRST_SLOT_S + n * args.interval + slot * args.interval / slots)
            try:
                measured(f"owners {kind}", lambda kind=kind: reader.owners(kind, state.hosts))
            except PrometheusError as error:  # Prometheus' own limit (--query.timeout, 2 min)
                print(json.dumps({"what": f"owners {kind}", "error": str(error)}), flush=True)
        return 0
    paced = args.start + slots * FIRST_SLOT_S
    for n in range(args.refreshes):
        at(paced + n * args.interval + slot * args.interval / slots)
        measured("refresh", lambda: reader.fetch(screenful, None, 600))
    at(paced + args.refreshes * args.interval + slot * args.interval / slots)
    measured("host screen", lambda: reader.detail(screenful[1]))
    at(paced + (args.refreshes + 1) * args.interval + slot * ALONE_SLOT_S)
    for name, promql in refresh_promql(reader):
        per_query(args, name, promql)
    return 0


def refresh_promql(reader: Any) -> list[tuple[str, str]]:
    """The instant queries of one refresh of this tree's reader, by name."""
    from gputop.core.cluster import queries

    if hasattr(queries, "refresh_queries"):
        found = [(q.group, q.promql) for q in queries.refresh_queries(None, reader.options.lookback_s, reader._fixed)]
        return [*found, ("fixed", queries.fixed_query(None).promql)]
    return [(f"query {n}", q) for n, q in enumerate(queries.fleet_queries(None, reader.options.lookback_s, 4))]


def per_query(args: argparse.Namespace, name: str, promql: str) -> None:
    """One query alone, three times: Prometheus' own timings of it (``stats=all``) and its CPU."""
    runs = []
    for _ in range(3):
        form = urllib.parse.urlencode({"query": promql, "time": f"{time.time():.3f}", "stats": "all"}).encode()
        request = urllib.request.Request(f"{args.url}/api/v1/query", data=form, headers={"Accept-Encoding": "gzip"})
        cpu, start = cpu_seconds(args.prometheus), time.monotonic()
        with urllib.request.urlopen(request, timeout=600) as response:
            raw = response.read()
            zipped = response.headers.get("Content-Encoding") == "gzip"
        wall, cpu = time.monotonic() - start, cpu_seconds(args.prometheus) - cpu
        data = json.loads(gzip.decompress(raw) if zipped else raw)["data"]
        timings = data["stats"]["timings"]
        runs.append((wall, cpu - args.scraping_rate * wall, timings["evalTotalTime"], timings["queryPreparationTime"],
                     len(data["result"]), len(raw)))
    wall, cpu, evaluation, preparation, series, size = (statistics.median(r[i] for r in runs) for i in range(6))
    print(json.dumps({"what": "query", "name": name, "wall": wall, "cpu": cpu, "eval": evaluation,
                      "prep": preparation, "series": series, "bytes": size}), flush=True)


def run_workers(url: str, prometheus: int, fleet: FleetProcess, scraping: float,
                args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Every tree's reader at once, taking turns (see ``worker``); each one's JSON lines."""
    start = time.time() + 5
    running = {}
    for slot, (name, tree) in enumerate(args.trees):
        command = [
            sys.executable, __file__, "--worker", "--tree", str(tree), "--url", url, "--interval", f"{args.interval:g}",
            "--prometheus-pid", str(prometheus), "--fleet-pid", str(fleet.process.pid),
            "--scraping-rate", f"{scraping}", "--refreshes", str(args.refreshes), "--expect", str(len(fleet.hostnames)),
            "--hostnames", ",".join(fleet.hostnames), "--start", f"{start}", "--slot", str(slot),
            "--slots", str(len(args.trees)), *(["--owners-only"] if args.owners_only else []),
        ]
        running[name] = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = {}
    for name, process in running.items():
        out, err = process.communicate(timeout=1800)
        if process.returncode != 0:
            raise SystemExit(f"the worker for {name} failed:\n{err}")
        lines[name] = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return lines


# -- the view, in a pty ------------------------------------------------------------------------


class Terminal:
    """A command in a 120x40 pty, its screen emulated by pyte."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.screen = pyte.Screen(120, 40)
        self.stream = pyte.ByteStream(self.screen)
        pid, master = pty.fork()
        if pid == 0:
            os.environ.update(env)
            os.environ["TERM"] = "xterm-256color"
            os.execvp(command[0], command)
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.pid, self.master, self.started = pid, master, time.monotonic()
        self.peak_rss = 0
        # When the bytes now on the emulated screen were read: pyte's own parsing is no part of
        # how soon a real terminal would show them.
        self.last_read = self.started

    def text(self) -> str:
        return "\n".join(self.screen.display)

    def _pump(self, timeout_s: float) -> None:
        ready, _, _ = select.select([self.master], [], [], timeout_s)
        if ready:
            chunk = os.read(self.master, 1 << 16)
            # Answer what a terminal would, so Textual does not wait for it.
            replies = [b"\x1bP0+r" + name + b"\x1b\\" for name in re.findall(rb"\x1bP\+q([0-9a-fA-F;]*)", chunk)]
            if b"\x1b[c" in chunk:
                replies.append(b"\x1b[?62;22c")
            if b"\x1b[6n" in chunk:
                replies.append(b"\x1b[1;1R")
            if replies:
                os.write(self.master, b"".join(replies))
            self.last_read = time.monotonic()
            self.stream.feed(chunk)
        with contextlib.suppress(psutil.Error):
            self.peak_rss = max(self.peak_rss, psutil.Process(self.pid).memory_info().rss)

    def wait(self, condition: Callable[[str], bool], limit_s: float) -> float | None:
        """Seconds until the screen satisfies ``condition``; None if it did not within ``limit_s``."""
        start = time.monotonic()
        while not condition(self.text()):
            if time.monotonic() - start > limit_s:
                return None
            self._pump(0.005)
        return max(0.0, self.last_read - start)

    def idle(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._pump(0.02)

    def key(self, data: bytes, condition: Callable[[str], bool]) -> float | None:
        os.write(self.master, data)
        return self.wait(condition, 30)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.write(self.master, b"q")
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and os.waitpid(self.pid, os.WNOHANG)[0] == 0:
            with contextlib.suppress(OSError):
                self._pump(0.05)
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(self.pid, os.WNOHANG)[0] == 0:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        os.close(self.master)


def _row(text: str, hostname: str) -> str:
    return next((line for line in text.splitlines() if line.lstrip().startswith(hostname)), "")


KEYS: list[tuple[str, bytes, Callable[[str], bool]]] = [
    ("M", b"M", lambda t: "sort: memory" in t),
    ("T", b"T", lambda t: "sort: temperature" in t),
    # The old view opened an input box, the new one says the filter's keys.
    ("/", b"/", lambda t: "Esc clear it" in t or ("filter hostnames" in t and "/ filter hostnames" not in t)),
    ("filter key", b"7", lambda t: "filter: 7" in t),
    ("Esc", b"\x1b", lambda t: "filter: 7" not in t),
    ("Enter", b"\r", lambda t: "Host node-" in t),
    ("host read", b"", lambda t: "Processes (" in t),  # from Enter until its GPUs and processes show
    ("Esc back", b"\x1b", lambda t: "Fullest GPU" in t),
]


def run_view(tree: Path, url: str, seconds: float, first_host: str) -> dict[str, Any]:
    """``gputop cluster`` from ``tree`` in a pty: first rows, each key's answer, CPU and RSS."""
    command = [sys.executable, "-m", "gputop", "cluster", "--prometheus", url, "--interval", "5"]
    terminal = Terminal(command, {"PYTHONPATH": str(tree.resolve())})
    figures: dict[str, Any] = {}
    try:
        figures["first_rows"] = terminal.wait(lambda t: first_host in t, 120)
        figures["first_figures"] = terminal.wait(lambda t: "%" in _row(t, first_host), 120)
        if figures["first_figures"] is not None:
            figures["first_figures"] += figures["first_rows"] or 0.0
        terminal.idle(2)
        keys: dict[str, list[float | None]] = {name: [] for name, _, _ in KEYS}
        for _ in range(3):
            for name, data, condition in KEYS:
                if data:
                    terminal.idle(1.0)
                    pressed = time.monotonic()
                    keys[name].append(terminal.key(data, condition))
                else:
                    waited = terminal.wait(condition, 30)
                    keys[name].append(None if waited is None else terminal.last_read - pressed)
        figures["keys"] = keys
        cpu = cpu_seconds(terminal.pid)
        start = time.monotonic()
        terminal.idle(seconds)
        figures["cpu_percent"] = 100 * (cpu_seconds(terminal.pid) - cpu) / (time.monotonic() - start)
        figures["rss_mib"] = terminal.peak_rss / 2**20
    finally:
        terminal.close()
    return figures


# -- the run -----------------------------------------------------------------------------------


def rate(pid: int, seconds: float = 10.0) -> float:
    before = cpu_seconds(pid)
    time.sleep(seconds)
    return (cpu_seconds(pid) - before) / seconds


def bench_size(args: argparse.Namespace, hosts: int) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"bench-cluster-{hosts}-"))
    fleet = FleetProcess(hosts, work, diagnoses=args.diagnoses, legacy=args.legacy)
    # The rules gputop ships (this tree's), the owners' recording rules among them, at --rule-interval.
    rules = work / "rules.yml"
    rules.write_text((ROOT / "gputop/core/output/monitoring/alert-rules.yml").read_text().replace(
        "interval: 1m", f"interval: {args.rule_interval:g}s"))
    prometheus = PrometheusServer(work, static_configs=fleet.static_configs(), scrape_interval_s=args.scrape,
                                  rule_files=[rules])
    try:
        wait_for("every host scraped", lambda: prometheus.query(f"count(up == 1) == {hosts}") or None, 600, 1.0)
        time.sleep(args.age)
        if args.owners_only:
            # The owners' rules evaluated at least once (their first evaluation waits up to an interval).
            recorded = "count(owner:gputop_process:figures)"
            wait_for("the owners' rules", lambda: prometheus.query(recorded) or None, 600, 2.0)
        scraping, serving = rate(prometheus.process.pid), rate(fleet.process.pid)
        print(f"# {hosts} hosts, {args.age:g}s of data; scraping alone: Prometheus {100 * scraping:.1f}% of a core,"
              f" the simulator {100 * serving:.1f}%; load average {os.getloadavg()[0]:.1f}", flush=True)
        answers = run_workers(prometheus.url, prometheus.process.pid, fleet, scraping, args)
        # What the rules cost Prometheus at each evaluation (the owners' group: every kind's aggregation).
        # From Prometheus' own /metrics (it does not scrape itself here).
        with urllib.request.urlopen(f"{prometheus.url}/metrics", timeout=60) as response:
            own = response.read().decode()

        def own_metric(metric: str) -> dict[str, str]:
            return dict(re.findall(rf'^{metric}\{{rule_group="([^"]*)"\}} (\S+)$', own, re.M))

        missed = own_metric("prometheus_rule_group_iterations_missed_total")
        for name, seconds in own_metric("prometheus_rule_group_last_duration_seconds").items():
            print(f"# rule group {name.rsplit(';', 1)[-1]}: last evaluation {float(seconds):.3f}s,"
                  f" iterations missed {missed.get(name, '?')}", flush=True)
        for name, _ in args.trees:
            lines = answers[name]
            if args.owners_only:
                for kind in ("user", "job", "pod", "container"):
                    asked = [line for line in lines if line["what"] == f"owners {kind}"]
                    report(hosts, name, f"owners {kind}", [line for line in asked if "error" not in line])
                    for line in asked:
                        if "error" in line:
                            print(f"{hosts:>5} {name:<4} owners {kind}: {line['error']}", flush=True)
                continue
            for what in ("first", "refresh", "host screen"):
                report(hosts, name, what, [line for line in lines if line["what"] == what])
            for line in lines:
                if line["what"] == "query":
                    print(
                        f"{hosts:>5} {name:<4}   alone: {line['name']:<8} Prometheus eval {line['eval']:5.3f}s"
                        f" (preparing {line['prep']:5.3f})  CPU {line['cpu']:5.2f}s  {line['series']:5.0f} series"
                        f" {line['bytes'] / 1e3:6.1f} kB",
                        flush=True,
                    )
        for name, tree in [] if args.owners_only else args.trees:
            report_view(hosts, name, run_view(tree, prometheus.url, args.app_seconds, fleet.hostnames[0]))
        print(f"# load average after {hosts} hosts: {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        fleet.stop()
        prometheus.stop()
        shutil.rmtree(work, ignore_errors=True)


def report(hosts: int, name: str, what: str, lines: list[dict[str, Any]]) -> None:
    if not lines:
        return

    def median(key: str) -> float:
        return statistics.median(line[key] for line in lines)

    walls = sorted(line["wall"] for line in lines)
    spread = f" ({walls[0]:.2f}-{walls[-1]:.2f})" if len(walls) > 1 else ""
    print(
        f"{hosts:>5} {name:<4} {what:<11} wall {median('wall'):6.3f}s{spread:<14}"
        f" {median('requests'):3.0f} req {median('bytes') / 1e6:6.3f} MB"
        f"  CPU s: Prometheus {median('prometheus_cpu'):5.2f} (scraping alone {median('scraping_cpu'):4.2f})"
        f"  simulator {median('fleet_cpu'):4.2f}  reader {median('reader_cpu'):4.2f}"
        f"  others {median('others_cpu'):4.2f}  idle {median('idle_cpu'):4.2f}",
        flush=True,
    )


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f}s"


def report_view(hosts: int, name: str, figures: dict[str, Any]) -> None:
    keys = "  ".join(
        f"{key} {statistics.median(t if t is not None else float('inf') for t in times):.3f}"
        f"/{max(t if t is not None else float('inf') for t in times):.3f}"
        for key, times in figures.get("keys", {}).items()
    )
    print(
        f"{hosts:>5} {name:<4} view        first rows {_seconds(figures['first_rows'])},"
        f" their figures {_seconds(figures['first_figures'])};"
        f" at --interval 5: CPU {figures.get('cpu_percent', float('nan')):4.1f}% of a core,"
        f" peak RSS {figures.get('rss_mib', float('nan')):5.1f} MiB\n"
        f"{hosts:>5} {name:<4} keys s (median/max of 3)  {keys}",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="100,1000,3000")
    parser.add_argument("--trees", default="new=.", help="NAME=DIR,…: the checkouts to compare")
    parser.add_argument("--scrape", type=float, default=5.0, help="scrape interval, seconds")
    parser.add_argument("--age", type=float, default=30.0, help="seconds of data before measuring")
    parser.add_argument("--diagnoses", action="store_true", help="the simulator serves the diagnoses' series")
    parser.add_argument("--legacy", type=int, default=0,
                        help="every Nth host serves no host series (an exporter from before them)")
    parser.add_argument("--interval", type=float, default=5.0)
    parser.add_argument("--refreshes", type=int, default=5)
    parser.add_argument("--app-seconds", type=float, default=30.0)
    parser.add_argument("--owners-only", action="store_true",
                        help="measure the owner screen's read alone (o in the view: each kind, three times)")
    parser.add_argument("--rule-interval", type=float, default=60.0,
                        help="seconds between evaluations of the shipped rules (the owners' recording rules)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--prometheus-pid", dest="prometheus", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--fleet-pid", dest="fleet", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--scraping-rate", dest="scraping_rate", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--expect", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--hostnames", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--slot", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--slots", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    args.trees = [(name, Path(tree)) for name, _, tree in (t.partition("=") for t in args.trees.split(","))]
    # Stopped early: the fleet and Prometheus are stopped too (by the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} {os.cpu_count()} CPUs; scrape every {args.scrape:g}s; 8 GPUs and 32"
          f" processes per host{', with diagnoses' if args.diagnoses else ''}; refreshes every {args.interval:g}s")
    for hosts in (int(h) for h in args.hosts.split(",")):
        bench_size(args, hosts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
