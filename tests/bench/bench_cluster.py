"""The cluster view at 100 / 1,000 / 3,000 hosts: what one refresh costs, and what the view costs to run.

Each size: the fleet simulator (``tests/prom/fleet.py``: 8 GPUs and 32 processes per host,
each host its own scrape target) scraped by a real Prometheus every ``--scrape`` seconds.
At each data age in ``--ages`` (seconds since every host was first scraped):

* the reader's refresh, as the view does it (every host, the history of a screenful of
  hosts): wall time, requests, bytes on the wire, Prometheus CPU seconds; the host screen's
  read; and, with ``--old-module``, the same for the reader before this change
  (``git show 8459d33:gputop/core/sources/prometheus.py > old_prometheus.py``);

and once, at the first age:

* the view in Pilot: first rows, sort (``M``), a filter keystroke, Enter until the host's GPUs
  and processes are shown;
* ``gputop cluster --interval 5`` in a 120x40 pty for ``--app-seconds``: CPU and peak RSS of the
  process, when the first host appeared; with ``--old-tree`` (``git archive 8459d33 | tar -x -C DIR``)
  the old view too.

Run from the repository root::

    python tests/bench/bench_cluster.py --hosts 100,1000,3000 --ages 60 --old-module /tmp/old_prometheus.py
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "bench")]

from prom import FleetProcess, PrometheusServer, wait_for  # noqa: E402
from ptyrun import run_in_pty  # noqa: E402

from gputop.core.cluster.model import ClusterOptions  # noqa: E402
from gputop.core.cluster.reader import ClusterReader  # noqa: E402
from gputop.ui.cluster.host_screen import HostScreen  # noqa: E402
from gputop.ui.cluster.view import ClusterApp  # noqa: E402

SCREENFUL = 35  # hosts on a 40-line terminal


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


class CountingOpener:
    """urllib's opener, counting requests and bytes read (for the old reader, which has no counter)."""

    def __init__(self) -> None:
        self.requests = 0
        self.bytes = 0

    def __call__(self, request: Any, timeout: float) -> Any:
        self.requests += 1
        response = urllib.request.urlopen(request, timeout=timeout)
        opener = self
        read = response.read

        def counted(*args: Any) -> bytes:
            data: bytes = read(*args)
            opener.bytes += len(data)
            return data

        response.read = counted
        return response


def load_old(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("old_prometheus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_prometheus"] = module
    spec.loader.exec_module(module)
    return module


def prometheus_idle_rate(prometheus: psutil.Process, seconds: float = 10.0) -> float:
    """Prometheus' CPU per second while nobody queries it (scraping alone)."""
    before = cpu_seconds(prometheus)
    time.sleep(seconds)
    return (cpu_seconds(prometheus) - before) / seconds


def measure_new(
    url: str, hostnames: list[str], refreshes: int, prometheus: psutil.Process, idle: float
) -> dict[str, float]:
    reader = ClusterReader(ClusterOptions.create(url, interval_s=30))
    walls, cpus = [], []
    # No time limit here: the figure is how long Prometheus takes, however long that is.
    reader.fetch(hostnames[:SCREENFUL], timeout_s=600)  # the first refresh also learns the fleet
    before = reader.client.traffic
    for _ in range(refreshes):
        cpu = cpu_seconds(prometheus)
        start = time.monotonic()
        state = reader.fetch(hostnames[:SCREENFUL], timeout_s=600)
        wall = time.monotonic() - start
        walls.append(wall)
        cpus.append(cpu_seconds(prometheus) - cpu - idle * wall)
        assert len(state.hosts) == len(hostnames), (len(state.hosts), len(hostnames))
    after = reader.client.traffic
    start = time.monotonic()
    detail = reader.detail(hostnames[1])
    detail_s = time.monotonic() - start
    assert len(detail.gpus) == 8 and len(detail.processes) == 32
    return {
        "wall": statistics.median(walls),
        "requests": (after.requests - before.requests) / refreshes,
        "bytes": (after.bytes_received - before.bytes_received) / refreshes,
        "prom_cpu": statistics.median(cpus),
        "detail": detail_s,
    }


def measure_old(old: ModuleType, url: str, refreshes: int, prometheus: psutil.Process, idle: float) -> dict[str, float]:
    opener = CountingOpener()
    options = old.ClusterOptions(url=url, interval_s=5.0, timeout_s=300.0)
    reader = old.ClusterReader(options, client=old.PrometheusClient(url, 300.0, opener=opener))
    walls, cpus = [], []
    for _ in range(refreshes):
        cpu = cpu_seconds(prometheus)
        start = time.monotonic()
        reader.fetch()
        wall = time.monotonic() - start
        walls.append(wall)
        cpus.append(cpu_seconds(prometheus) - cpu - idle * wall)
    return {
        "wall": statistics.median(walls),
        "requests": opener.requests / refreshes,
        "bytes": opener.bytes / refreshes,
        "prom_cpu": statistics.median(cpus),
    }


async def interactive(url: str, hosts: int) -> dict[str, float]:
    """Times the user waits for, in the view itself (Pilot, headless)."""
    app = ClusterApp(ClusterOptions.create(url, interval_s=5))
    figures: dict[str, float] = {}
    start = time.monotonic()
    async with app.run_test(size=(120, 40)) as pilot:
        while len(app.host_list.hosts) < hosts:
            assert time.monotonic() - start < 600, "the view never listed every host"
            await pilot.pause(0.01)
        figures["first_rows"] = time.monotonic() - start
        start = time.monotonic()
        await pilot.press("M")
        figures["sort"] = time.monotonic() - start
        await pilot.press("slash")
        start = time.monotonic()
        await pilot.press("0")
        figures["filter_key"] = time.monotonic() - start
        await pilot.press("escape", "home")
        start = time.monotonic()
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, HostScreen)
        while screen.detail is None:
            await pilot.pause(0.005)
        figures["host_screen"] = time.monotonic() - start
    return figures


def run_app(command: list[str], seconds: float) -> dict[str, float]:
    run = run_in_pty(command, seconds, watch={"rows": ["node-0000"]}, warmup_s=0)
    return {
        "cpu_percent": run.cpu_percent,
        "rss_mib": run.peak_rss / 2**20,
        "first_rows": run.first_seen.get("rows", float("nan")),
    }


def bench_size(args: argparse.Namespace, hosts: int, old: ModuleType | None) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"bench-cluster-{hosts}-"))
    fleet = FleetProcess(hosts, work)
    prometheus = PrometheusServer(work, static_configs=fleet.static_configs(), scrape_interval_s=args.scrape)
    try:
        wait_for("every host scraped", lambda: prometheus.query(f"count(up == 1) == {hosts}") or None, 600, 1.0)
        first_scraped = time.monotonic()
        prom = psutil.Process(prometheus.process.pid)
        for index, age in enumerate(args.ages):
            time.sleep(max(0.0, first_scraped + age - time.monotonic()))
            idle = prometheus_idle_rate(prom)
            print(f"# {hosts} hosts, data age {age:.0f}s, Prometheus idle {100 * idle:.1f}% of a core", flush=True)
            new = measure_new(prometheus.url, fleet.hostnames, args.refreshes, prom, idle)
            report(hosts, age, "new", new)
            if old is not None and hosts <= args.old_max_hosts:
                report(hosts, age, "old", measure_old(old, prometheus.url, args.old_refreshes, prom, idle))
            if index == 0:
                times = asyncio.run(interactive(prometheus.url, hosts))
                waits = "  ".join(f"{name} {seconds:.3f}s" for name, seconds in times.items())
                print(f"{hosts:>6} {age:>5.0f}s view   {waits}", flush=True)
                command = [sys.executable, "-m", "gputop", "cluster", "--prometheus", prometheus.url, "--interval", "5"]
                report_app(hosts, age, "new", run_app(command, args.app_seconds))
                if args.old_tree and hosts <= args.old_max_hosts:
                    old_command = ["sh", "-c", f"cd {args.old_tree} && exec {' '.join(command)}"]
                    report_app(hosts, age, "old", run_app(old_command, args.app_seconds))
    finally:
        fleet.stop()
        prometheus.stop()
        shutil.rmtree(work, ignore_errors=True)


def report(hosts: int, age: float, which: str, figures: dict[str, float]) -> None:
    detail = f"  host screen {figures['detail']:.3f}s" if "detail" in figures else ""
    print(
        f"{hosts:>6} {age:>5.0f}s {which:<5} refresh {figures['wall']:7.3f}s  {figures['requests']:4.0f} req"
        f"  {figures['bytes'] / 1e6:8.3f} MB  Prometheus CPU {figures['prom_cpu']:6.3f}s{detail}",
        flush=True,
    )


def report_app(hosts: int, age: float, which: str, figures: dict[str, float]) -> None:
    print(
        f"{hosts:>6} {age:>5.0f}s {which:<5} app at --interval 5: CPU {figures['cpu_percent']:5.1f}% of a core"
        f"  peak RSS {figures['rss_mib']:6.1f} MiB  first host on screen {figures['first_rows']:.2f}s",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="100,1000,3000")
    parser.add_argument("--scrape", type=float, default=5.0, help="scrape interval, seconds")
    parser.add_argument("--ages", default="60", help="data ages to measure at, seconds, comma-separated")
    parser.add_argument("--refreshes", type=int, default=5)
    parser.add_argument("--old-refreshes", type=int, default=2)
    parser.add_argument("--old-module", type=Path, help="the old reader (gputop/core/sources/prometheus.py)")
    parser.add_argument("--old-tree", type=Path, help="a checkout of the old code, to run its view")
    parser.add_argument("--old-max-hosts", type=int, default=1000)
    parser.add_argument("--app-seconds", type=float, default=60.0)
    args = parser.parse_args()
    args.ages = [float(a) for a in args.ages.split(",")]
    # Stopped early: the fleet and Prometheus are stopped too (by the finally blocks).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    old = load_old(args.old_module) if args.old_module else None
    print(f"# {time.strftime('%Y-%m-%d %H:%M')} scrape every {args.scrape:g}s, 8 GPUs and 32 processes per host")
    for hosts in (int(h) for h in args.hosts.split(",")):
        bench_size(args, hosts, old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
