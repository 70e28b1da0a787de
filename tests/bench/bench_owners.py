"""The cluster view's owner screen (``o``) at N hosts: the raw aggregation against the recorded rules.

The fleet simulator's hosts (``tests/prom/fleet.py``, 8 GPUs and 32 processes a host, with the
diagnoses' idle times) are written as OpenMetrics, as Prometheus would have scraped them every
15 s for ten minutes, and backfilled into a Prometheus that scrapes nothing: every figure is then
Prometheus answering the owner screen alone, not Prometheus busy scraping (``bench_cluster.py``
measures that). For each kind of owner:

* the raw aggregation (``owners.owners_query``: what the reader sends without the rules, and what
  the rules evaluate): Prometheus' own evaluation time (``stats=all``), wall time, its CPU;
* the shipped recording rules backfilled over five minutes (``promtool tsdb create-blocks-from
  rules``; each live evaluation of a kind's rule costs Prometheus what its raw aggregation does, once
  per ``RULE_INTERVAL``), then the recorded figures read as the reader reads them
  (``owners.recorded_query``), after a restart that loads the backfilled blocks.

Run from the repository root, under the machine's lock::

    flock /tmp/gputop-heavy.lock python tests/bench/bench_owners.py --hosts 1000
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from prom import PrometheusServer  # noqa: E402
from prom.fleet import exporter_text, hostname  # noqa: E402

from gputop.core.analysis.owners import OWNER_KINDS  # noqa: E402
from gputop.core.cluster.owners import RULE_INTERVAL, owners_query, recorded_query  # noqa: E402
from gputop.core.output import metric_names, monitoring  # noqa: E402

FAMILIES = (metric_names.PROCESS_GPU_MEMORY, metric_names.PROCESS_IDLE_SECONDS)
STEP_S = 15
POINTS = 40  # ten minutes of scrapes


def openmetrics(hosts: int, end: float) -> str:
    """Every host's per-process series, one sample a scrape, family by family (OpenMetrics)."""
    lines: dict[str, list[str]] = {family: [] for family in FAMILIES}
    for host in range(hosts):
        text = b"".join(exporter_text(host, 8, 4, diagnosed=True)).decode()
        scraped = f'instance="{hostname(host)}:9400",job="gputop",'
        for family in FAMILIES:
            for line in re.findall(rf"^{family}\{{.*$", text, re.M):
                lines[family].append(line.replace("{", "{" + scraped, 1))
    out = []
    for family in FAMILIES:
        out.append(f"# TYPE {family} gauge")
        for n in range(POINTS):
            at = end - (POINTS - 1 - n) * STEP_S
            out.extend(f"{line} {at:.3f}" for line in lines[family])
    out.append("# EOF")
    return "\n".join(out) + "\n"


def timed_query(url: str, pid: int, promql: str, at: float) -> dict[str, float]:
    """One instant query: Prometheus' evaluation time, wall time, its CPU, series and bytes."""
    form = urllib.parse.urlencode({"query": promql, "time": f"{at:.3f}", "stats": "all", "timeout": "600"}).encode()
    request = urllib.request.Request(f"{url}/api/v1/query", data=form, headers={"Accept-Encoding": "gzip"})
    cpu = sum(psutil.Process(pid).cpu_times()[:2])
    start = time.monotonic()
    with urllib.request.urlopen(request, timeout=900) as response:
        raw = response.read()
        zipped = response.headers.get("Content-Encoding") == "gzip"
    wall = time.monotonic() - start
    data = json.loads(gzip.decompress(raw) if zipped else raw)["data"]
    return {"eval": data["stats"]["timings"]["evalTotalTime"], "wall": wall,
            "cpu": sum(psutil.Process(pid).cpu_times()[:2]) - cpu, "series": len(data["result"]), "bytes": len(raw)}


def measure(url: str, pid: int, what: str, kind: str, promql: str, at: float, runs: int) -> None:
    figures = [timed_query(url, pid, promql, at) for _ in range(runs)]

    def median(key: str) -> float:
        return statistics.median(f[key] for f in figures)

    print(f"{what:<9} {kind:<9} eval {median('eval'):7.3f}s  wall {median('wall'):7.3f}s  Prometheus CPU"
          f" {median('cpu'):6.2f}s  {median('series'):6.0f} series {median('bytes') / 1e3:8.1f} kB", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3, help="each query this many times (the median is shown)")
    args = parser.parse_args()
    promtool = shutil.which("promtool")
    assert promtool is not None, "needs promtool (Debian's prometheus package)"
    work = Path(tempfile.mkdtemp(prefix=f"bench-owners-{args.hosts}-"))
    end = float(int(time.time()) - 600)  # within the test Prometheus' hour of retention
    try:
        started = time.monotonic()
        (work / "fleet.om").write_text(openmetrics(args.hosts, end))
        (work / "data").mkdir()
        subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(work / "fleet.om"),
                        str(work / "data")], check=True, capture_output=True)
        print(f"# {time.strftime('%Y-%m-%d %H:%M')} {psutil.cpu_count()} CPUs, load average"
              f" {psutil.getloadavg()[0]:.1f}; {args.hosts} hosts x 32 processes, {POINTS} scrapes {STEP_S}s apart,"
              f" backfilled in {time.monotonic() - started:.0f}s; median of {args.runs}", flush=True)
        prometheus = PrometheusServer(work)
        try:
            for kind in OWNER_KINDS:
                measure(prometheus.url, prometheus.process.pid, "raw", kind, owners_query(kind), end, args.runs)
            rules = work / "rules.yml"
            rules.write_text(monitoring.read(monitoring.ALERT_RULES))
            started = time.monotonic()
            cpu = sum(psutil.Process(prometheus.process.pid).cpu_times()[:2])
            interval_s = int(RULE_INTERVAL.rstrip("m")) * 60
            subprocess.run(
                [promtool, "tsdb", "create-blocks-from", "rules", f"--start={int(end - 5 * interval_s)}",
                 f"--end={int(end)}", f"--url={prometheus.url}", f"--output-dir={work / 'recorded'}",
                 f"--eval-interval={interval_s}s", str(rules)],
                check=True, capture_output=True,
            )
            cpu = sum(psutil.Process(prometheus.process.pid).cpu_times()[:2]) - cpu
            # promtool evaluates each rule as one range query over the window: cheaper than an evaluation
            # a minute. Each live evaluation of a kind's rule costs what its raw aggregation above does.
            print(f"rules     backfilled over 5 minutes in {time.monotonic() - started:.1f}s, Prometheus CPU"
                  f" {cpu:.2f}s (promtool, a range query per rule)", flush=True)
        finally:
            prometheus.stop()
        for block in (work / "recorded").iterdir():
            shutil.move(str(block), str(work / "data" / block.name))
        prometheus = PrometheusServer(work)
        try:
            for kind in OWNER_KINDS:
                measure(prometheus.url, prometheus.process.pid, "recorded", kind, recorded_query(kind), end, args.runs)
        finally:
            prometheus.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
