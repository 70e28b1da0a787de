"""End to end: two ``gputop export`` hosts, a real Prometheus scraping them, and the cluster view on top."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prom import PROMETHEUS, SKIP_REASON, Exporter, PrometheusServer, wait_for
from prometheus_client.parser import text_string_to_metric_families
from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import DataTable

from gputop.core.cluster.model import ClusterHost, ClusterOptions
from gputop.core.format import fmt_bytes, fmt_temperature
from gputop.ui.cluster.app import ClusterApp
from gputop.ui.cluster.host_screen import HostScreen

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)

Figures = dict[tuple[str, str], float]  # (metric, gpu) -> value


@dataclass
class Cluster:
    alpha: Exporter
    beta: Exporter
    prometheus: PrometheusServer


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work: Path = tmp_path_factory.mktemp("cluster")
    alpha, beta = Exporter("alpha", 2, work), Exporter("beta", 3, work)
    prometheus = None
    try:
        alpha.metrics()
        beta.metrics()
        prometheus = PrometheusServer(work, [f"127.0.0.1:{alpha.port}", f"127.0.0.1:{beta.port}"])
        wait_for("both hosts scraped", lambda: prometheus.query("count(gputop_gpu_lost) == 5") or None, 30)
        yield Cluster(alpha, beta, prometheus)
    finally:
        alpha.stop()
        beta.stop()
        if prometheus is not None:
            prometheus.stop()


def figures(metrics_text: str) -> Figures:
    """Every GPU figure an exporter serves, by metric and GPU index."""
    found: Figures = {}
    for family in text_string_to_metric_families(metrics_text):
        for sample in family.samples:
            if "gpu" in sample.labels and "pid" not in sample.labels:
                found[(sample.name, sample.labels["gpu"])] = sample.value
    return found


def processes(metrics_text: str) -> list[tuple[str, str, str, float]]:
    return sorted(
        (s.labels["gpu"], s.labels["pid"], s.labels["command"], s.value)
        for family in text_string_to_metric_families(metrics_text)
        for s in family.samples
        if s.name == "gputop_process_gpu_memory_bytes"
    )


async def until(pilot: Pilot[int], what: str, condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.1)


def shown_host(app: ClusterApp, hostname: str) -> ClusterHost | None:
    return next((h for h in app.visible_hosts() if h.hostname == hostname), None)


def status_cell(app: ClusterApp, hostname: str) -> str:
    table: DataTable[Text] = app.query_one("#hosts", DataTable)
    return str(table.get_cell(hostname, "Status"))


async def test_the_cluster_view_shows_both_hosts_with_their_exporters_figures_then_one_goes_stale(
    cluster: Cluster,
) -> None:
    options = ClusterOptions.create(cluster.prometheus.url, interval_s=0.5, stale_after_s=3)
    app = ClusterApp(options)
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "both hosts", lambda: [h.hostname for h in app.visible_hosts()] == ["alpha", "beta"])
        for exporter, count in ((cluster.alpha, 2), (cluster.beta, 3)):
            served = figures(exporter.metrics())
            host = shown_host(app, exporter.hostname)
            assert host is not None and not host.stale
            assert status_cell(app, exporter.hostname) == "live"
            assert [g.index for g in host.gpus] == list(range(count))
            for gpu in host.gpus:
                index = str(gpu.index)
                assert gpu.flavour == "gputop"
                assert gpu.memory_total == served[("gputop_gpu_memory_total_bytes", index)]
                assert gpu.memory_used == served[("gputop_gpu_memory_used_bytes", index)]
                assert gpu.utilization_gpu == pytest.approx(served[("gputop_gpu_utilization_ratio", index)] * 100)
                assert gpu.temperature == served[("gputop_gpu_temperature_celsius", index)]
                assert gpu.power_draw == served[("gputop_gpu_power_watts", index)]
                assert gpu.power_limit == served[("gputop_gpu_power_limit_watts", index)]
            table: DataTable[Text] = app.query_one("#hosts", DataTable)
            assert str(table.get_cell(exporter.hostname, "Temp")).split("\n") == [
                fmt_temperature(served[("gputop_gpu_temperature_celsius", str(i))]) for i in range(count)
            ]
            assert str(table.get_cell(exporter.hostname, "Used/Total")).split("\n") == [
                f"{fmt_bytes(served[('gputop_gpu_memory_used_bytes', str(i))])}/"
                f"{fmt_bytes(served[('gputop_gpu_memory_total_bytes', str(i))])}"
                for i in range(count)
            ]

        # Enter on beta: its GPUs and the processes its exporter serves.
        await pilot.press("down", "enter")
        await until(pilot, "beta's processes", lambda: bool(app.state and app.state.processes_host == "beta"))
        screen = app.screen
        assert isinstance(screen, HostScreen) and screen.hostname == "beta"
        assert app.state is not None
        assert sorted(
            (str(p.gpu_index), str(p.pid), p.command or "", p.gpu_memory) for p in app.state.processes
        ) == processes(cluster.beta.metrics())
        await pilot.press("escape")

        cluster.alpha.stop()
        await until(pilot, "alpha to go stale", lambda: status_cell(app, "alpha").startswith("stale "))
        alpha = shown_host(app, "alpha")
        assert alpha is not None and alpha.down and alpha.age_s is not None and alpha.age_s < 15
        # Its last figures stay on screen, marked stale; beta is still live.
        assert len(alpha.gpus) == 2 and alpha.gpus[0].memory_total is not None
        assert status_cell(app, "beta") == "live"
