"""End to end: 50 hosts (a simulated fleet, DCGM exporter, one real ``gputop export``) behind a real Prometheus.

The fleet simulator (``tests/prom/fleet.py``) serves each host's text exactly as the
exporter writes it, each host its own scrape target; Prometheus scrapes every second.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prom import PROMETHEUS, SKIP_REASON, Exporter, FleetProcess, PrometheusServer, wait_for
from prom.fleet import DCGM_FIELDS, gpu_sample
from prometheus_client.parser import text_string_to_metric_families
from textual.pilot import Pilot

from gputop.core.cluster.client import PrometheusClient
from gputop.core.cluster.model import ClusterHost, ClusterOptions
from gputop.core.cluster.reader import ClusterReader
from gputop.ui.cluster.gpu_list import GpuListScreen
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.view import ClusterApp

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)

GIB = 1024**3
MIB = 1024**2
FLEET_HOSTS = 47  # node-0000 … node-0046, with dgx-00, dgx-01 and alpha: 50 hosts
# Every 12th host (node-0011, node-0023, node-0035) runs an exporter from before the host series:
# the view reads it GPU by GPU, the others from what their GPUs add up to, with the same figures.
LEGACY_EVERY = 12


@dataclass
class Cluster:
    fleet: FleetProcess
    alpha: Exporter
    prometheus: PrometheusServer
    work: Path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work: Path = tmp_path_factory.mktemp("cluster")
    fleet = FleetProcess(FLEET_HOSTS, work, dcgm=2, legacy=LEGACY_EVERY)
    alpha = Exporter("alpha", 2, work, interval_s=1)  # sampling all the time, as deployed: it stays live
    cluster = None
    try:
        alpha.metrics()
        targets = fleet.static_configs() + f'      - targets: ["127.0.0.1:{alpha.port}"]\n'
        prometheus = PrometheusServer(work, static_configs=targets)
        cluster = Cluster(fleet, alpha, prometheus, work)
        wait_for("every host scraped", lambda: prometheus.query("count(up == 1) == 50") or None, 60)
        yield cluster
    finally:
        fleet.stop()
        alpha.stop()
        if cluster is not None:
            cluster.prometheus.stop()  # a test may have started it again: the one running now


async def until(pilot: Pilot[int], what: str, condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def refreshed(app: ClusterApp, hosts: int) -> bool:
    """A whole refresh is in (not only the first of its parts), listing ``hosts`` hosts."""
    return app.state is not None and not app.state.pending and len(app.fleet.host_list.hosts) == hosts


def listed(app: ClusterApp, hostname: str) -> ClusterHost:
    host = next((h for h in app.fleet.host_list.hosts if h.hostname == hostname), None)
    assert host is not None, f"{hostname} is not listed"
    return host


def row(app: ClusterApp, hostname: str) -> str:
    hosts = app.fleet.host_list.hosts
    return app.fleet.host_list.line(next(i for i, h in enumerate(hosts) if h.hostname == hostname)).plain


def status_of(app: ClusterApp, hostname: str) -> str:
    return row(app, hostname)[22:32].strip()


def make_app(cluster: Cluster, interval_s: float = 0.5) -> ClusterApp:
    return ClusterApp(ClusterOptions.create(cluster.prometheus.url, interval_s=interval_s, stale_after_s=4))


async def test_every_host_is_summed_up_by_prometheus_with_the_exporters_figures(cluster: Cluster) -> None:
    app = make_app(cluster, interval_s=60)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, "50 hosts", lambda: refreshed(app, 50))
        check_figures(app, cluster)
        # The first refresh took every gputop host to serve what its GPUs add up to until it learnt
        # which do not, then asked those again GPU by GPU; the next one knows it from the start: one
        # series a host for the others, and for these the fullest GPU from the most memory in use,
        # hot GPUs against their host's threshold. The figures are the same.
        first = app.state
        app.refresh_now()
        await until(pilot, "a second refresh", lambda: app.state is not first and refreshed(app, 50))
        check_figures(app, cluster)
        assert isinstance(app.reader, ClusterReader) and app.reader.read_gpu_by_gpu() == [
            f"node-{i:04d}" for i in range(LEGACY_EVERY - 1, FLEET_HOSTS, LEGACY_EVERY)
        ]
        # Sorting by memory: the fullest GPU first, answered from what is already here.
        await pilot.press("M")
        percents = [h.memory_percent for h in app.fleet.host_list.hosts]
        assert percents == sorted(percents, key=lambda p: -(p or 0)) and None not in percents


def idle_gpus(metrics: str) -> set[str]:
    """The GPUs on which an exporter's diagnoses found an idle process."""
    return {
        s.labels["gpu"]
        for family in text_string_to_metric_families(metrics)
        for s in family.samples
        if s.name == "gputop_gpu_problems" and s.labels["kind"] == "idle" and s.value > 0
    }


def check_figures(app: ClusterApp, cluster: Cluster) -> None:
    names = [h.hostname for h in app.fleet.host_list.hosts]
    assert names[:3] == ["alpha", "dgx-00", "dgx-01"] and names[3:] == [f"node-{i:04d}" for i in range(47)]
    # 11: a smaller GPU among its H100s, and an exporter without host series; 24: a lost GPU;
    # 36: a smaller GPU, with host series.
    for index in (3, 11, 24, 36):
        gpus = [gpu_sample(index, i, 4) for i in range(8)]
        working = [g for g in gpus if not g.lost]
        host = listed(app, f"node-{index:04d}")
        assert (host.flavour, host.state, host.gpus, host.lost) == ("gputop", "live", 8, 8 - len(working))
        assert host.model == ("NVIDIA A100-SXM4-40GB…" if index % 25 == 11 else "NVIDIA H100 80GB HBM3")
        assert host.memory_used == sum(g.memory_used or 0 for g in working)
        assert host.memory_total == sum(g.memory_total or 0 for g in working)
        assert host.memory_percent == max(100 * (g.memory_used or 0) / (g.memory_total or 1) for g in working)
        assert host.utilization == pytest.approx(sum(g.utilization_gpu or 0 for g in working) / len(working))
        assert host.temperature == max(g.temperature or 0 for g in working)
        assert host.power_draw == sum(g.power_draw or 0 for g in working)
    assert row(app, "node-0003").startswith(
        " node-0003            live          8 NVIDIA H100 80GB HB… █████████▏  91% 292.0GiB/640.0GiB"
        "  48%  87°C  1860W "
    )
    # DCGM exporter: MiB -> bytes, total = used + free + reserved, MIG instance series left out.
    dgx = listed(app, "dgx-00")
    used, free, reserved = (DCGM_FIELDS[f"DCGM_FI_DEV_FB_{n}"] for n in ("USED", "FREE", "RESERVED"))
    assert (dgx.flavour, dgx.state, dgx.gpus, dgx.model) == ("dcgm", "live", 2, "NVIDIA A100-SXM4-80GB")
    assert dgx.memory_used == (used[0] + used[1]) * MIB
    assert dgx.memory_total == sum(used + free + reserved) * MIB
    assert (dgx.temperature, dgx.utilization, dgx.power_draw) == (71.0, 48.5, 449.75)
    # The real exporter (its demo GPUs' figures move every second; their sizes do not).
    served = {
        (s.name, s.labels["gpu"]): s.value
        for family in text_string_to_metric_families(cluster.alpha.metrics())
        for s in family.samples
        if "gpu" in s.labels and "pid" not in s.labels
    }
    alpha = listed(app, "alpha")
    assert (alpha.flavour, alpha.state, alpha.gpus) == ("gputop", "live", 2)
    assert alpha.memory_total == sum(served[("gputop_gpu_memory_total_bytes", g)] for g in "01")
    fleet = [gpu_sample(i, g, 4) for i in range(FLEET_HOSTS) for g in range(8)]
    hot = sum(1 for g in fleet if not g.lost and (g.temperature or 0) >= (g.temperature_slowdown or 0) - 5)
    summary = str(app.query_one("#summary").render())
    assert summary.startswith("Hosts 50 live · 0 stale · 0 down   GPUs 382   memory ")
    # alpha's demo GPUs run cool (below 80 °C), DCGM's hottest is 71 °C: the hot ones are the fleet's.
    # Only alpha, a real exporter, says how long its processes have been idle; its diagnoses say which
    # GPUs an idle process holds memory on (and count none unhealthy).
    alpha_text = cluster.alpha.metrics()
    idle = idle_gpus(alpha_text)
    idle_text = str(len(idle)) if "gputop_process_idle_seconds" in alpha_text else "N/A"
    assert summary.endswith(
        f"filling 5 [f]   hot {hot} [h]   lost 1 [l]   idle-hogged {idle_text} [i]   unhealthy 0 [u]"
    )
    # Its problems column counts what its exporter's diagnoses found (the idle notebook at least);
    # the simulated fleet serves no diagnoses, so theirs is not known rather than 0.
    assert alpha.problems is not None and alpha.problems >= 1
    assert listed(app, "node-0003").problems is None


async def test_a_count_key_lists_its_gpus_and_enter_opens_the_host(cluster: Cluster) -> None:
    app = make_app(cluster, interval_s=60)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, "the counts", lambda: app.state is not None)
        await pilot.press("f")
        screen = app.screen
        assert isinstance(screen, GpuListScreen)
        await until(pilot, "the filling GPUs", lambda: len(screen.gpus) == 5)
        assert [(g.hostname, g.index, g.value) for g in screen.gpus] == [
            (f"node-{i:04d}", 0, 3600.0) for i in range(0, 50, 10)
        ]
        await pilot.press("down", "enter")
        await until(pilot, "node-0010's screen", lambda: isinstance(app.screen, HostScreen))
        assert isinstance(app.screen, HostScreen) and app.screen.hostname == "node-0010"
        await pilot.press("escape", "i")
        screen = app.screen
        assert isinstance(screen, GpuListScreen)
        # The GPUs alpha's diagnoses call idle-hogged, each with its longest idle process's time.
        idle = idle_gpus(cluster.alpha.metrics())
        await until(pilot, "the idle-hogged GPUs", lambda: len(screen.gpus) == len(idle) and bool(idle))
        assert {(g.hostname, str(g.index)) for g in screen.gpus} == {("alpha", gpu) for gpu in idle}
        assert all(g.value >= 600 for g in screen.gpus)


async def test_enter_opens_the_host_with_its_gpus_and_processes_without_waiting_for_a_refresh(
    cluster: Cluster,
) -> None:
    app = make_app(cluster, interval_s=60)  # no refresh comes in this test's time: the screen reads on its own
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, "the hosts", lambda: refreshed(app, 50))
        await pilot.press("down", "down", "down", "down", "enter")
        screen = app.screen
        assert isinstance(screen, HostScreen) and screen.hostname == "node-0001"
        await until(pilot, "its detail", lambda: screen.detail is not None)
        detail = screen.detail
        assert detail is not None and detail.live and detail.exporter_up and detail.sample_errors == 0.0
        assert detail.info["driver_version"] == "560.35.03"
        expected = [gpu_sample(1, i, 4) for i in range(8)]
        assert [g.figure("memory_used") for g in detail.gpus] == [g.memory_used for g in expected]
        assert [g.figure("clock_sm") for g in detail.gpus] == [1980.0] * 8
        assert [(p.gpu_index, p.pid, p.user, p.command, p.gpu_memory) for p in detail.processes[:4]] == [
            (0, 1003, "user4", "python", 1024 * MIB),
            (0, 1002, "user3", "python", 768 * MIB),
            (0, 1001, "user2", "python", 512 * MIB),
            (0, 1000, "user1", "trainer", 256 * MIB),
        ]
        assert len(detail.processes) == 32


async def test_a_stuck_host_goes_stale_a_dead_one_down_both_with_their_age_and_last_figures(cluster: Cluster) -> None:
    # node-0006 died before the view started: its last figures come from what Prometheus kept.
    cluster.fleet.set_mode("node-0006", "dead")
    wait_for("node-0006 down", lambda: cluster.prometheus.query('up{instance="node-0006:9400"} == 0') or None, 30)
    app = make_app(cluster)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, "the hosts", lambda: refreshed(app, 50))
        gone = listed(app, "node-0006")
        assert (gone.state, gone.gpus) == ("down", 8)
        assert gone.memory_used == sum(gpu_sample(6, i, 4).memory_used or 0 for i in range(8))
        cluster.fleet.set_mode("node-0006", "live")
        before = listed(app, "node-0005")
        cluster.fleet.set_mode("node-0004", "frozen")
        cluster.fleet.set_mode("node-0005", "dead")
        try:
            await until(pilot, "node-0005 down", lambda: listed(app, "node-0005").state == "down")
            await until(pilot, "node-0004 stale", lambda: listed(app, "node-0004").state == "stale")
            assert status_of(app, "node-0004").startswith("stale ")
            assert status_of(app, "node-0005").startswith("down ")
            dead = listed(app, "node-0005")
            assert (dead.memory_used, dead.temperature, dead.gpus) == (
                before.memory_used,
                before.temperature,
                before.gpus,
            )
            age = dead.age_s(time.time())
            assert age is not None and 0 < age < 15
            await until(pilot, "node-0006 back", lambda: listed(app, "node-0006").state == "live")
            summary = str(app.query_one("#summary").render())
            assert summary.startswith("Hosts 48 live · 1 stale · 1 down ")
        finally:
            cluster.fleet.set_mode("node-0004", "live")
            cluster.fleet.set_mode("node-0005", "live")
        back = ("node-0004", "node-0005")
        await until(pilot, "both live again", lambda: {status_of(app, name) for name in back} == {"live"})


async def test_while_prometheus_is_down_every_row_shows_its_age_and_it_comes_back(cluster: Cluster) -> None:
    app = make_app(cluster)
    async with app.run_test(size=(150, 40)) as pilot:
        await until(pilot, "the hosts", lambda: refreshed(app, 50))
        cluster.prometheus.stop()
        status = app.query_one("#status")
        await until(pilot, "unreachable", lambda: "unreachable" in str(status.render()))
        assert f"Prometheus unreachable at {cluster.prometheus.url}: connection refused — retrying in " in str(
            status.render()
        )
        await pilot.pause(1.1)  # the ages move on every second
        statuses = {status_of(app, h.hostname) for h in app.fleet.host_list.hosts}
        assert "live" not in statuses and all(s.endswith("s old") for s in statuses)
        cluster.prometheus = PrometheusServer(
            cluster.work, static_configs=(cluster.work / "prometheus.yml").read_text().split("static_configs:\n")[1],
            port=cluster.prometheus.port,
        )
        await until(pilot, "Prometheus back", lambda: "answered in" in str(status.render()))
        await until(pilot, "live rows", lambda: status_of(app, "node-0000") == "live")


def test_a_query_limit_that_is_not_a_whole_number_of_seconds_is_accepted(cluster: Cluster) -> None:
    # After a refresh that took 2.84 s the next limit is twice that: Prometheus' duration syntax has
    # no "5.68s", so the limit goes as plain seconds.
    client = PrometheusClient(cluster.prometheus.url, timeout_s=5.68091)
    assert len(client.query("up", time.time())) == 50
