"""``gputop export``: the exact /metrics text for a snapshot built by hand, and the CLI's errors."""
# ruff: noqa: E501 - the expected /metrics text is compared line for line, long lines included

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import replace

import pytest
from prom import fleet
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from ui.factory import StaticSource

from gputop import __version__
from gputop.core.model import (
    Activity,
    Energy,
    GpuHealth,
    GpuSample,
    HostSample,
    MigSample,
    NvLink,
    ProcessSample,
    Snapshot,
    XidEvent,
)
from gputop.core.output.exporter import Exporter, ListenError, SnapshotCollector, make_registry, parse_listen
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_json import dumps, snapshot_to_dict
from gputop.core.sampler import Sampler
from gputop.core.settings import Thresholds
from gputop.core.sources.demo import DemoSource

GIB = 1024**3

GPU0 = GpuSample(
    index=0,
    name="NVIDIA H100 80GB HBM3",
    uuid="GPU-aaaa",
    memory_total=80 * GIB,
    memory_used=60 * GIB,
    memory_free=20 * GIB,
    utilization_gpu=87.0,
    temperature=71.0,
    power_draw=612.5,
    power_limit=700.0,
    # GPM's figures are served by DCGM's names only (DCGM_FI_PROF_*): none of them below.
    activity=Activity(sm_active=22.0, tensor_active=3.0),
    energy=Energy(since_driver_load_j=9_000_000.0, since_start_j=4321.5),
    nvlink=NvLink(version=4, links_active=17, links_total=18, errors_crc=0),
    pcie_link_gen=4,
    pcie_link_gen_max=5,
    pcie_link_width=8,
    pcie_link_width_max=16,
    processes=(
        ProcessSample(
            pid=101, gpu_index=0, type="C", gpu_memory=40 * GIB, user="alice", name="python", container="k8s:pod-1"
        ),
        # Compute and graphics lists can both name a process: one series, memory added up.
        ProcessSample(pid=101, gpu_index=0, type="G", gpu_memory=1 * GIB, user="alice", name="python",
                      container="k8s:pod-1"),
        ProcessSample(pid=102, gpu_index=0, type="C", gpu_memory=2 * GIB, user="mallory",
                      name='evil"name\\with\nnewline'),
        # NVML gave no memory figure: no sample, never 0.
        ProcessSample(pid=103, gpu_index=0, type="C", gpu_memory=None, user="bob", name="idle"),
    ),
)
GPU1 = GpuSample(index=1, name="NVIDIA A100-SXM4-40GB", uuid="GPU-bbbb", lost=True)
GPU2 = GpuSample(
    index=2,
    name=None,
    uuid=None,
    memory_total=40 * GIB,
    memory_used=5 * GIB,
    mig_devices=(
        MigSample(
            index=0,
            processes=(ProcessSample(pid=104, gpu_index=2, type="C", gpu_memory=3 * GIB, mig_index=0),),
        ),
    ),
)
SNAPSHOT = Snapshot(
    timestamp=1700000000.5,
    hostname="node-1",
    host=HostSample(),
    gpus=(GPU0, GPU1, GPU2),
    driver_version="560.35.03",
    cuda_driver_version="12.6",
    source="nvml",
)

GPU0_LABELS = 'gpu="0",hostname="node-1",name="NVIDIA H100 80GB HBM3",uuid="GPU-aaaa"'
GPU1_LABELS = 'gpu="1",hostname="node-1",name="NVIDIA A100-SXM4-40GB",uuid="GPU-bbbb"'
GPU2_LABELS = 'gpu="2",hostname="node-1",name="",uuid=""'

EXPECTED = f"""\
# HELP gputop_up 1 when the latest sample succeeded, 0 when it failed.
# TYPE gputop_up gauge
gputop_up{{hostname="node-1"}} 1.0
# HELP gputop_sample_errors_total Samples that failed since the exporter started.
# TYPE gputop_sample_errors_total counter
gputop_sample_errors_total{{hostname="node-1"}} 0.0
# HELP gputop_exporter_info The exporter and the driver it reads.
# TYPE gputop_exporter_info gauge
gputop_exporter_info{{cuda_driver_version="12.6",driver_version="560.35.03",hostname="node-1",source="nvml",version="{__version__}"}} 1.0
# HELP gputop_last_sample_timestamp_seconds When the served sample was taken.
# TYPE gputop_last_sample_timestamp_seconds gauge
gputop_last_sample_timestamp_seconds{{hostname="node-1"}} 1.7000000005e+09
# HELP gputop_gpu_memory_total_bytes Total GPU memory.
# TYPE gputop_gpu_memory_total_bytes gauge
gputop_gpu_memory_total_bytes{{{GPU0_LABELS}}} 8.589934592e+10
gputop_gpu_memory_total_bytes{{{GPU2_LABELS}}} 4.294967296e+10
# HELP gputop_gpu_memory_used_bytes GPU memory in use.
# TYPE gputop_gpu_memory_used_bytes gauge
gputop_gpu_memory_used_bytes{{{GPU0_LABELS}}} 6.442450944e+10
gputop_gpu_memory_used_bytes{{{GPU2_LABELS}}} 5.36870912e+09
# HELP gputop_gpu_memory_free_bytes GPU memory free.
# TYPE gputop_gpu_memory_free_bytes gauge
gputop_gpu_memory_free_bytes{{{GPU0_LABELS}}} 2.147483648e+10
# HELP gputop_gpu_utilization_ratio Fraction of the last sample period in which a kernel ran (0-1).
# TYPE gputop_gpu_utilization_ratio gauge
gputop_gpu_utilization_ratio{{{GPU0_LABELS}}} 0.87
# HELP gputop_gpu_memory_utilization_ratio Fraction of the last sample period in which GPU memory was read or written (0-1).
# TYPE gputop_gpu_memory_utilization_ratio gauge
# HELP gputop_gpu_temperature_celsius GPU core temperature.
# TYPE gputop_gpu_temperature_celsius gauge
gputop_gpu_temperature_celsius{{{GPU0_LABELS}}} 71.0
# HELP gputop_gpu_temperature_slowdown_celsius Temperature at which the GPU starts to slow itself down.
# TYPE gputop_gpu_temperature_slowdown_celsius gauge
# HELP gputop_gpu_temperature_shutdown_celsius Temperature at which the GPU shuts down.
# TYPE gputop_gpu_temperature_shutdown_celsius gauge
# HELP gputop_gpu_power_watts Power draw.
# TYPE gputop_gpu_power_watts gauge
gputop_gpu_power_watts{{{GPU0_LABELS}}} 612.5
# HELP gputop_gpu_power_limit_watts Enforced power limit.
# TYPE gputop_gpu_power_limit_watts gauge
gputop_gpu_power_limit_watts{{{GPU0_LABELS}}} 700.0
# HELP gputop_gpu_fan_speed_ratio Fan speed as a fraction of its maximum (0-1).
# TYPE gputop_gpu_fan_speed_ratio gauge
# HELP gputop_gpu_sm_clock_hertz SM clock.
# TYPE gputop_gpu_sm_clock_hertz gauge
# HELP gputop_gpu_memory_clock_hertz Memory clock.
# TYPE gputop_gpu_memory_clock_hertz gauge
# HELP gputop_gpu_sm_clock_max_hertz Maximum SM clock.
# TYPE gputop_gpu_sm_clock_max_hertz gauge
# HELP gputop_gpu_energy_since_start_joules Energy the GPU used since gputop started.
# TYPE gputop_gpu_energy_since_start_joules gauge
gputop_gpu_energy_since_start_joules{{{GPU0_LABELS}}} 4321.5
# HELP gputop_gpu_nvlink_links_active NVLink links up.
# TYPE gputop_gpu_nvlink_links_active gauge
gputop_gpu_nvlink_links_active{{{GPU0_LABELS}}} 17.0
# HELP gputop_gpu_nvlink_links_present NVLink links the GPU has.
# TYPE gputop_gpu_nvlink_links_present gauge
gputop_gpu_nvlink_links_present{{{GPU0_LABELS}}} 18.0
# HELP gputop_gpu_nvlink_version NVLink version.
# TYPE gputop_gpu_nvlink_version gauge
gputop_gpu_nvlink_version{{{GPU0_LABELS}}} 4.0
# HELP gputop_gpu_pcie_link_generation PCIe link generation now.
# TYPE gputop_gpu_pcie_link_generation gauge
gputop_gpu_pcie_link_generation{{{GPU0_LABELS}}} 4.0
# HELP gputop_gpu_pcie_link_generation_max PCIe link generation the GPU and its slot can do.
# TYPE gputop_gpu_pcie_link_generation_max gauge
gputop_gpu_pcie_link_generation_max{{{GPU0_LABELS}}} 5.0
# HELP gputop_gpu_pcie_link_width PCIe link width (lanes) now.
# TYPE gputop_gpu_pcie_link_width gauge
gputop_gpu_pcie_link_width{{{GPU0_LABELS}}} 8.0
# HELP gputop_gpu_pcie_link_width_max PCIe link width the GPU and its slot can do.
# TYPE gputop_gpu_pcie_link_width_max gauge
gputop_gpu_pcie_link_width_max{{{GPU0_LABELS}}} 16.0
# HELP gputop_gpu_seconds_to_full Forecast seconds until GPU memory is full at the current growth; \
absent when no growth is forecast.
# TYPE gputop_gpu_seconds_to_full gauge
gputop_gpu_seconds_to_full{{{GPU0_LABELS}}} 312.0
# HELP gputop_gpu_lost 1 when the GPU has fallen off the bus.
# TYPE gputop_gpu_lost gauge
gputop_gpu_lost{{{GPU0_LABELS}}} 0.0
gputop_gpu_lost{{{GPU1_LABELS}}} 1.0
gputop_gpu_lost{{{GPU2_LABELS}}} 0.0
# HELP gputop_gpu_answering 0 while a driver call to the GPU has not come back within the deadline \
(its figures are then left out).
# TYPE gputop_gpu_answering gauge
gputop_gpu_answering{{{GPU0_LABELS}}} 1.0
gputop_gpu_answering{{{GPU1_LABELS}}} 1.0
gputop_gpu_answering{{{GPU2_LABELS}}} 1.0
# HELP gputop_gpu_verdict 1 for the GPU's verdict (throttled, stalled, busy_few_sms, memory_bound), else 0.
# TYPE gputop_gpu_verdict gauge
# HELP gputop_host_gpus The host's GPUs of each model, lost (1) or not (0).
# TYPE gputop_host_gpus gauge
gputop_host_gpus{{hostname="node-1",lost="0",name=""}} 1.0
gputop_host_gpus{{hostname="node-1",lost="1",name="NVIDIA A100-SXM4-40GB"}} 1.0
gputop_host_gpus{{hostname="node-1",lost="0",name="NVIDIA H100 80GB HBM3"}} 1.0
# HELP gputop_host_memory_used_bytes GPU memory in use, all the host's GPUs together.
# TYPE gputop_host_memory_used_bytes gauge
gputop_host_memory_used_bytes{{hostname="node-1"}} 6.979321856e+10
# HELP gputop_host_memory_total_bytes GPU memory, all the host's GPUs together.
# TYPE gputop_host_memory_total_bytes gauge
gputop_host_memory_total_bytes{{hostname="node-1"}} 1.2884901888e+11
# HELP gputop_host_memory_fullest_ratio The fullest GPU's memory in use over its size (0-1).
# TYPE gputop_host_memory_fullest_ratio gauge
gputop_host_memory_fullest_ratio{{hostname="node-1"}} 0.75
# HELP gputop_host_utilization_ratio The host's GPUs' mean utilization (0-1).
# TYPE gputop_host_utilization_ratio gauge
gputop_host_utilization_ratio{{hostname="node-1"}} 0.87
# HELP gputop_host_power_watts Power draw, all the host's GPUs together.
# TYPE gputop_host_power_watts gauge
gputop_host_power_watts{{hostname="node-1"}} 612.5
# HELP gputop_host_temperature_max_celsius The hottest GPU's temperature.
# TYPE gputop_host_temperature_max_celsius gauge
gputop_host_temperature_max_celsius{{hostname="node-1"}} 71.0
# HELP gputop_host_problems Problems the diagnoses found, all the host's GPUs together.
# TYPE gputop_host_problems gauge
# HELP gputop_host_gpus_flagged The host's GPUs filling up (an out-of-memory forecast), hot (within 5 °C of \
slowing down), holding an idle process's memory, or unhealthy (not answering, health problems).
# TYPE gputop_host_gpus_flagged gauge
gputop_host_gpus_flagged{{flag="filling",hostname="node-1"}} 1.0
gputop_host_gpus_flagged{{flag="hot",hostname="node-1"}} 0.0
gputop_host_gpus_flagged{{flag="idle-hogged",hostname="node-1"}} 0.0
gputop_host_gpus_flagged{{flag="unhealthy",hostname="node-1"}} 0.0
# HELP gputop_gpu_memory_unattributed_bytes GPU memory in use that no listed process accounts for.
# TYPE gputop_gpu_memory_unattributed_bytes gauge
# HELP gputop_gpu_clock_event_reasons 1 while this reason holds the GPU's clocks down, else 0.
# TYPE gputop_gpu_clock_event_reasons gauge
# HELP gputop_gpu_ecc_errors_uncorrected_total Uncorrected ECC errors: since the driver loaded (volatile) and \
over the GPU's life (aggregate).
# TYPE gputop_gpu_ecc_errors_uncorrected_total counter
# HELP gputop_gpu_remapped_rows Rows remapped (corrected, uncorrected errors) and whether a remap is pending or \
failed (0/1).
# TYPE gputop_gpu_remapped_rows gauge
# HELP gputop_gpu_problems Problems the diagnoses found on the GPU, by kind: idle processes, devices with memory \
no process accounts for, throttled, stalled (0/1), health problems.
# TYPE gputop_gpu_problems gauge
# HELP gputop_gpu_xid_errors_total Critical XID errors since the exporter started, by XID.
# TYPE gputop_gpu_xid_errors_total counter
# HELP gputop_process_gpu_memory_bytes GPU memory used by one process on one GPU.
# TYPE gputop_process_gpu_memory_bytes gauge
gputop_process_gpu_memory_bytes{{command="python",container="k8s:pod-1",container_name="",gpu="0",hostname="node-1",pid="101",user="alice"}} 4.4023414784e+10
gputop_process_gpu_memory_bytes{{command="evil\\"name\\\\with\\nnewline",container="",container_name="",gpu="0",hostname="node-1",pid="102",user="mallory"}} 2.147483648e+09
gputop_process_gpu_memory_bytes{{command="",container="",container_name="",gpu="2",hostname="node-1",pid="104",user=""}} 3.221225472e+09
# HELP gputop_process_idle_seconds Seconds since the process last used the GPU's SMs (absent where unknown).
# TYPE gputop_process_idle_seconds gauge
# HELP gputop_process_series_dropped Processes left out of the per-process series by --max-process-series \
(the smallest by GPU memory).
# TYPE gputop_process_series_dropped gauge
gputop_process_series_dropped{{hostname="node-1"}} 0.0
"""


def scrape(collector: SnapshotCollector) -> str:
    return generate_latest(make_registry(collector)).decode()


def scrape_names(snapshot: Snapshot, names: str, hostname: str | None = None) -> str:
    collector = SnapshotCollector(hostname=hostname, names=names)
    collector.update(snapshot)
    return scrape(collector)


def test_metrics_text_for_a_hand_made_snapshot_is_exact() -> None:
    collector = SnapshotCollector(names="gputop")
    # GPU 1 is lost: a forecast for it is not served; GPU 2 has none.
    collector.update(SNAPSHOT, {0: 312.0, 1: 5.0, 2: None})
    assert scrape(collector) == EXPECTED


def test_a_snapshot_read_back_from_its_json_exports_the_same_metrics() -> None:
    """What ``gputop record`` wrote and a replay reads serves the same series as the live snapshot."""
    collector = SnapshotCollector(names="gputop")
    collector.update(snapshot_from_dict(json.loads(dumps(snapshot_to_dict(SNAPSHOT)))), {0: 312.0})
    assert scrape(collector) == EXPECTED


def test_label_values_users_control_are_escaped_exactly() -> None:
    collector = SnapshotCollector()
    collector.update(SNAPSHOT)
    line = next(line for line in scrape(collector).splitlines() if 'pid="102"' in line)
    # A quote, a backslash and a newline in a process name: \" \\ \n, all on one line.
    assert r'command="evil\"name\\with\nnewline"' in line


def test_hostname_override_labels_every_series() -> None:
    collector = SnapshotCollector(hostname="alpha")
    collector.update(SNAPSHOT)
    text = scrape(collector)
    assert 'hostname="node-1"' not in text and 'Hostname="node-1"' not in text
    # DCGM's: GPU 0's six fields, its SM and tensor activity, energy and NVLink CRC errors; GPU 2's memory used
    assert text.count('Hostname="alpha"') == 11
    text = scrape_names(SNAPSHOT, "gputop", hostname="alpha")
    assert text.count('hostname="alpha"') == EXPECTED.count('hostname="node-1"') - 1  # no forecast given


def test_a_failed_sample_serves_up_0_and_no_stale_gpu_figures() -> None:
    collector = SnapshotCollector(hostname="alpha")
    collector.update(SNAPSHOT, {0: 312.0})
    collector.fail(RuntimeError("NVML went away"))
    assert scrape(collector) == (
        "# HELP gputop_up 1 when the latest sample succeeded, 0 when it failed.\n"
        "# TYPE gputop_up gauge\n"
        'gputop_up{hostname="alpha"} 0.0\n'
        "# HELP gputop_sample_errors_total Samples that failed since the exporter started.\n"
        "# TYPE gputop_sample_errors_total counter\n"
        'gputop_sample_errors_total{hostname="alpha"} 1.0\n'
    )


def test_a_process_that_has_gone_leaves_no_series_behind() -> None:
    collector = SnapshotCollector()
    collector.update(SNAPSHOT)
    assert 'pid="101"' in scrape(collector)
    fewer = GpuSample(index=0, name=GPU0.name, uuid=GPU0.uuid, processes=GPU0.processes[2:])
    collector.update(Snapshot(timestamp=1700000001.5, hostname="node-1", host=HostSample(), gpus=(fewer,)))
    text = scrape(collector)
    assert 'pid="101"' not in text and 'pid="102"' in text


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1:9400", ("127.0.0.1", 9400)),
        (":9400", ("0.0.0.0", 9400)),
        ("[::1]:0", ("::1", 0)),
        ("localhost:80", ("localhost", 80)),
    ],
)
def test_listen_addresses(text: str, address: tuple[str, int]) -> None:
    assert parse_listen(text) == address


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("9400", "--listen wants HOST:PORT, not '9400'"),
        ("host:", "--listen wants HOST:PORT, not 'host:'"),
        ("host:http", "--listen: the port must be a number, not 'http'"),
        ("host:70000", "--listen: the port must be between 0 and 65535, not 70000"),
        ("::1:9400", "--listen: write an IPv6 address in brackets, like [::1]:9400, not '::1:9400'"),
    ],
)
def test_listen_addresses_that_cannot_be_parsed(text: str, message: str) -> None:
    with pytest.raises(ListenError) as raised:
        parse_listen(text)
    assert str(raised.value) == message


def run_gputop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gputop", "--demo", *args], capture_output=True, text=True, timeout=30
    )


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def test_an_unparseable_listen_address_exits_2_with_one_line() -> None:
    result = run_gputop("export", "--listen", "nonsense")
    assert result.returncode == 2
    assert result.stderr == "gputop: --listen wants HOST:PORT, not 'nonsense'\n"
    assert result.stdout == ""


def test_a_port_in_use_exits_2_with_one_line(busy_port: int) -> None:
    result = run_gputop("export", "--listen", f"127.0.0.1:{busy_port}")
    assert result.returncode == 2
    assert result.stderr == f"gputop: cannot listen on 127.0.0.1:{busy_port}: the address is already in use\n"


def test_an_unknown_listen_host_exits_2_with_one_line() -> None:
    result = run_gputop("export", "--listen", "no-such-host.invalid:9400")
    assert result.returncode == 2
    assert result.stderr == "gputop: cannot listen on no-such-host.invalid:9400: unknown host 'no-such-host.invalid'\n"


def test_exporter_serves_the_sampler_s_snapshots_over_http() -> None:
    sampler = Sampler(DemoSource(gpu_count=2))
    sampler.open()
    exporter = Exporter(sampler, interval_s=3600, hostname="alpha")
    host, port = exporter.start("127.0.0.1", 0)
    try:
        deadline = time.monotonic() + 10
        text = ""
        while 'gputop_up{hostname="alpha"} 1.0' not in text and time.monotonic() < deadline:
            time.sleep(0.02)
            with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as response:
                text = response.read().decode()
        assert 'gputop_up{hostname="alpha"} 1.0' in text
        assert text.count("gputop_gpu_memory_total_bytes{") == 2
        assert 'gputop_gpu_memory_total_bytes{gpu="0",hostname="alpha",name="NVIDIA H100 80GB HBM3"' in text
        assert "python_gc" not in text  # only gputop's collector is registered
    finally:
        exporter.stop()
        sampler.close()


class FillingSource(StaticSource):
    """One 80 GiB GPU whose memory grows by 1 GiB every sample (10 s apart on the sampler's clock)."""

    def __init__(self) -> None:
        super().__init__()
        self.samples = 0

    def sample(self) -> tuple[GpuSample, ...]:
        self.samples += 1
        used = (20 + self.samples) * GIB
        return (GpuSample(index=0, name="NVIDIA H100 80GB HBM3", memory_total=80 * GIB, memory_used=used),)


def scrape_until(host: str, port: int, wanted: str) -> str:
    deadline = time.monotonic() + 20
    text = ""
    while wanted not in text and time.monotonic() < deadline:
        time.sleep(0.05)
        with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=5) as response:
            text = response.read().decode()
    return text


LABELS = 'gpu="0",hostname="alpha",name="NVIDIA H100 80GB HBM3",uuid=""'


@pytest.mark.parametrize(("horizon_s", "forecast_served"), [(3600.0, True), (300.0, False)])
def test_the_forecast_served_follows_the_settings_horizon(horizon_s: float, forecast_served: bool) -> None:
    clock = iter(1_700_000_000.0 + 10 * n for n in range(100_000))
    sampler = Sampler(FillingSource(), clock=lambda: next(clock))
    exporter = Exporter(sampler, interval_s=0.1, hostname="alpha", thresholds=Thresholds(horizon_s=horizon_s))
    host, port = exporter.start("127.0.0.1", 0)
    try:
        # Served once 38 GiB are in use (170 s of history): the rest fills at 0.1 GiB/s in 420 s.
        text = scrape_until(host, port, f"gputop_gpu_memory_used_bytes{{{LABELS}}} 4.")
        assert ("gputop_gpu_seconds_to_full{" in text) is forecast_served
    finally:
        exporter.stop()


def _served(text: str) -> list[tuple[str, dict[str, str], float]]:
    return [
        (s.name, s.labels, s.value) for family in text_string_to_metric_families(text) for s in family.samples
    ]


def _gpu_aggregates(samples: list[tuple[str, dict[str, str], float]]) -> dict[str, object]:
    """What the cluster reader asks Prometheus of the GPUs' series, worked out from one scrape."""
    by_gpu: dict[str, dict[str, float]] = {}
    models: dict[tuple[str, str], float] = {}
    problems: dict[tuple[str, str], float] = {}
    for name, labels, value in samples:
        if name == "gputop_gpu_problems":
            problems[(labels["gpu"], labels["kind"])] = value
        elif name.startswith("gputop_gpu_") and "kind" not in labels and "reason" not in labels and "scope" not in labels:
            by_gpu.setdefault(labels["gpu"], {})[name] = value
            if name == "gputop_gpu_lost":
                key = (labels["name"], str(int(value)))
                models[key] = models.get(key, 0) + 1
    gpus = by_gpu.values()

    def values(metric: str) -> list[float]:
        return [g[metric] for g in gpus if metric in g]

    def hot(g: dict[str, float]) -> bool:
        t = g.get("gputop_gpu_temperature_celsius")
        return t is not None and t >= g.get("gputop_gpu_temperature_slowdown_celsius", 85.0) - 5

    used, utilization = values("gputop_gpu_memory_used_bytes"), values("gputop_gpu_utilization_ratio")
    return {
        "gpus": models,
        "memory_used": sum(used) if used else None,
        "memory_total": sum(values("gputop_gpu_memory_total_bytes")) or None,
        "fullest": max(
            (g["gputop_gpu_memory_used_bytes"] / g["gputop_gpu_memory_total_bytes"] for g in gpus
             if "gputop_gpu_memory_used_bytes" in g and g.get("gputop_gpu_memory_total_bytes")),
            default=None,
        ),
        "utilization": sum(utilization) / len(utilization) if utilization else None,
        "power": sum(values("gputop_gpu_power_watts")) or None,
        "temperature": max(values("gputop_gpu_temperature_celsius"), default=None),
        "problems": sum(problems.values()) if problems else None,
        "flags": {
            "filling": len(values("gputop_gpu_seconds_to_full")),
            "hot": sum(1 for g in gpus if hot(g)),
            "idle-hogged": sum(1 for (_, kind), v in problems.items() if kind == "idle" and v > 0),
            "unhealthy": sum(
                1 for gpu, g in by_gpu.items()
                if g["gputop_gpu_answering"] == 0 or problems.get((gpu, "health"), 0) > 0
            ),
        },
    }


def _host_series(samples: list[tuple[str, dict[str, str], float]]) -> dict[str, object]:
    served = {name: value for name, labels, value in samples if name.startswith("gputop_host_") and len(labels) == 1}
    return {
        "gpus": {(at["name"], at["lost"]): v for n, at, v in samples if n == "gputop_host_gpus"},
        "memory_used": served.get("gputop_host_memory_used_bytes"),
        "memory_total": served.get("gputop_host_memory_total_bytes"),
        "fullest": served.get("gputop_host_memory_fullest_ratio"),
        "utilization": served.get("gputop_host_utilization_ratio"),
        "power": served.get("gputop_host_power_watts"),
        "temperature": served.get("gputop_host_temperature_max_celsius"),
        "problems": served.get("gputop_host_problems"),
        "flags": {at["flag"]: v for n, at, v in samples if n == "gputop_host_gpus_flagged"},
    }


@pytest.mark.parametrize("host", [0, 10, 11, 24, 37])
@pytest.mark.parametrize("diagnosed", [False, True])
def test_each_host_figure_is_exactly_what_its_gpus_series_add_up_to(host: int, diagnosed: bool) -> None:
    """The one-series-a-host summaries the cluster view reads agree with the GPUs' own series."""
    sample = fleet.snapshot(host, 8, 4)
    gpus = list(sample.gpus)
    # GPU 2 reports uncorrected ECC errors (a health problem), GPU 3 has stopped answering.
    gpus[2] = replace(gpus[2], health=replace(gpus[2].health, ecc_uncorrected_volatile=3))
    gpus[3] = GpuSample(index=3, name=gpus[3].name, uuid=gpus[3].uuid, answering=False, not_answering_since=1.0)
    sample = replace(sample, gpus=tuple(gpus))
    collector = SnapshotCollector()
    collector.update(sample, fleet.seconds_to_full(host), fleet.diagnoses(sample) if diagnosed else None)
    samples = _served(scrape(collector))
    rollup, expected = _host_series(samples), _gpu_aggregates(samples)
    # A mean in floating point depends on the order of adding up (Prometheus' own is incremental).
    assert rollup.pop("utilization") == pytest.approx(expected.pop("utilization"), rel=1e-12)
    assert rollup == expected
    flags = rollup["flags"]
    assert isinstance(flags, dict) and flags["unhealthy"] == (2 if diagnosed else 1)


def dcgm_lines(snapshot: Snapshot, field: str) -> list[str]:
    return [line for line in scrape_names(snapshot, "dcgm").splitlines() if line.startswith(field + "{")]


def test_dcgm_series_name_the_gpus_pod_when_all_its_processes_run_in_one() -> None:
    def pod_process(pid: int, pod: str) -> ProcessSample:
        return ProcessSample(pid=pid, gpu_index=0, type="C", gpu_memory=GIB, container=f"k8s:uid-{pod}",
                             container_name=f"ml/{pod}")

    one_pod = replace(GPU0, pci_bus_id="00000000:18:00.0",
                      processes=(pod_process(1, "train-0"), pod_process(2, "train-0")))
    two_pods = replace(GPU0, index=1, uuid="GPU-cccc", processes=(pod_process(3, "a"), pod_process(4, "b")))
    snapshot = replace(SNAPSHOT, gpus=(one_pod, two_pods))
    assert dcgm_lines(snapshot, "DCGM_FI_DEV_GPU_TEMP") == [
        'DCGM_FI_DEV_GPU_TEMP{DCGM_FI_DRIVER_VERSION="560.35.03",Hostname="node-1",UUID="GPU-aaaa",device="nvidia0",'
        'gpu="0",modelName="NVIDIA H100 80GB HBM3",namespace="ml",pci_bus_id="00000000:18:00.0",pod="train-0"} 71.0',
        # Two pods share GPU 1: no pod label rather than one of them picked.
        'DCGM_FI_DEV_GPU_TEMP{DCGM_FI_DRIVER_VERSION="560.35.03",Hostname="node-1",UUID="GPU-cccc",device="nvidia1",'
        'gpu="1",modelName="NVIDIA H100 80GB HBM3",pci_bus_id=""} 71.0',
    ]


def test_dcgm_xid_is_the_last_code_and_absent_without_event_support() -> None:
    with_xids = replace(GPU0, health=GpuHealth(xid_events=(XidEvent(code=79, time=1.0), XidEvent(code=48, time=2.0))))
    quiet = replace(GPU0, index=1, uuid="GPU-cccc", health=GpuHealth(xid_events=()))
    unsupported = replace(GPU0, index=3, uuid="GPU-dddd")  # xid_events None: no event support
    lines = dcgm_lines(replace(SNAPSHOT, gpus=(with_xids, quiet, unsupported)), "DCGM_FI_DEV_XID_ERRORS")
    assert [(line.split('UUID="')[1][:8], line.split('err_code="')[1].split('"')[0],
             line.split('err_msg="')[1].split('"')[0], line.rsplit(" ", 1)[1]) for line in lines] == [
        ("GPU-aaaa", "48", "Double Bit ECC Error", "48.0"), ("GPU-cccc", "0", "No Error", "0.0")
    ]


def test_names_both_marks_dcgms_series_and_names_dcgm_serves_them_alone() -> None:
    both = scrape_names(SNAPSHOT, "both")
    assert 'DCGM_FI_DEV_GPU_TEMP{DCGM_FI_DRIVER_VERSION="560.35.03",Hostname="node-1",UUID="GPU-aaaa",' in both
    assert all('exporter="gputop"' in line for line in both.splitlines() if line.startswith("DCGM_FI_"))
    alone = scrape_names(SNAPSHOT, "dcgm")
    assert "gputop_" not in alone and 'exporter="gputop"' not in alone
    assert sorted(line for line in alone.splitlines() if not line.startswith("#")) == sorted(
        line.replace(',exporter="gputop"', "") for line in both.splitlines() if line.startswith("DCGM_FI_")
    )


def test_dcgm_integer_fields_are_whole_as_dcgm_gives_them() -> None:
    """DCGM's framebuffer, utilization and temperature are integers (MiB rounded down); power is not."""
    odd = replace(GPU0, memory_used=60 * GIB + 1024**2 - 1, utilization_gpu=87.9, temperature=70.5, power_draw=612.25)
    snapshot = replace(SNAPSHOT, gpus=(odd,))
    assert [line.rsplit(" ", 1)[1] for field in ("DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP",
                                                 "DCGM_FI_DEV_POWER_USAGE") for line in dcgm_lines(snapshot, field)] == [
        "61440.0", "87.0", "70.0", "612.25"
    ]


def test_dcgm_memory_temperature_and_pcie_replays_are_served_only_where_the_gpu_gives_them() -> None:
    hbm = replace(GPU0, memory_temperature=66.0, pcie_replay_errors=3)
    gddr = replace(GPU0, index=1, uuid="GPU-cccc")  # no memory sensor, no replay counter: None, not 0
    snapshot = replace(SNAPSHOT, gpus=(hbm, gddr))
    assert [line.split('UUID="')[1][:8] + " " + line.rsplit(" ", 1)[1] for field in (
        "DCGM_FI_DEV_MEMORY_TEMP", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER") for line in dcgm_lines(snapshot, field)] == [
        "GPU-aaaa 66.0", "GPU-aaaa 3.0"
    ]
    text = scrape_names(snapshot, "dcgm")
    # dcgm-exporter's help text for it (default-counters.csv).
    assert "# HELP DCGM_FI_DEV_PCIE_REPLAY_COUNTER Total number of PCIe retries.\n" in text
