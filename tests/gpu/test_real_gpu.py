"""`gputop --json` against the real NVIDIA driver; skipped where there is none.

Run it on a machine with a GPU: .venv/bin/python -m pytest -q tests/gpu
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

MiB = 1024 * 1024
GiB = 1024 * MiB
ALLOCATION = 2 * GiB


def nvidia_smi_gpus() -> list[tuple[str, int]]:
    """(name, total memory in MiB) per GPU, from nvidia-smi; skips the test without a driver."""
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi is not installed: no NVIDIA driver here")
    result = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0 or not result.stdout.strip():
        pytest.skip(f"nvidia-smi does not answer: {result.stderr.strip() or result.stdout.strip()}")
    rows = [line.rsplit(",", 1) for line in result.stdout.strip().splitlines()]
    return [(name.strip(), int(total)) for name, total in rows]


@pytest.fixture
def real_gpus() -> list[tuple[str, int]]:
    """nvidia-smi's view of the GPUs; skips where no driver answers."""
    return nvidia_smi_gpus()


@pytest.fixture
def allocating_process(real_gpus: list[tuple[str, int]]) -> Iterator[subprocess.Popen[str]]:
    """A process holding ALLOCATION bytes of GPU memory (PyTorch) until the test ends."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("PyTorch is not installed")
    code = (
        "import time, torch\n"
        f"block = torch.empty({ALLOCATION}, dtype=torch.uint8, device='cuda:0')\n"
        "torch.cuda.synchronize()\n"
        "print('ready', flush=True)\n"
        "time.sleep(300)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        if line.strip() != "ready":
            child.kill()
            pytest.fail(f"the allocating process failed: {child.communicate()[1][-2000:]}")
        yield child
    finally:
        child.kill()
        child.wait()


def gputop_json() -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_gputop_json_sees_the_gpus_and_a_process_allocating_memory(
    real_gpus: list[tuple[str, int]], allocating_process: subprocess.Popen[str]
) -> None:
    report = gputop_json()

    gpus = report["gpus"]
    assert [(gpu["name"], gpu["memory"]["total"] // MiB) for gpu in gpus] == real_gpus
    listed = [
        process
        for gpu in gpus
        for process in gpu["processes"]
        if process["pid"] == allocating_process.pid
    ]
    assert len(listed) == 1, f"pid {allocating_process.pid} not listed once: {gpus}"
    # The CUDA context adds a few hundred MiB on top of the allocation.
    assert ALLOCATION <= listed[0]["gpu_memory"] <= ALLOCATION + GiB


def nvidia_smi_query(fields: list[str]) -> list[dict[str, str]]:
    """One dict per GPU of nvidia-smi --query-gpu fields (values as printed, "[N/A]" included)."""
    result = subprocess.run(
        ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if result.returncode != 0:
        pytest.skip(f"this nvidia-smi does not know {fields}: {result.stderr.strip() or result.stdout.strip()}")
    return [dict(zip(fields, (v.strip() for v in line.split(",")), strict=True)) for line in result.stdout.splitlines()]


def _number(text: str) -> int | None:
    return None if text.startswith("[") or text in ("N/A", "") else int(text, 0)


def test_diagnosis_fields_agree_with_nvidia_smi(
    real_gpus: list[tuple[str, int]], allocating_process: subprocess.Popen[str]
) -> None:
    from gputop.core.diagnosis.reasons import decode_reasons

    fields = [
        "clocks_event_reasons.active",
        "clocks.max.sm",
        "ecc.errors.uncorrected.volatile.total",
        "ecc.errors.uncorrected.aggregate.total",
        "remapped_rows.correctable",
        "remapped_rows.uncorrectable",
        "remapped_rows.pending",
        "remapped_rows.failure",
    ]
    smi = nvidia_smi_query(fields)
    report = gputop_json()
    for gpu, row in zip(report["gpus"], smi, strict=True):
        print(f"GPU {gpu['index']}: gputop {gpu['clock_event_reasons']} {gpu['clocks']} {gpu['health']}")
        print(f"GPU {gpu['index']}: nvidia-smi {row}")
        mask = _number(row["clocks_event_reasons.active"])
        assert gpu["clock_event_reasons"] == (None if mask is None else list(decode_reasons(mask)))
        assert gpu["clocks"]["sm_max"] == _number(row["clocks.max.sm"])
        health = gpu["health"]
        assert health["ecc_uncorrected_volatile"] == _number(row["ecc.errors.uncorrected.volatile.total"])
        assert health["ecc_uncorrected_aggregate"] == _number(row["ecc.errors.uncorrected.aggregate.total"])
        rows = health["remapped_rows"]
        if _number(row["remapped_rows.correctable"]) is None:
            assert rows is None
        else:
            assert (rows["corrected"], rows["uncorrected"]) == (
                _number(row["remapped_rows.correctable"]),
                _number(row["remapped_rows.uncorrectable"]),
            )
            assert (rows["pending"], rows["failure"]) == (
                row["remapped_rows.pending"] == "Yes",
                row["remapped_rows.failure"] == "Yes",
            )
        assert health["xid_events"] == []
    # The allocating process sleeps: its SM use is 0 and its idle time known (not in MIG mode).
    (hog,) = [p for g in report["gpus"] for p in g["processes"] if p["pid"] == allocating_process.pid]
    print(f"allocating process: sm {hog['sm_utilization']} idle_seconds {hog['idle_seconds']}")
    if not report["gpus"][0]["mig_mode"]:
        assert hog["sm_utilization"] == 0.0
        assert hog["idle_seconds"] is not None and hog["idle_seconds"] >= 0.0


def test_the_process_screen_lists_the_nvidia_devices_a_process_holds(real_gpus: list[tuple[str, int]]) -> None:
    """A process that has opened NVML holds /dev/nvidiactl: the process screen's facts say so."""
    code = (
        "import os, pynvml, psutil\n"
        "from gputop.core.procdetail import read_process_detail\n"
        "pynvml.nvmlInit()\n"
        "pynvml.nvmlDeviceGetHandleByIndex(0)\n"
        "detail = read_process_detail((os.getpid(), psutil.Process().create_time()))\n"
        "print(' '.join(detail.devices.value or ()))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "/dev/nvidiactl" in result.stdout.split()
