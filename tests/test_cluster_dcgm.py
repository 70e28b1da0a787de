"""DCGM's names both ways, through one real Prometheus: NVIDIA's dashboard on ``gputop export``, and the cluster
view on real dcgm-exporter fleets beside gputop hosts (and once through VictoriaMetrics).

The fleet (``tests/prom/dcgm_fleet.py``): ``alpha`` (``--names both``) and ``beta`` (``--names dcgm``)
are real ``gputop export`` processes on the fake driver. The DCGM pages are rendered as
dcgm-exporter renders them (``tests/prom/dcgm_pages.py``): ``dgx-a`` as the 4.x releases
(``Hostname``), one GPU in MIG mode; ``dgx-b`` as main after #655 (``hostname``), a Kubernetes
node whose 4 GPUs are time-shared by 5 pods (``--kubernetes-virtual-gpus``: a series per pod beside
each device's); ``dgx-c`` with ``--no-hostname`` (its ``instance`` names it); ``dgx-d`` scraped
without ``honor_labels`` by a target with pod labels of its own, so its workload's are ``exported_*``.

NVIDIA's dashboard (``tests/prom/dcgm/``, see SOURCE.md there): each panel query is evaluated
through the HTTP API with the template variables expanded as Grafana expands them, and compared
with the scenarios' values; the variables' own queries must list every host and GPU.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fakenvml.scenario import GiB, Scenario
from prom import PROMETHEUS, SKIP_REASON, PrometheusServer, free_port, http_get, terminate, wait_for
from prom.dcgm_fleet import Host, scrape_configs, serve_pages, start
from prom.dcgm_pages import DcgmGpu, default_counters, render
from textual.pilot import Pilot

from gputop.core.cluster.model import ClusterHost, ClusterOptions, ClusterState
from gputop.core.cluster.reader import ClusterReader
from gputop.core.output import metric_names, monitoring
from gputop.core.output.metric_names import DCGM_FIELD_BY_NAME
from gputop.ui.cluster.host_screen import HostScreen, more_text
from gputop.ui.cluster.view import ClusterApp

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)
VICTORIA = shutil.which("victoria-metrics")

DCGM_DIR = Path(__file__).parent / "prom" / "dcgm"
DASHBOARD = json.loads((DCGM_DIR / "dcgm-exporter-dashboard.json").read_text())
# Fields of default-counters.csv that wait for readings gputop does not take yet: the activity
# issue's profiling fields and energy counter, NVLink, and the readings below (PCIe replays,
# memory temperature, vGPU licence). Each becomes one row of metric_names.DCGM_FIELDS.
NOT_YET = {
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "DCGM_FI_PROF_DRAM_ACTIVE",
    "DCGM_FI_PROF_PCIE_TX_BYTES",
    "DCGM_FI_PROF_PCIE_RX_BYTES",
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
    "DCGM_FI_DEV_MEMORY_TEMP",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
}
MIB = 1024**2

# What the fake driver reports (NVML's units: mW, MHz, %, bytes).
ALPHA = (
    Scenario()
    .gpu(temperature=61, power_mw=312_500, clock_sm=1410, util_gpu=87, memory_used=30 * GiB)
    .gpu(temperature=44, power_mw=98_000, clock_sm=1980, util_gpu=12, memory_used=10 * GiB, mig_mode=1)
    .mig(gpu=1, slot=0, memory_used=2 * GiB)
)
BETA = Scenario().gpu(name="NVIDIA A100-SXM4-40GB", temperature=52, power_mw=250_000, clock_sm=1095,
                      util_gpu=100, memory_total=40 * GiB, memory_used=39 * GiB)


GIB_MIB = 1024


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


@dataclass
class Fleet:
    hosts: list[Host]  # alpha, beta
    prometheus: PrometheusServer
    work: Path
    configs: str

    def get(self, path: str, **params: str) -> Any:
        body = http_get(f"{self.prometheus.url}{path}?" + urllib.parse.urlencode(params))
        assert body is not None, path
        return json.loads(body)["data"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fleet]:
    work = tmp_path_factory.mktemp("dcgm")
    pages = serve_pages(PAGES)
    hosts: list[Host] = []
    prometheus = None
    try:
        hosts.append(start("alpha", ALPHA, "both", work))
        hosts.append(start("beta", BETA, "dcgm", work))
        configs = scrape_configs(pages.server_address[1], ["dgx-a", "dgx-b", "dgx-c"], [h.instance for h in hosts],
                                 ["dgx-d"])
        prometheus = PrometheusServer(work, static_configs=configs)
        for host in hosts:
            host.first_sample()
        wait_for("every target scraped", lambda: prometheus.query("count(up == 1) == 6") or None, 30)
        yield Fleet(hosts, prometheus, work, configs)
    finally:
        for host in hosts:
            host.stop()
        pages.shutdown()
        if prometheus is not None:
            prometheus.stop()


def grafana_all(values: list[str]) -> str:
    """A multi-value variable set to "All" (no allValue), as Grafana writes it into a Prometheus query."""
    return "(" + "|".join(re.sub(r"([\\^$*+?.()|{}\[\]])", r"\\\\\1", v) for v in values) + ")"


def label_values(fleet: Fleet, definition: str) -> list[str]:
    """Grafana's ``label_values(METRIC, LABEL)`` through the API Grafana calls for it."""
    match = re.fullmatch(r"label_values\((\w+), *(\w+)\)", definition)
    assert match is not None, definition
    metric, label = match.groups()
    values: list[str] = fleet.get(f"/api/v1/label/{label}/values", **{"match[]": metric})
    return values


def variables(fleet: Fleet) -> dict[str, list[str]]:
    return {
        v["name"]: label_values(fleet, v["definition"]) for v in DASHBOARD["templating"]["list"] if v["type"] == "query"
    }


def panel_results(fleet: Fleet) -> dict[str, list[dict[str, Any]]]:
    """Each panel's title -> its query's result: the instances alpha and beta chosen, every GPU."""
    chosen = {"instance": grafana_all([h.instance for h in fleet.hosts]), "gpu": grafana_all(variables(fleet)["gpu"])}
    results = {}
    for panel in DASHBOARD["panels"]:
        for target in panel.get("targets", []):
            expr = re.sub(r"\$(\w+)", lambda m: chosen[m.group(1)], target["expr"])
            results[panel["title"]] = fleet.get("/api/v1/query", query=expr)["result"]
    return results


def by_gpu(result: list[dict[str, Any]]) -> dict[tuple[str, str, str], float]:
    return {
        (r["metric"]["Hostname"], r["metric"]["gpu"], r["metric"].get("GPU_I_ID", "")): float(r["value"][1])
        for r in result
    }


def expected(pick: Any) -> dict[tuple[str, str, str], float]:
    return {
        (name, str(index), ""): float(pick(gpu))
        for name, scenario in (("alpha", ALPHA), ("beta", BETA))
        for index, gpu in enumerate(scenario.gpus)
    }


def test_the_template_variables_list_every_host_and_gpu(fleet: Fleet) -> None:
    assert variables(fleet) == {
        "instance": sorted([h.instance for h in fleet.hosts] + [f"dgx-{x}:9400" for x in "abcd"]),
        "gpu": ["0", "1", "2", "3"],
    }


def test_every_panel_of_nvidias_dashboard_shows_the_scenarios_values(fleet: Fleet) -> None:
    panels = panel_results(fleet)
    assert by_gpu(panels["GPU Temperature"]) == expected(lambda g: g.temperature)
    assert float(panels["GPU Avg. Temp"][0]["value"][1]) == pytest.approx((61 + 44 + 52) / 3)
    assert by_gpu(panels["GPU Power Usage"]) == expected(lambda g: g.power_mw / 1000)
    assert float(panels["GPU Power Total"][0]["value"][1]) == pytest.approx(312.5 + 98.0 + 250.0)
    assert by_gpu(panels["GPU SM Clocks"]) == expected(lambda g: g.clock_sm * 1_000_000)
    assert by_gpu(panels["GPU Utilization"]) == expected(lambda g: g.util_gpu)
    # MiB, as DCGM gives it; alpha's GPU 1 is in MIG mode: its MIG device is a series of its own.
    assert by_gpu(panels["GPU Framebuffer Mem Used"]) == {
        **expected(lambda g: g.memory_used / MIB),
        ("alpha", "1", "1"): 2048.0,
    }
    # The one panel whose field gputop does not read yet (the activity issue's) shows nothing, not a 0.
    assert panels["Tensor Core Utilization"] == []
    assert set(panels) == {
        "GPU Temperature", "GPU Avg. Temp", "GPU Power Usage", "GPU Power Total", "GPU SM Clocks",
        "GPU Utilization", "GPU Framebuffer Mem Used", "Tensor Core Utilization",
    }


def test_series_carry_dcgm_exporters_labels(fleet: Fleet) -> None:
    [series] = fleet.prometheus.query('DCGM_FI_DEV_GPU_TEMP{Hostname="beta"}')
    labels = series["metric"]
    assert labels == {
        "__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0", "UUID": "GPU-00000000-0000-4000-8000-fa4e00000000",
        "pci_bus_id": "00000000:18:00.0", "device": "nvidia0", "modelName": "NVIDIA A100-SXM4-40GB",
        "Hostname": "beta", "DCGM_FI_DRIVER_VERSION": "550.54.15", "instance": fleet.hosts[1].instance,
        "job": "gputop",
    }
    [mig] = fleet.prometheus.query('DCGM_FI_DEV_FB_USED{GPU_I_ID!="",Hostname="alpha"}')
    assert (mig["metric"]["GPU_I_PROFILE"], mig["metric"]["GPU_I_ID"], mig["metric"]["gpu"]) == ("1g.10gb", "1", "1")
    # beside gputop's own names the series say so (the cluster view reads such a host by gputop's names).
    assert mig["metric"]["exporter"] == "gputop"


def test_every_default_counter_is_served_or_named_as_not_yet() -> None:
    defaults = [
        line.split(",")[0].strip()
        for line in (DCGM_DIR / "default-counters.csv").read_text().splitlines()
        if line.strip() and not line.startswith("#") and line.split(",")[1].strip() != "label"
    ]
    served = set(metric_names.DCGM_FIELD_BY_NAME)
    assert sorted(set(defaults) - served) == sorted(NOT_YET)
    assert not NOT_YET & served  # a field added to the table is checked above, not excused here


@pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool (Debian's prometheus package)")
@pytest.mark.parametrize("host", [0, 1], ids=["both", "dcgm"])
def test_promtool_check_metrics_passes_on_each_name_set(fleet: Fleet, host: int) -> None:
    """promtool's one complaint is about DCGM's own contract: its ``modelName`` label, which dashboards read."""
    text = fleet.hosts[host].text()
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    complaints = (result.stdout + result.stderr).splitlines()
    assert result.returncode == 3 and complaints  # 3: lint problems only (1 would be text it cannot parse)
    assert {line.split(" ", 1)[1] for line in complaints} == {
        "label names should be written in 'snake_case' not 'camelCase'"
    }
    assert {line.split(" ", 1)[0] for line in complaints} == {f.name for f in metric_names.DCGM_FIELDS
                                                              if f"{f.name}{{" in text}
    renamed = subprocess.run(["promtool", "check", "metrics"], input=text.replace("modelName=", "model_name="),
                             capture_output=True, text=True)
    assert (renamed.returncode, renamed.stdout + renamed.stderr) == (0, "")


def test_gputops_own_dashboard_answers_on_the_hosts_serving_gputops_names(fleet: Fleet) -> None:
    """Every query of the shipped dashboard runs; its memory panel shows alpha's GPUs (beta serves DCGM's alone)."""
    dashboard = json.loads(monitoring.read(monitoring.DASHBOARD))
    [variable] = [v for v in dashboard["templating"]["list"] if v["type"] == "query"]
    hostnames = label_values(fleet, variable["definition"])
    assert hostnames == ["alpha"]
    answers = {}
    for panel in dashboard["panels"]:
        [target] = panel["targets"]
        expr = target["expr"].replace("$hostname", grafana_all(hostnames))
        answers[panel["title"]] = fleet.get("/api/v1/query", query=expr)["result"]  # an invalid query fails here
    assert {(r["metric"]["gpu"], float(r["value"][1])) for r in answers["GPU memory used"]} == {
        ("0", 30.0 * GiB), ("1", 10.0 * GiB)
    }
    assert [float(r["value"][1]) for r in answers["Exporters sampling"]] == [1.0]
    assert {(r["metric"]["gpu"], float(r["value"][1])) for r in answers["GPUs not answering or lost"]} == {
        ("0", 0.0), ("1", 0.0)
    }


def read(url: str) -> ClusterState:
    return ClusterReader(ClusterOptions.create(url, interval_s=5)).fetch()


def by_name(state: ClusterState) -> dict[str, ClusterHost]:
    return {host.hostname: host for host in state.hosts}


def check_fleet(state: ClusterState) -> None:
    hosts = by_name(state)
    assert sorted(hosts) == ["alpha", "beta", "dgx-a", "dgx-b", "dgx-c:9400", "dgx-d"]
    assert {name: host.flavour for name, host in hosts.items()} == {
        "alpha": "gputop", "beta": "dcgm", "dgx-a": "dcgm", "dgx-b": "dcgm", "dgx-c:9400": "dcgm", "dgx-d": "dcgm"
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
    # gputop's own names for alpha: 2 GPUs, not 4 (its DCGM series say they are gputop's); beta by DCGM's.
    assert (hosts["alpha"].gpus, hosts["alpha"].memory_used) == (2, 40 * GiB)
    assert (hosts["beta"].gpus, hosts["beta"].memory_used, hosts["beta"].memory_total) == (1, 39 * GiB, 40 * GiB)


def test_dcgm_hosts_of_every_spelling_and_gputop_hosts_side_by_side(fleet: Fleet) -> None:
    check_fleet(read(fleet.prometheus.url))
    # --hosts matches whichever label names a DCGM host: hostname (dgx-b), instance (dgx-c), Hostname (beta).
    chosen = ClusterReader(ClusterOptions.create(fleet.prometheus.url, hosts="dgx-b|dgx-c.*|beta")).fetch()
    assert [(h.hostname, h.gpus) for h in chosen.hosts] == [("beta", 1), ("dgx-b", 4), ("dgx-c:9400", 1)]


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
        await until(pilot, "the hosts", lambda: len(app.host_list.hosts) == 6)
        rows = {line.split()[0]: line.split() for line in (app.host_list.line(i).plain for i in range(6))}
        # Each row as drawn: state, GPUs, then utilization, hottest GPU and power (dgx-b's pods not counted).
        assert {name: (row[1], row[2], *row[-4:-1]) for name, row in rows.items()} == {
            "alpha": ("live", "2", "50%", "61°C", "410W"), "beta": ("live", "1", "100%", "52°C", "250W"),
            "dgx-a": ("live", "2", "48%", "71°C", "450W"), "dgx-b": ("live", "4", "50%", "60°C", "1200W"),
            "dgx-c:9400": ("live", "1", "5%", "40°C", "90W"), "dgx-d": ("live", "1", "80%", "55°C", "250W"),
        }
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
            return True if answer and answer[0]["value"][1] == "6" else None

        wait_for("VictoriaMetrics to scrape every target", scraped, 30)
        http_get(f"{url}/internal/force_flush")
        check_fleet(read(url))
    finally:
        terminate(process)
        log.close()
