"""`--once` and `--json` from a snapshot: exact text, exact JSON."""

from __future__ import annotations

import time

from gputop.core.model import GpuSample, HostSample, MigSample, ProcessSample, Snapshot
from gputop.core.output.once_table import render_text
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource

GIB = 1024**3
NOW = 1_800_000_000.0


def snapshot(command: str = "python train.py") -> Snapshot:
    train = ProcessSample(
        pid=4242, gpu_index=0, type="C", gpu_memory=30 * GIB, sm_utilization=87.0, started=NOW - 192,
        user="alice", name="python", command=command, cpu_percent=101.4, host_memory=3 * GIB,
        container="docker:0123456789ab", visible=True,
    )
    hidden = ProcessSample(pid=77, gpu_index=1, type="G", gpu_memory=None, mig_index=0)
    return Snapshot(
        timestamp=NOW,
        hostname="node7",
        host=HostSample(cpu_percent=12.5, memory_total=64 * GIB, memory_used=16 * GIB, swap_total=0, swap_used=0,
                        load_average=(1.0, 2.0, 3.0), net_rx_rate=1000.0, net_tx_rate=None,
                        net_interfaces=("eno1", "eno2")),
        gpus=(
            GpuSample(index=0, name="NVIDIA H100 80GB HBM3", memory_total=80 * GIB, memory_used=72 * GIB,
                      temperature=61.0, temperature_slowdown=87.0, power_draw=350.4, power_limit=700.0,
                      utilization_gpu=93.0, processes=(train,)),
            GpuSample(index=1, name="NVIDIA A100-SXM4-40GB", memory_total=40 * GIB, memory_used=2 * GIB, mig_mode=True,
                      mig_devices=(MigSample(index=0, name="NVIDIA A100-SXM4-40GB MIG 3g.20gb", memory_total=20 * GIB,
                                             memory_used=2 * GIB, processes=(hidden,)),)),
            GpuSample(index=2, name="NVIDIA L4", lost=True),
        ),
        driver_version="550.54.15",
        cuda_driver_version="12.4",
    )


def test_the_table_lists_gpus_then_processes_in_80_columns() -> None:
    text = render_text(snapshot(), colour=False)
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(NOW))
    versions = "driver 550.54.15  CUDA 12.4"
    assert text.splitlines() == [
        f"node7  {when}".ljust(80 - len(versions)) + versions,
        "[0] NVIDIA H100 80GB HBM3             61°C  350W/700W  util  93%",
        # The same bar as the cards draw, to an eighth of a cell: 90 % of 51 cells is 45.9.
        "    " + "█" * 45 + "▉" + "░" * 5 + "   72.0GiB / 80.0GiB  90%",
        "[1] NVIDIA A100-SXM4-40GB              N/A   N/A       util  N/A",
        "    " + "█" * 2 + "▌" + "░" * 48 + "    2.0GiB / 40.0GiB   5%",
        "    └ MIG 0 3g.20gb      2.0GiB / 20.0GiB 10%",
        "[2] NVIDIA L4  GPU LOST: not answering",
        "",
        " GPU     PID USER      T    GPU-MEM   SM   CPU   TIME  COMMAND",
        "   0    4242 alice     C    30.0GiB  87%  101%  3m12s  python train.py",
        " 1.0      77 N/A       G        N/A  N/A   N/A    N/A  (not visible from here)",
    ]
    assert all(len(line) <= 80 for line in text.splitlines())


def test_colour_is_added_only_when_asked() -> None:
    assert "\x1b[" not in render_text(snapshot(), colour=False)
    coloured = render_text(snapshot(), colour=True)
    assert "\x1b[31m" in coloured  # 90% memory is red


def test_escape_sequences_in_a_command_line_are_shown_not_interpreted() -> None:
    text = render_text(snapshot(command="evil\x1b]0;pwned\x07\x1b[2J [bold]x\nnext"), colour=False)
    assert "\x1b" not in text and "\x07" not in text
    assert "  evil\\x1b]0;pwned…\\x0anext\n" in text  # cut to 80 columns in the middle, and marked


def test_the_json_document_has_the_documented_keys_and_units() -> None:
    document = snapshot_to_dict(snapshot())
    assert document["timestamp"] == NOW and document["hostname"] == "node7"
    assert document["driver_version"] == "550.54.15"
    assert document["host"] == {
        "cpu_percent": 12.5, "memory_total": 64 * GIB, "memory_used": 16 * GIB, "swap_total": 0, "swap_used": 0,
        "load_average": [1.0, 2.0, 3.0], "net_rx_rate": 1000.0, "net_tx_rate": None,
        "net_interfaces": ["eno1", "eno2"],
    }
    first = document["gpus"][0]
    assert first["memory"] == {"total": 80 * GIB, "used": 72 * GIB, "free": None, "reserved": None}
    assert first["temperature"] == {"current": 61.0, "slowdown": 87.0, "shutdown": None, "memory": None}
    assert first["power"] == {"draw": 350.4, "limit": 700.0}
    assert first["processes"][0].pop("not_visible_reason") is None  # visible
    assert first["processes"] == [{
        "pid": 4242, "type": "C", "gpu_memory": 30 * GIB, "sm_utilization": 87.0, "sm_last_active": None,
        "mig_device": None, "user": "alice", "name": "python", "command": "python train.py", "cpu_percent": 101.4,
        "host_memory": 3 * GIB, "started": NOW - 192, "container": "docker:0123456789ab",
        "container_name": None, "visible": True, "parent_pid": None, "parent_command": None, "stale": False,
        "container_runtime": None, "container_id": None, "pod_uid": None, "job": None,
    }]
    mig_gpu = document["gpus"][1]
    assert [p["pid"] for p in mig_gpu["processes"]] == [77]
    assert mig_gpu["mig_devices"][0]["memory"] == {"total": 20 * GIB, "used": 2 * GIB, "free": None}
    assert [p["pid"] for p in mig_gpu["mig_devices"][0]["processes"]] == [77]
    assert document["gpus"][2]["lost"] is True
    assert (first["answering"], first["not_answering_since"], first["last_error"]) == (True, None, None)


def test_every_line_of_the_demo_fits_80_columns() -> None:
    sampler = Sampler(DemoSource(gpu_count=8, clock=lambda: NOW))
    sampler.open()
    for _ in range(5):
        text = render_text(sampler.sample(), colour=False)
    assert max(len(line) for line in text.splitlines()) <= 80
