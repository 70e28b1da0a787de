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
from gputop.ui.cluster.host_screen import GPU_COLUMNS, HostScreen, more_text
from gputop.ui.cluster.view import ClusterApp

pytestmark = pytest.mark.skipif(PROMETHEUS is None, reason=SKIP_REASON)
VICTORIA = shutil.which("victoria-metrics")

DCGM_DIR = Path(__file__).parent / "prom" / "dcgm"
DASHBOARD = json.loads((DCGM_DIR / "dcgm-exporter-dashboard.json").read_text())
# Fields of default-counters.csv that gputop does not serve, each for a reason: NVLink's bandwidth counter
# (DCGM does not document its unit; the rates are DCGM_FI_PROF_NVLINK_*_BYTES); the vGPU licence (only a
# vGPU guest has one, and NVML answers it through the vGPU calls a bare-metal GPU does not have).
NOT_SERVED = {
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
}
# The profiling fields default-counters.csv lists commented out, enabled on dgx-a as a user enables them.
PROFILING = frozenset({"DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY"})
MIB = 1024**2

# What the fake driver reports (NVML's units: mW, MHz, %, bytes; GPM's %, MiB/s; energy in mJ).
HOPPER = dict(gpm=1, sm_occupancy=21, dram_active=85, fp64_active=0, fp32_active=8, fp16_active=3,
              gpm_pcie_rx_mibs=512, gpm_pcie_tx_mibs=64, gpm_nvlink_rx_mibs=2048, gpm_nvlink_tx_mibs=1024,
              energy_mj=3_600_000_123, pcie_gen=4, pcie_gen_max=5, pcie_width=16, pcie_width_max=16,
              nvlink_count=18, nvlink_version=4, nvlink_down=1 << 5, nvlink_crc=7, nvlink_replay=0, nvlink_recovery=1,
              nvlink_error_link=11, graphics_active=88, memory_temp=63, pcie_replay=2)
ALPHA = (
    Scenario()
    .gpu(temperature=61, power_mw=312_500, clock_sm=1410, util_gpu=87, memory_used=30 * GiB, sm_active=34,
         tensor_active=5, **HOPPER)
    .gpu(temperature=44, power_mw=98_000, clock_sm=1980, util_gpu=12, memory_used=10 * GiB, mig_mode=1, gpm=1)
    .mig(gpu=1, slot=0, memory_used=2 * GiB, sm_active=80, tensor_active=40)
    # A job holding memory on GPU 0: a verdict needs one (where nothing runs, nothing is memory-bound).
    .process(gpu=0, pid=4_000_001, used=28 * GiB)
)
BETA = Scenario().gpu(name="NVIDIA A100-SXM4-40GB", temperature=52, power_mw=250_000, clock_sm=1095,
                      util_gpu=100, memory_total=40 * GiB, memory_used=39 * GiB, gpm=1, sm_active=90,
                      tensor_active=70)


GIB_MIB = 1024


def fields(used_gib: float, util: int, temp: int, power: float, reserved_mib: int = 0) -> dict[str, float]:
    """Every default counter of an 80 GiB GPU (framebuffer in MiB, as DCGM gives it)."""
    used = used_gib * GIB_MIB
    return {
        "DCGM_FI_DEV_SM_CLOCK": 1410, "DCGM_FI_DEV_MEM_CLOCK": 1593, "DCGM_FI_DEV_MEMORY_TEMP": temp - 5,
        "DCGM_FI_DEV_GPU_TEMP": temp, "DCGM_FI_DEV_POWER_USAGE": power,
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 9e9,
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": 0,
        "DCGM_FI_PROF_SM_ACTIVE": round(util * 0.35) / 100, "DCGM_FI_PROF_SM_OCCUPANCY": 0.21,
        "DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_MEM_COPY_UTIL": util // 2,
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
        DcgmGpu(1, {"DCGM_FI_DEV_FB_USED": 512, "DCGM_FI_DEV_FB_FREE": 9216, "DCGM_FI_PROF_SM_ACTIVE": 0.8},
                mig_profile="1g.10gb", mig_instance=1),
    ], host_label="Hostname", uncommented=PROFILING),
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
        # A sample a second: GPM's figures are those between two samples.
        hosts.append(start("alpha", ALPHA, "both", work, interval_s=1))
        hosts.append(start("beta", BETA, "dcgm", work, interval_s=1))
        configs = scrape_configs(pages.server_address[1], ["dgx-a", "dgx-b", "dgx-c"], [h.instance for h in hosts],
                                 ["dgx-d"])
        prometheus = PrometheusServer(work, static_configs=configs)
        for host in hosts:
            host.first_sample("DCGM_FI_PROF_SM_ACTIVE")
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
    # GPM's tensor activity as DCGM's ratio, and the MIG device's own; alpha's GPU 1 reports no figure of
    # its own (the fake driver's GPM gives none): no series, not a 0.
    assert by_gpu(panels["Tensor Core Utilization"]) == {
        ("alpha", "0", ""): 0.05, ("alpha", "1", "1"): 0.4, ("beta", "0", ""): 0.7
    }
    assert set(panels) == {
        "GPU Temperature", "GPU Avg. Temp", "GPU Power Usage", "GPU Power Total", "GPU SM Clocks",
        "GPU Utilization", "GPU Framebuffer Mem Used", "Tensor Core Utilization",
    }


def test_activity_energy_nvlink_and_the_pcie_link_reach_prometheus_as_the_driver_gives_them(fleet: Fleet) -> None:
    dcgm = fleet.prometheus.query('{__name__=~"DCGM_FI_PROF_.+|DCGM_FI_DEV_(TOTAL_ENERGY|NVLINK).+",Hostname="alpha",'
                                  'gpu="0"}')
    assert {r["metric"]["__name__"]: float(r["value"][1]) for r in dcgm} == {
        # GPM's percent as DCGM's ratios, its MiB/s as bytes/s, the energy counter in mJ.
        "DCGM_FI_PROF_SM_ACTIVE": 0.34, "DCGM_FI_PROF_SM_OCCUPANCY": 0.21, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": 0.05,
        "DCGM_FI_PROF_DRAM_ACTIVE": 0.85, "DCGM_FI_PROF_PIPE_FP64_ACTIVE": 0.0, "DCGM_FI_PROF_PIPE_FP32_ACTIVE": 0.08,
        "DCGM_FI_PROF_PIPE_FP16_ACTIVE": 0.03, "DCGM_FI_PROF_PCIE_RX_BYTES": 512.0 * MIB,
        "DCGM_FI_PROF_PCIE_TX_BYTES": 64.0 * MIB, "DCGM_FI_PROF_NVLINK_RX_BYTES": 2048.0 * MIB,
        "DCGM_FI_PROF_NVLINK_TX_BYTES": 1024.0 * MIB, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": 3_600_000_123.0,
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL": 7.0, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL": 0.0,
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL": 1.0, "DCGM_FI_PROF_GR_ENGINE_ACTIVE": 0.88,
    }
    # The memory's own sensor (°C) and the PCIe replay counter, from the tick's field-value batch.
    health = fleet.prometheus.query('{__name__=~"DCGM_FI_DEV_(MEMORY_TEMP|PCIE_REPLAY_COUNTER)",Hostname="alpha"}')
    assert {(r["metric"]["__name__"], r["metric"]["gpu"]): float(r["value"][1]) for r in health} == {
        ("DCGM_FI_DEV_MEMORY_TEMP", "0"): 63.0, ("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "0"): 2.0,
    }
    own = fleet.prometheus.query('{__name__=~"gputop_gpu_(nvlink|pcie_link|energy|verdict).*",hostname="alpha",'
                                 'gpu="0"}')
    assert {(r["metric"]["__name__"].removeprefix("gputop_gpu_"), r["metric"].get("verdict")): float(r["value"][1])
            for r in own} == {
        ("nvlink_links_active", None): 17.0, ("nvlink_links_present", None): 18.0, ("nvlink_version", None): 4.0,
        ("pcie_link_generation", None): 4.0, ("pcie_link_generation_max", None): 5.0,
        ("pcie_link_width", None): 16.0, ("pcie_link_width_max", None): 16.0,
        ("energy_since_start_joules", None): 0.0,  # the fake's counter stands still
        # DRAM at 85 % while the tensor and FP pipes are at 10 % or less.
        ("verdict", "memory_bound"): 1.0, ("verdict", "busy_few_sms"): 0.0, ("verdict", "stalled"): 0.0,
        ("verdict", "throttled"): 0.0,
    }
    # A MIG device's own activity, with its instance's labels; nothing it does not give.
    mig = fleet.prometheus.query('{__name__=~"DCGM_FI_PROF_.+",Hostname="alpha",GPU_I_ID="1"}')
    assert {(r["metric"]["__name__"], r["metric"]["GPU_I_PROFILE"]): float(r["value"][1]) for r in mig} == {
        ("DCGM_FI_PROF_SM_ACTIVE", "1g.10gb"): 0.8, ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "1g.10gb"): 0.4,
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


def test_every_default_counter_is_served_or_named_as_not_served() -> None:
    defaults = [
        line.split(",")[0].strip()
        for line in (DCGM_DIR / "default-counters.csv").read_text().splitlines()
        if line.strip() and not line.startswith("#") and line.split(",")[1].strip() != "label"
    ]
    served = set(metric_names.DCGM_FIELD_BY_NAME)
    assert sorted(set(defaults) - served) == sorted(NOT_SERVED)
    assert not NOT_SERVED & served  # a field added to the table is checked above, not excused here


@pytest.mark.skipif(shutil.which("promtool") is None, reason="needs promtool (Debian's prometheus package)")
@pytest.mark.parametrize("host", [0, 1], ids=["both", "dcgm"])
def test_promtool_check_metrics_passes_on_each_name_set(fleet: Fleet, host: int) -> None:
    """promtool's complaints are about DCGM's own contract, which dashboards read: its ``modelName`` label,
    and the name ``DCGM_FI_DEV_PCIE_REPLAY_COUNTER`` (alpha serves it, beta's GPU has no replay counter)."""
    text = fleet.hosts[host].text()
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    complaints = (result.stdout + result.stderr).splitlines()
    assert result.returncode == 3 and complaints  # 3: lint problems only (1 would be text it cannot parse)
    camel = "label names should be written in 'snake_case' not 'camelCase'"
    replay = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"
    served = {f.name for f in metric_names.DCGM_FIELDS if f"{f.name}{{" in text}
    assert (replay in served) == (host == 0)
    expected = {(name, camel) for name in served}
    if replay in served:
        expected.add((replay, "metric name should not include type 'counter'"))
    assert {tuple(line.split(" ", 1)) for line in complaints} == expected
    snake = text.replace("modelName=", "model_name=").replace(replay, "DCGM_FI_DEV_PCIE_REPLAYS")
    renamed = subprocess.run(["promtool", "check", "metrics"], input=snake, capture_output=True, text=True)
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
    await pilot.press("home", *["down"] * [h.hostname for h in app.fleet.host_list.hosts].index(hostname), "enter")
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
        await until(pilot, "the hosts", lambda: len(app.fleet.host_list.hosts) == 6)
        # Every figure of the first refresh in (the hosts come first, each figure as Prometheus answers it).
        await until(pilot, "the whole first refresh", lambda: app.state is not None and not app.state.pending)
        await pilot.pause()
        rows = {line.split()[0]: line.split() for line in (app.fleet.host_list.line(i).plain for i in range(6))}
        # Each row as drawn: state, GPUs, then utilization, hottest GPU and power (dgx-b's pods not counted).
        heat = {name: next(i for i, cell in enumerate(row) if cell.endswith("°C")) for name, row in rows.items()}
        assert {name: (row[1], row[2], *row[heat[name] - 1:heat[name] + 2]) for name, row in rows.items()} == {
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
        served = {name for name, _, _ in default_counters(PROFILING)}
        kept = {DCGM_FIELD_BY_NAME[n].reading if n in DCGM_FIELD_BY_NAME else n for n in served}
        assert kept == set(detail.gpus[0].figures) - {"memory_total"}
        more = more_text(detail.gpus[0])
        assert rows[0][-1] == more
        for words in ("reserved 560.0MiB", "mem clock 1593MHz", "last XID 0", "remapped corr 2", "remap failed no",
                      "mem temp 66°C", "DEV_NVLINK_BANDWIDTH_TOTAL 123456", "GR active 97%", "PCIe replays 0",
                      "occupancy 21%", "PCIe rx 1.9MiB/s", "energy 2.50 kWh"):
            assert words in more, words
        # What the SMs, tensor cores and memory did (DCGM_FI_PROF_*), the MIG device's own SM activity.
        activity = GPU_COLUMNS.index("SM/Tensor/DRAM")
        assert [r[activity] for r in rows] == ["34%/25%/50%", "0%/25%/50%", "80%/N/A/N/A"]
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
        await pilot.press("escape")
        # A gputop host: its activity (served by DCGM's names beside its own), its MIG device's, its verdict.
        screen = await open_host(pilot, app, "alpha")
        rows = gpu_rows(screen)
        assert [(r[0], r[activity]) for r in rows] == [("0", "34%/5%/85%"), ("1", "N/A"), ("1 MIG 1", "80%/40%/N/A")]
        assert rows[2][4] == "2.0GiB/10.0GiB"
        assert rows[0][-1].startswith("MEMORY-BOUND · ")
        for words in ("PCIe gen 4", "max gen 5", "links up 17", "links 18", "NVLink CRC 7", "energy 1.00 kWh",
                      "since start 0.0 Wh", "FP32 8%", "mem temp 63°C", "PCIe replays 2", "GR active 88%"):
            assert words in rows[0][-1], words


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
