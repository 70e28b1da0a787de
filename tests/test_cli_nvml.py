"""`gputop --once` and `gputop --json` as real commands against the fake NVML driver."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys

import psutil
import pytest
from fakenvml import NO_SUCH_PID, GiB, MiB, Scenario
from fakenvml.fixture import FakeNvml


def gputop(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gputop", *args], capture_output=True, text=True, timeout=60, env=env
    )


def machine(pid: int) -> Scenario:
    return (
        Scenario(driver="550.54.15", cuda=12040)
        .gpu(name="NVIDIA H100 80GB HBM3", memory_total=80 * GiB, memory_used=40 * GiB, memory_reserved=512 * MiB,
             util_gpu=87, temperature=71, power_mw=412_300, power_limit_mw=700_000, pcie_rx_kbs=1000)
        .gpu(name="NVIDIA L4", memory_total=24 * GiB, memory_used=1 * GiB, fan=None, power_mw=None)
        .process(gpu=0, pid=pid, used=30 * GiB, kind="C", sm=55)
        .process(gpu=1, pid=NO_SUCH_PID, used=2 * GiB, kind="CG")
    )


def test_json_reports_the_drivers_gpus_and_processes_in_base_units(
    fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]
) -> None:
    fake_nvml.write(machine(sleeper.pid))
    result = gputop(fake_nvml.env(), "--json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert (document["source"], document["driver_version"], document["cuda_driver_version"]) == (
        "nvml", "550.54.15", "12.4",
    )
    first, second = document["gpus"]
    assert first["name"] == "NVIDIA H100 80GB HBM3"
    assert first["memory"]["total"] == 80 * GiB and first["memory"]["used"] == 40 * GiB
    assert first["memory"]["reserved"] == 512 * MiB
    assert first["power"] == {"draw": 412.3, "limit": 700.0}
    assert first["temperature"] == {"current": 71, "slowdown": 87, "shutdown": 92, "memory": None}
    assert first["pcie"]["rx"] == 1000 * 1024
    assert (second["fan"], second["power"]["draw"]) == (None, None)
    [process] = first["processes"]
    assert (process["pid"], process["type"], process["gpu_memory"], process["sm_utilization"]) == (
        sleeper.pid, "C", 30 * GiB, 55,
    )
    assert (process["command"], process["visible"]) == ("sleep 600", True)
    assert process["started"] == psutil.Process(sleeper.pid).create_time()
    [hidden] = second["processes"]
    assert (hidden["pid"], hidden["type"], hidden["gpu_memory"], hidden["visible"], hidden["user"]) == (
        NO_SUCH_PID, "C+G", 2 * GiB, False, None,
    )


def test_once_prints_the_gpus_then_the_processes(fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes]) -> None:
    fake_nvml.write(machine(sleeper.pid))
    result = gputop(fake_nvml.env(), "--once")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("driver 550.54.15  CUDA 12.4")
    assert lines[1] == "[0] NVIDIA H100 80GB HBM3             71°C  412W/700W  util  87%"
    assert lines[2].endswith("  40.0GiB / 80.0GiB  50%")
    assert lines[3] == "[1] NVIDIA L4                         35°C   N/A/700W  util   0%"
    process_rows = lines[lines.index(" GPU     PID USER      T    GPU-MEM   SM   CPU   TIME  COMMAND") + 1 : -3]
    assert [row.split()[:5] for row in process_rows] == [
        ["0", str(sleeper.pid), "root", "C", "30.0GiB"],
        ["1", str(NO_SUCH_PID), "N/A", "C+G", "2.0GiB"],
    ]
    assert process_rows[0].endswith("sleep 600")
    assert process_rows[1].endswith("(not visible: exited)")  # past pid_max: no process can have it
    # 40 GiB used on GPU 0, 30 GiB of it listed: more than max(1 GiB, 5 % of 80 GiB) is unexplained.
    assert lines[-3:] == [
        "",
        "Problems",
        "  GPU 0  (no process) 10.0GiB of memory no listed process accounts for",
    ]


@pytest.mark.skipif(ctypes.util.find_library("nvidia-ml") is not None, reason="a real NVIDIA driver is installed")
@pytest.mark.parametrize("args", [["--json"], ["--once"], []])
def test_without_the_driver_library_every_mode_exits_2_with_one_line(args: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_SCENARIO")}
    result = gputop(env, *args)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "gputop: NVML is not available: libnvidia-ml.so.1 was not found — "
        "run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU\n"
    )


def test_a_driver_that_is_not_loaded_exits_2_with_one_line(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().fail_init("DRIVER_NOT_LOADED"))
    result = gputop(fake_nvml.env(), "--json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("gputop: NVML is not available: ")
    assert "gputop --demo" in result.stderr
