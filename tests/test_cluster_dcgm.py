"""The cluster view on real dcgm-exporter fleets, beside a gputop host, through a real Prometheus (and VictoriaMetrics).

The DCGM pages are rendered as dcgm-exporter renders them (``tests/prom/dcgm_pages.py``):
``dgx-a`` as the 4.x releases (``Hostname``), one GPU in MIG mode; ``dgx-b`` as main after #655
(``hostname``), a Kubernetes node whose 4 GPUs are time-shared by 5 pods
(``--kubernetes-virtual-gpus``: a series per pod beside each device's); ``dgx-c`` with
``--no-hostname`` (its ``instance`` names it); ``dgx-d`` scraped without ``honor_labels`` by a
target that has pod labels of its own (dcgm-exporter's pod), so its workload's are ``exported_*``.
``gpu-e`` is a real ``gputop export`` (both name sets). One Prometheus for the module.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from prom import PROMETHEUS, SKIP_REASON, Exporter, PrometheusServer, free_port, http_get, terminate, wait_for
from prom.dcgm_pages import DcgmGpu, default_counters, render
from textual.pilot import Pilot

from gputop.core.cluster.model import ClusterHost, ClusterOptions, ClusterState
from gputop.core.cluster.reader import ClusterReader
from gputop.core.metric_names import DCGM_FIELD_BY_NAME
from gputop.ui.cluster.host_screen import HostScreen, more_text
from gputop.ui.cluster.view import ClusterApp

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)
VICTORIA = shutil.which("victoria-metrics")
GIB_MIB = 1024
MIB = 1024**2


def fields(used_gib: float, util: int, temp: int, power: float, reserved_mib: int = 0) -> dict[str, float]:
    """Every default counter of an 80 GiB GPU (framebuffer in MiB, as DCGM gives it)."""
    used = used_gib * GIB_MIB
    return {
        "DCGM_FI_DEV_SM_CLOCK": 1410, "DCGM_FI_DEV_MEM_CLOCK": 1593, "DCGM_FI_DEV_MEMORY_TEMP": temp - 5,
        "DCGM_FI_DEV_GPU_TEMP": temp, "DCGM_FI_DEV_POWER_USAGE": power, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 9e9,
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0, "DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_MEM_COPY_UTIL": util // 2,
        "DCGM_FI_DEV_ENC_UTIL": 0, "DCGM_FI_DEV_DEC_UTIL": 0, "DCGM_FI_DEV_XID_ERRORS": 0,
        "DCGM_FI_DEV_FB_FREE": 80 * GIB_MIB - used - reserved_mib, "DCGM_FI_DEV_FB_USED": used,
        "DCGM_FI_DEV_FB_RESERVED": reserved_mib, "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": 123456,
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS": 0, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": 0,
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": 2, "DCGM_FI_DEV_ROW_REMAP_FAILURE": 0,
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE": util / 100, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.25,
        "DCGM_FI_PROF_DRAM_ACTIVE": 0.5, "DCGM_FI_PROF_PCIE_TX_BYTES": 1e6, "DCGM_FI_PROF_PCIE_RX_BYTES": 2e6,
    }


def pod_labels(pod: str, namespace: str, container: str) -> dict[str, str]:
    return {"pod": pod, "namespace": namespace, "container": container}


B_USED_GIB = (40, 30, 30, 25)
B_PODS = {0: ("train-0", "train-1"), 1: ("infer-0", "infer-1"), 2: ("notebook",)}
PAGES = {
    "dgx-a": render("dgx-a", [
        DcgmGpu(0, fields(40, 97, 71, 388.25, reserved_mib=560)),
        DcgmGpu(1, fields(1, 0, 33, 61.5, reserved_mib=1)),
        DcgmGpu(1, {"DCGM_FI_DEV_FB_USED": 512, "DCGM_FI_DEV_FB_FREE": 9216}, mig_profile="1g.10gb", mig_instance=1),
    ], host_label="Hostname"),
    "dgx-b": render("dgx-b", [
        DcgmGpu(i, fields(used, 50, 60, 300.0)) for i, used in enumerate(B_USED_GIB)
    ] + [
        DcgmGpu(i, fields(B_USED_GIB[i], 50, 60, 300.0), pod=pod_labels(pod, "ml", "worker"))
        for i, pods in B_PODS.items() for pod in pods
    ], host_label="hostname"),
    "dgx-c": render("dgx-c", [DcgmGpu(0, fields(10, 5, 40, 90.0))], host_label=None),
    "dgx-d": render("dgx-d", [DcgmGpu(0, fields(20, 80, 55, 250.0), pod=pod_labels("train-7", "ml", "t"))]),
}


def serve_pages() -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            body = PAGES[self.path.split("/")[2]].encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True).start()
    return server


def scrape_configs(pages_port: int, gputop_port: int) -> str:
    """The gputop job's targets (honor_labels), then a job without honor_labels for dgx-d."""
    def target(name: str, labels: str = "") -> str:
        return (f'      - targets: ["127.0.0.1:{pages_port}"]\n        labels: {{instance: "{name}:9400", '
                f'__metrics_path__: "/hosts/{name}/metrics"{labels}}}\n')

    return (
        target("dgx-a") + target("dgx-b") + target("dgx-c")
        + f'      - targets: ["127.0.0.1:{gputop_port}"]\n'
        + "  - job_name: gpu-operator\n    scrape_interval: 1s\n    static_configs:\n"
        + target("dgx-d", ', pod: "nvidia-dcgm-exporter-7x2k", namespace: "gpu-operator", container: "exporter"')
    )


@dataclass
class Fleet:
    prometheus: PrometheusServer
    gputop: Exporter
    work: Path
    configs: str


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    work = tmp_path_factory.mktemp("dcgm-fleet")
    pages = serve_pages()
    gputop = Exporter("gpu-e", 2, work, interval_s=3600)
    prometheus = None
    try:
        configs = scrape_configs(pages.server_address[1], gputop.port)
        prometheus = PrometheusServer(work, static_configs=configs)
        gputop.metrics()
        wait_for("every target scraped", lambda: prometheus.query("count(up == 1) == 5") or None, 30)
        yield Fleet(prometheus, gputop, work, configs)
    finally:
        gputop.stop()
        pages.shutdown()
        if prometheus is not None:
            prometheus.stop()


def read(url: str) -> ClusterState:
    return ClusterReader(ClusterOptions.create(url, interval_s=5)).fetch()


def by_name(state: ClusterState) -> dict[str, ClusterHost]:
    return {host.hostname: host for host in state.hosts}


def check_fleet(state: ClusterState) -> None:
    hosts = by_name(state)
    assert sorted(hosts) == ["dgx-a", "dgx-b", "dgx-c:9400", "dgx-d", "gpu-e"]
    assert {name: host.flavour for name, host in hosts.items()} == {
        "dgx-a": "dcgm", "dgx-b": "dcgm", "dgx-c:9400": "dcgm", "dgx-d": "dcgm", "gpu-e": "gputop"
    }
    a, b = hosts["dgx-a"], hosts["dgx-b"]
    # dgx-a: two whole GPUs, its MIG instance not counted as a third.
    assert (a.gpus, a.memory_used, a.memory_total) == (2, (40 + 1) * 1024 * MIB, 160 * 1024 * MIB)
    assert (a.temperature, a.power_draw, a.state) == (71.0, 388.25 + 61.5, "live")
    # dgx-b: each time-shared GPU once, not once per pod (4 GPUs, not 9; 125 GiB used, not 295).
    assert (b.gpus, b.memory_used, b.memory_total) == (4, 125 * 1024 * MIB, 320 * 1024 * MIB)
    assert (b.memory_percent, b.utilization) == (50.0, 50.0)
    assert (hosts["dgx-c:9400"].gpus, hosts["dgx-c:9400"].memory_used) == (1, 10 * 1024 * MIB)
    assert (hosts["dgx-d"].gpus, hosts["dgx-d"].memory_used) == (1, 20 * 1024 * MIB)
    # gputop's own names win for its host: 2 GPUs, not 4 (its DCGM series say they are gputop's).
    assert hosts["gpu-e"].gpus == 2


def test_dcgm_hosts_of_every_spelling_and_a_gputop_host_side_by_side(fleet: Fleet) -> None:
    check_fleet(read(fleet.prometheus.url))


async def until(pilot: Pilot[int], what: str, condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await pilot.pause(0.05)


async def open_host(pilot: Pilot[int], app: ClusterApp, hostname: str) -> HostScreen:
    """Down to the host's row, Enter, and wait for its detail."""
    await pilot.press("home", *["down"] * [h.hostname for h in app.host_list.hosts].index(hostname), "enter")
    screen = app.screen
    assert isinstance(screen, HostScreen) and screen.hostname == hostname
    await until(pilot, f"{hostname}'s detail", lambda: screen.detail is not None and bool(screen.detail.gpus))
    return screen


def gpu_rows(screen: HostScreen) -> list[list[str]]:
    table = screen.query_one("#gpus")
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]  # type: ignore[attr-defined]


def process_rows(screen: HostScreen) -> list[list[str]]:
    table = screen.query_one("#processes")
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]  # type: ignore[attr-defined]


async def test_enter_on_dcgm_hosts_shows_mig_devices_pods_and_every_default_counter(fleet: Fleet) -> None:
    app = ClusterApp(ClusterOptions.create(fleet.prometheus.url, interval_s=60))
    async with app.run_test(size=(200, 50)) as pilot:
        await until(pilot, "the hosts", lambda: len(app.host_list.hosts) == 5)
        screen = await open_host(pilot, app, "dgx-a")
        rows = gpu_rows(screen)
        assert [(r[0], r[1]) for r in rows] == [
            ("0", "NVIDIA A100-SXM4-80GB"), ("1", "NVIDIA A100-SXM4-80GB"), ("1 MIG 1", "1g.10gb")
        ]
        assert rows[2][4] == "512.0MiB/9.5GiB"  # the MIG device's own memory
        detail = screen.detail
        assert detail is not None
        # Every default counter dgx-a serves for GPU 0 is on its screen: in a column, or under More.
        served = {name for name, _, _ in default_counters()}
        kept = {DCGM_FIELD_BY_NAME[n].reading if n in DCGM_FIELD_BY_NAME else n for n in served}
        assert kept == set(detail.gpus[0].figures) - {"memory_total"}
        more = more_text(detail.gpus[0])
        assert rows[0][-1] == more
        for words in ("reserved 560.0MiB", "mem clock 1593MHz", "last XID 0", "remapped corr 2", "remap failed no",
                      "DEV_MEMORY_TEMP 66", "DEV_NVLINK_BANDWIDTH_TOTAL 123456", "PROF_PIPE_TENSOR_ACTIVE 0.25"):
            assert words in more, words
        await pilot.press("escape")
        screen = await open_host(pilot, app, "dgx-b")
        assert [r[0] for r in gpu_rows(screen)] == ["0", "1", "2", "3"]
        # The pods sharing its GPUs, as the GPUs' processes.
        assert [(r[0], r[1], r[3], r[4]) for r in process_rows(screen)] == [
            ("0", "pod", "worker", "ml/train-0"), ("0", "pod", "worker", "ml/train-1"),
            ("1", "pod", "worker", "ml/infer-0"), ("1", "pod", "worker", "ml/infer-1"),
            ("2", "pod", "worker", "ml/notebook"),
        ]
        await pilot.press("escape")
        screen = await open_host(pilot, app, "dgx-d")
        # The workload's pod (exported_*), not the exporter's own pod that the scrape labelled it with.
        assert [(r[3], r[4]) for r in process_rows(screen)] == [("t", "ml/train-7")]
        await pilot.press("escape")
        screen = await open_host(pilot, app, "dgx-c:9400")
        assert [r[0] for r in gpu_rows(screen)] == ["0"]


@pytest.mark.skipif(VICTORIA is None, reason="needs VictoriaMetrics: apt-get install -y victoria-metrics")
def test_the_same_fleet_through_victoriametrics(fleet: Fleet) -> None:
    assert VICTORIA is not None
    work = fleet.work / "victoria"
    work.mkdir()
    config = work / "scrape.yml"
    config.write_text("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: gputop\n    honor_labels: true\n"
                      f"    static_configs:\n{fleet.configs}")
    port = free_port()
    log = open(work / "victoria.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [VICTORIA, f"-httpListenAddr=127.0.0.1:{port}", f"-storageDataPath={work / 'data'}",
         f"-promscrape.config={config}", "-search.latencyOffset=0s", "-search.disableCache"],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        def scraped() -> bool | None:
            http_get(f"{url}/internal/force_flush")  # what was scraped is searchable now, not in a few seconds
            body = http_get(f"{url}/api/v1/query?query=count(up%20%3D%3D%201)")
            answer = json.loads(body)["data"]["result"] if body else []
            return True if answer and answer[0]["value"][1] == "5" else None

        wait_for("VictoriaMetrics to scrape every target", scraped, 30)
        http_get(f"{url}/internal/force_flush")
        check_fleet(read(url))
    finally:
        terminate(process)
        log.close()
