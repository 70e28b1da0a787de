"""The cluster view's owner screen (``o``), end to end: exporters' per-process series summed by a real Prometheus.

Three hosts serve the exact text ``gputop export --job-label`` writes for a fixed scenario (the
exporter's own collector renders it, with the real Diagnoser's idle verdicts after ten minutes),
and a fourth serves DCGM exporter's format with Kubernetes' per-pod labels on its device series
(one GPU held by one pod, one time-shared by two). Every figure below is worked out by hand from
the scenario. Prometheus runs the recording rules gputop ships (every second here, where the
shipped group says a minute), so the reader answers from them; the raw aggregation it falls back
on is held to the same figures.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prom import PROMETHEUS, SKIP_REASON, PrometheusServer, free_port, wait_for
from prom.fleet import serve
from prometheus_client.exposition import generate_latest
from prometheus_client.registry import CollectorRegistry
from test_cluster_view import FakeReader, make_app
from textual.pilot import Pilot

from gputop.core.analysis.diagnosis import Diagnoser
from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.model import ClusterHost, ClusterOptions
from gputop.core.cluster.owners import (
    RECORDED,
    RULE_INTERVAL,
    FleetOwner,
    ask_owners,
    fleet_memory,
    owners_query,
    parse_owners,
    recording_rules,
)
from gputop.core.cluster.reader import ClusterReader
from gputop.core.model import GpuSample, HostSample, Job, ProcessSample, Snapshot
from gputop.core.output import monitoring
from gputop.core.output.exporter import SnapshotCollector
from gputop.ui.cluster.owner_screen import FleetOwnerScreen
from gputop.ui.cluster.view import ClusterApp

needs_prometheus = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)

GIB = 1024**3
MIB = 1024**2
STARTED = 1_700_000_000.0


def proc(pid: int, gpu: int, gib: float, user: str, sm: float, **owner: object) -> ProcessSample:
    return ProcessSample(
        pid=pid, gpu_index=gpu, type="C", gpu_memory=int(gib * GIB), sm_utilization=sm, user=user,
        name="python", started=STARTED + pid, visible=True, **owner,  # type: ignore[arg-type]
    )


ALICE_JOB = {"job": Job(scheduler="slurm", id="1234")}
WEB = {"container": "docker:abcdef123456", "container_name": "web", "container_runtime": "docker",
       "container_id": "abcdef123456" + "0" * 52}
TRAIN = {"container": "k8s:uid-1", "container_name": "ml/train", "pod_uid": "uid-1"}
SERVE = {"container": "k8s:uid-3", "container_name": "ml/serve", "pod_uid": "uid-3"}
# host -> GPU -> processes. alice's pid 100 spans both GPUs of gpu-a (one process, one job);
# bob's pid 101 has used no SM time for ten minutes holding 4 GiB (idle), his pid 202 too, but
# holding 0.5 GiB: below the exporter's 1 GiB, not idle.
SCENARIO: dict[str, dict[int, list[ProcessSample]]] = {
    "gpu-a": {
        0: [proc(100, 0, 10, "alice", 50.0, **ALICE_JOB), proc(101, 0, 4, "bob", 0.0, **WEB)],
        1: [proc(100, 1, 6, "alice", 40.0, **ALICE_JOB)],
    },
    "gpu-b": {
        0: [proc(200, 0, 8, "alice", 60.0, job=Job(scheduler="slurm", id="1240")),
            proc(201, 0, 2, "carol", 30.0, **TRAIN)],
        1: [proc(202, 1, 0.5, "bob", 0.0)],
    },
    "gpu-c": {0: [proc(300, 0, 20, "carol", 90.0, **SERVE)]},
}


def snapshot(host: str, at: float) -> Snapshot:
    gpus = tuple(
        GpuSample(index=index, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{host}-{index}", memory_total=80 * GIB,
                  memory_used=sum(p.gpu_memory or 0 for p in processes), utilization_gpu=50.0,
                  temperature=50.0, power_draw=300.0, processes=tuple(processes))
        for index, processes in SCENARIO[host].items()
    )
    return Snapshot(timestamp=at, hostname=host, host=HostSample(), gpus=gpus, source="nvml")


def dcgm_page() -> bytes:
    """dcgm-exporter with --kubernetes-virtual-gpus: GPU 0 held by ml/infer, GPU 1 shared with ml/batch."""
    lines = []
    for name, values in (("DCGM_FI_DEV_FB_USED", 1024.0), ("DCGM_FI_DEV_FB_FREE", 80896.0),
                         ("DCGM_FI_DEV_FB_RESERVED", 0.0), ("DCGM_FI_DEV_GPU_UTIL", 10.0),
                         ("DCGM_FI_DEV_GPU_TEMP", 40.0), ("DCGM_FI_DEV_POWER_USAGE", 100.0)):
        lines.append(f"# TYPE {name} gauge")
        for gpu, pods in ((0, ("infer",)), (1, ("infer", "batch"))):
            for pod in pods:
                labels = (f'gpu="{gpu}",UUID="GPU-dgx-{gpu}",modelName="NVIDIA A100-SXM4-80GB",Hostname="dgx-pods",'
                          f'namespace="ml",pod="{pod}",container="worker"')
                lines.append(f"{name}{{{labels}}} {values!r}")
    return ("\n".join(lines) + "\n").encode()


class Pages:
    """What each host's exporter serves, its sample time following the clock (so the hosts stay live)."""

    def __init__(self) -> None:
        now = time.time()
        self.collectors = {}
        for host in SCENARIO:
            diagnoser = Diagnoser()
            diagnoser.update(snapshot(host, now - 600))
            diagnoses = diagnoser.update(snapshot(host, now))
            collector = SnapshotCollector(host, names="gputop", job_label=True)
            self.collectors[host] = (collector, diagnoses)

    def body(self, host: str) -> bytes | None:
        if host == "dgx-pods":
            return dcgm_page()
        if host not in self.collectors:
            return None
        collector, diagnoses = self.collectors[host]
        collector.update(snapshot(host, time.time()), {}, diagnoses)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        return generate_latest(registry)


@dataclass
class Cluster:
    prometheus: PrometheusServer
    reader: ClusterReader


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    work: Path = tmp_path_factory.mktemp("owners")
    port = free_port()
    server = serve(Pages(), port)  # type: ignore[arg-type]
    # The pages are served from a process of their own: served from a thread of this test process, the Pilot
    # tests beside them (or another module's on a loaded machine) kept scrapes from answering in time, and a
    # scrape that fails makes that host's series stale at once: the owners read or recorded lacked a host.
    pages = multiprocessing.get_context("fork").Process(target=server.serve_forever, daemon=True)
    pages.start()
    targets = "".join(
        f'      - targets: ["127.0.0.1:{port}"]\n'
        f'        labels: {{instance: "{name}:9400", __metrics_path__: "/hosts/{name}/metrics"}}\n'
        for name in (*SCENARIO, "dgx-pods")
    )
    # The shipped rules, evaluated every second rather than every minute.
    rules = work / "rules.yml"
    rules.write_text(monitoring.read(monitoring.ALERT_RULES).replace(f"interval: {RULE_INTERVAL}", "interval: 1s"))
    prometheus = PrometheusServer(work, static_configs=targets, rule_files=[rules])
    try:
        wait_for("every host scraped", lambda: prometheus.query("count(up == 1) == 4") or None, 60)
        wait_for("idle times scraped", lambda: prometheus.query("count(gputop_process_idle_seconds) == 7") or None, 30)
        # Recorded once every idle time was in: bob's idle memory, and a DCGM pod.
        recorded = f'{RECORDED}{{kind="user",owner="bob",figure="idle_memory"}} == {4 * GIB}'
        wait_for("the rules recorded", lambda: prometheus.query(recorded) or None, 30)
        wait_for("the pods recorded", lambda: prometheus.query(f'{RECORDED}{{owner="ml/batch"}}') or None, 30)
        reader = ClusterReader(ClusterOptions.create(prometheus.url, interval_s=60))
        fleet = fleet_memory(reader.fetch().hosts)

        def caught_up() -> bool | None:
            # A rule evaluated before the last host's first scrape was ingested recorded a partial fleet; the
            # next evaluation (a second later) has it all. The tests compare the two answers: wait for that.
            now = time.time()
            for kind in ("user", "job", "pod", "container"):
                recorded, found = ask_owners(reader.client, kind, now)
                raw = reader.client.query(owners_query(kind), now)
                if not found or parse_owners(recorded, fleet) != parse_owners(raw, fleet):
                    return None
            return True

        wait_for("the recorded owners to agree with the raw ones", caught_up, 30)
        yield Cluster(prometheus, reader)
    finally:
        prometheus.stop()
        pages.terminate()
        pages.join(10)
        server.server_close()


def row(name: str, hosts: int, gpus: int, gib: float | None, fleet_gib: float, idle_gib: float | None,
        processes: int | None) -> FleetOwner:
    return FleetOwner(
        name=name, hosts=hosts, gpus=gpus, gpu_memory=None if gib is None else int(gib * GIB),
        memory_share=None if gib is None else gib / fleet_gib,
        idle_memory=None if idle_gib is None else int(idle_gib * GIB), processes=processes,
    )


# gpu-a 2 x 80 GiB, gpu-b 2 x 80, gpu-c 1 x 80, dgx-pods 2 x (1024 + 80896 MiB) = 2 x 80 GiB.
FLEET_GIB = 560


def owners(cluster: Cluster, kind: str) -> list[FleetOwner]:
    """The reader's answer, from the recording rules; the raw aggregation says the same."""
    state = cluster.reader.fetch()
    read = cluster.reader.owners(kind, state.hosts)
    assert cluster.reader.owners_recorded is True
    raw = parse_owners(cluster.reader.client.query(owners_query(kind), time.time()), fleet_memory(state.hosts))
    assert raw == read
    return read


@needs_prometheus
def test_by_user_each_owner_s_hosts_gpus_memory_share_idle_memory_and_processes(cluster: Cluster) -> None:
    assert owners(cluster, "user") == [
        # 10 + 6 on gpu-a (pid 100 on two GPUs: one process), 8 on gpu-b.
        row("alice", 2, 3, 24, FLEET_GIB, 0, 2),
        row("carol", 2, 2, 22, FLEET_GIB, 0, 2),
        # pid 101 idle with 4 GiB; pid 202 idle too long but below 1 GiB.
        row("bob", 2, 2, 4.5, FLEET_GIB, 4, 2),
    ]


@needs_prometheus
def test_by_job_only_processes_in_a_slurm_job_and_by_pod_dcgm_pods_count_for_hosts_and_gpus(cluster: Cluster) -> None:
    assert owners(cluster, "job") == [row("1234", 1, 2, 16, FLEET_GIB, 0, 1), row("1240", 1, 1, 8, FLEET_GIB, 0, 1)]
    assert owners(cluster, "pod") == [
        row("ml/serve", 1, 1, 20, FLEET_GIB, 0, 1),
        row("ml/train", 1, 1, 2, FLEET_GIB, 0, 1),
        # DCGM's per-pod series: the GPUs each pod is on, no memory or processes of its own.
        row("ml/batch", 1, 1, None, FLEET_GIB, None, None),
        row("ml/infer", 1, 2, None, FLEET_GIB, None, None),
    ]
    assert owners(cluster, "container") == [
        row("k8s:uid-3", 1, 1, 20, FLEET_GIB, 0, 1),
        row("web", 1, 1, 4, FLEET_GIB, 4, 1),
        row("k8s:uid-1", 1, 1, 2, FLEET_GIB, 0, 1),
    ]


@needs_prometheus
def test_an_owner_s_hosts_and_the_query_is_one_aggregate_per_figure(cluster: Cluster) -> None:
    assert cluster.reader.owner_hosts("user", "bob") == {"gpu-a", "gpu-b"}
    assert cluster.reader.owner_hosts("pod", "ml/infer") == {"dgx-pods"}
    assert cluster.reader.owner_hosts("job", "1240") == {"gpu-b"}
    # Summed on the server: the answer is a handful of series per owner, not one per process.
    # Five figures an owner, and idle memory for bob alone (the others hold none idle).
    answer = cluster.prometheus.query(owners_query("user"))
    assert sorted((s["metric"]["owner"], s["metric"]["figure"]) for s in answer if s["metric"]["owner"] == "bob") == [
        ("bob", figure) for figure in sorted(("memory", "hosts", "gpus", "processes", "idle_memory", "idle_known"))
    ]
    assert len(answer) == 3 * 5 + 1


@needs_prometheus
def test_the_recorded_answer_is_one_selection_and_without_the_rules_the_raw_aggregation_answers(
    cluster: Cluster,
) -> None:
    client = cluster.reader.client
    before = client.traffic.requests
    answer, recorded = ask_owners(client, "user", time.time())
    # One request; five figures an owner, bob's idle memory, and the marker that the user rule answered.
    assert (recorded, client.traffic.requests - before, len(answer)) == (True, 1, 3 * 5 + 1 + 1)
    # An hour before this Prometheus started it had recorded nothing: the raw aggregation is asked.
    before = client.traffic.requests
    assert ask_owners(client, "user", time.time() - 3600) == ([], False)
    assert client.traffic.requests - before == 2


def test_the_shipped_rules_are_the_ones_the_reader_s_query_makes() -> None:
    shipped = monitoring.read(monitoring.ALERT_RULES)
    assert shipped.endswith(recording_rules())
    assert shipped.count(f"record: {RECORDED}") == 4


@needs_prometheus
def test_hosts_limits_the_owners_to_the_hosts_it_matches(cluster: Cluster) -> None:
    reader = ClusterReader(ClusterOptions.create(cluster.prometheus.url, hosts="^gpu-a$", interval_s=60))
    state = reader.fetch()
    # gpu-a's 160 GiB alone: alice's pid 100 (10 + 6 GiB), bob's idle pid 101 (4 GiB). The recorded
    # figures are the whole fleet's: these are aggregated from the raw series.
    assert reader.owners("user", state.hosts) == [row("alice", 1, 2, 16, 160, 0, 1), row("bob", 1, 1, 4, 160, 4, 1)]
    assert reader.owners_recorded is False
    assert reader.owners("pod", state.hosts) == []
    assert reader.owner_hosts("user", "carol") == frozenset()


async def until(pilot: Pilot[int], what: str, condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


def listed(app: ClusterApp) -> list[str]:
    return [host.hostname for host in app.fleet.host_list.hosts]


@needs_prometheus
async def test_o_shows_the_owners_at_80x24_sorts_cycles_and_enter_lists_the_owner_s_hosts(cluster: Cluster) -> None:
    app = ClusterApp(ClusterOptions.create(cluster.prometheus.url, interval_s=60))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, "the hosts", lambda: len(listed(app)) == 4)
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, FleetOwnerScreen)
        # The rows come with the owners' answer, their share with the fleet's memory: a refresh that ends while
        # the owners are read (o at once) has them read again, not left N/A until the next refresh (60 s).
        await until(pilot, "the owners' share", lambda: len(screen.rows) == 3 and "N/A" not in screen.lines()[1])
        assert screen.lines() == [
            # Of the fleet's 560 GiB: 24 / 560 = 4.3 %, 22 / 560 = 3.9 %, 4.5 / 560 = 0.8 %.
            "USER                              HOSTS   GPUS GPU-MEM▼   MEM%  IDLE-MEM  PROCS",
            "alice                                 2      3  24.0GiB   4.3%         -      2",
            "carol                                 2      2  22.0GiB   3.9%         -      2",
            "bob                                   2      2   4.5GiB   0.8%    4.0GiB      2",
        ]
        await pilot.press("greater_than_sign")  # MEM%: the same order; then IDLE-MEM, most first
        await pilot.press("greater_than_sign")
        assert [r.name for r in screen.rows] == ["bob", "alice", "carol"]
        await pilot.press("I")
        assert [r.name for r in screen.rows] == ["alice", "carol", "bob"]
        await pilot.press("o")  # by job, still by idle memory, least first: both none, then by name
        await until(pilot, "the jobs", lambda: [r.name for r in screen.rows] == ["1234", "1240"])
        assert screen.lines()[0].startswith("JOB ")
        assert "IDLE-MEM▲" in screen.lines()[0]
        await pilot.press("down", "enter")
        await until(pilot, "the job's hosts", lambda: listed(app) == ["gpu-b"])
        assert not isinstance(app.screen, FleetOwnerScreen)
        assert "job 1240's hosts (Esc: all)" in str(app.query_one("#status").content)
        await pilot.press("escape")
        assert len(listed(app)) == 4


@needs_prometheus
async def test_at_120x40_the_name_has_room_and_enter_on_a_dcgm_pod_lists_its_host(cluster: Cluster) -> None:
    app = ClusterApp(ClusterOptions.create(cluster.prometheus.url, interval_s=60))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, "the hosts", lambda: len(listed(app)) == 4)
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, FleetOwnerScreen)
        await until(pilot, "the owners", lambda: len(screen.rows) == 3)
        assert screen.lines()[3] == (
            # The name column at its widest (40), the figures after it.
            "bob" + " " * 37 + "      2      2   4.5GiB   0.8%    4.0GiB      2"
        )
        await pilot.press("o", "o")  # by pod
        await until(pilot, "the pods", lambda: len(screen.rows) == 4)
        assert [line.split()[0] for line in screen.lines()[1:]] == ["ml/serve", "ml/train", "ml/batch", "ml/infer"]
        assert screen.lines()[4].split() == ["ml/infer", "1", "2", "N/A", "N/A", "N/A", "N/A"]
        await pilot.press("down", "down", "down", "enter")
        await until(pilot, "the pod's hosts", lambda: listed(app) == ["dgx-pods"])



class SlowOwners(FakeReader):
    """Hosts answer; the owners (``slow_owners``) or an owner's hosts do not."""

    slow_owners = True

    def owners(self, kind: str, hosts: Collection[ClusterHost]) -> list[FleetOwner]:
        if self.slow_owners:
            raise PrometheusError("no answer within 5s", "slow")
        return [row("alice", 1, 1, 8, 160, 0, 1)]

    def owner_hosts(self, kind: str, name: str) -> frozenset[str]:
        raise PrometheusError("HTTP 502 Bad Gateway", "unreachable")


async def test_owners_that_cannot_be_read_say_why_and_every_host_stays_listed() -> None:
    reader = SlowOwners()
    app = make_app(reader)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, "the hosts", lambda: len(listed(app)) == 3)
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, FleetOwnerScreen)
        await until(pilot, "the error", lambda: screen.error == "no answer within 5s")
        assert "no answer within 5s" in str(app.screen.query_one("#owners-title").content)
        reader.slow_owners = False
        await pilot.press("o", "o", "o", "o")  # round to user again: asked again
        await until(pilot, "the owners", lambda: [r.name for r in screen.rows] == ["alice"])
        await pilot.press("enter")
        status = app.query_one("#status")
        await until(pilot, "the reason", lambda: "user alice's hosts: HTTP 502 Bad Gateway" in str(status.content))
        assert "(Esc: all)" not in str(status.content)  # no owner's hosts alone: every host is listed
        assert len(listed(app)) == 3
        await pilot.press("escape")
        assert "alice" not in str(status.content)
