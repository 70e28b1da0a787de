"""gputop itself against the real NVIDIA driver; every test skips, saying why, where there is none.

A child process (cuda_child.py) allocates GPU memory and runs a PTX kernel through libcuda with
ctypes. Then: gputop's `--json` is checked against `nvidia-smi -q -x` (names, UUIDs, memory within
1 %, the child listed with its memory, temperature and power in range), the diagnosis fields
against `nvidia-smi --query-gpu`, the TUI in tmux shows the child and `k` + Enter ends it, and
`gputop export` serves the same figures, and `gputop doctor --capture` records the machine's NVML
answers with the child running: the capture is written to the results folder (capture_note.py) with a
note that says to add it to tests/captures/, and is replayed here against its recorded `--json`. Run
it (under 5 minutes) on a machine with a GPU:

    python -m pytest -q -p no:xdist tests/gpu
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gputop.core.host.pidns import read_pid_namespace

from .capture_note import NOTE_NAME, capture_name, note, results_dir
from .smi_xml import SmiGpu, compare, parse_smi_xml

MiB = 1024 * 1024
GiB = 1024 * MiB
ALLOCATION = 1 * GiB
ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("cuda_child.py")
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
# NVML lists processes by their host PID: in another PID namespace (a container without --pid=host)
# the child's PID here is not the one NVML gives, so the checks of the child are left out.
NAMESPACE = read_pid_namespace()
HOST_PIDS = NAMESPACE.host is not False
needs_host_pids = pytest.mark.skipif(not HOST_PIDS, reason=f"not in the host's PID namespace: {NAMESPACE.evidence}")


def nvidia_smi(*args: str) -> str:
    """nvidia-smi's output; skips the test where there is no driver to answer."""
    if shutil.which("nvidia-smi") is None:
        pytest.skip("nvidia-smi is not installed: no NVIDIA driver here")
    result = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=60)
    if result.returncode != 0 or not result.stdout.strip():
        pytest.skip(f"nvidia-smi does not answer: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout


def smi_gpus() -> list[SmiGpu]:
    return parse_smi_xml(nvidia_smi("-q", "-x"))


@pytest.fixture(scope="module")
def real_gpus() -> list[SmiGpu]:
    """nvidia-smi's view of the GPUs; skips where no driver answers."""
    return smi_gpus()


def start_child(size: int) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(size)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    if line != f"ready {child.pid}":
        child.kill()
        child.wait()
        pytest.fail(f"the CUDA child did not start: {line or 'no output'}")
    return child


def end_child(child: subprocess.Popen[str]) -> None:
    if child.poll() is None:
        child.kill()
    child.wait()


@pytest.fixture(scope="module")
def cuda_process(real_gpus: list[SmiGpu]) -> Iterator[subprocess.Popen[str]]:
    """A process holding ALLOCATION bytes on device 0, filled by a kernel, for the module's tests."""
    child = start_child(ALLOCATION)
    time.sleep(1.0)  # the driver's process lists lag the allocation a little
    yield child
    end_child(child)


def gputop_json() -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--json"], capture_output=True, text=True, timeout=120, env=ENV
    )
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_gputop_json_agrees_with_nvidia_smi(real_gpus: list[SmiGpu], cuda_process: subprocess.Popen[str]) -> None:
    report = gputop_json()
    smi = smi_gpus()
    for gpu, reference in zip(report["gpus"], smi, strict=False):
        print(f"gputop GPU {gpu['index']}: {gpu['name']} {gpu['uuid']} memory {gpu['memory']}"
              f" temperature {gpu['temperature']} power {gpu['power']}")
        print(f"nvidia-smi: {reference}")
    if not HOST_PIDS:
        print(f"the child is not looked for: not in the host's PID namespace ({NAMESPACE.evidence})")
    assert compare(report, smi, cuda_process.pid if HOST_PIDS else None, ALLOCATION) == []


def _number(text: str) -> int | None:
    return None if text.startswith("[") or text in ("N/A", "") else int(text, 0)


def test_diagnosis_fields_agree_with_nvidia_smi(real_gpus: list[SmiGpu], cuda_process: subprocess.Popen[str]) -> None:
    from gputop.core.analysis.diagnosis.reasons import decode_reasons

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
    csv = nvidia_smi(f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits")
    smi = [dict(zip(fields, (v.strip() for v in line.split(",")), strict=True)) for line in csv.splitlines()]
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
    if not HOST_PIDS:
        return
    # The child waits on its stdin after its kernel: its SM use is 0 (not in MIG mode).
    (child,) = [p for g in report["gpus"] for p in g["processes"] if p["pid"] == cuda_process.pid]
    print(f"CUDA child: sm {child['sm_utilization']} idle_seconds {child['idle_seconds']}")
    if not report["gpus"][0]["mig_mode"]:
        assert child["sm_utilization"] in (0.0, None)


def test_the_process_screen_lists_the_nvidia_devices_a_process_holds(
    real_gpus: list[SmiGpu], cuda_process: subprocess.Popen[str]
) -> None:
    import psutil

    from gputop.core.host.procdetail import read_process_detail

    detail = read_process_detail((cuda_process.pid, psutil.Process(cuda_process.pid).create_time()))
    assert detail.devices.value is not None and "/dev/nvidiactl" in detail.devices.value


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@needs_host_pids
def test_gputop_export_serves_the_gpus_and_the_child(
    real_gpus: list[SmiGpu], cuda_process: subprocess.Popen[str]
) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gputop", "export", "--listen", f"127.0.0.1:{port}", "--interval", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )
    try:
        deadline, samples = time.monotonic() + 60, {}
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                    text = answer.read().decode()
            except OSError:
                time.sleep(0.25)
                continue
            samples = {
                (s.name, tuple(sorted(s.labels.items()))): s.value
                for family in text_string_to_metric_families(text) for s in family.samples
            }
            if any(name == "gputop_process_gpu_memory_bytes" and ("pid", str(cuda_process.pid)) in labels
                   for name, labels in samples):
                break
            time.sleep(0.25)
        else:
            pytest.fail(f"the child never appeared in /metrics; the last scrape:\n{samples}")
    finally:
        server.terminate()
        server.wait(timeout=30)
    smi = smi_gpus()
    for reference in smi:
        (total,) = [v for (name, labels), v in samples.items()
                    if name == "gputop_gpu_memory_total_bytes" and ("uuid", reference.uuid) in labels]
        assert reference.memory_total is not None
        assert abs(total - reference.memory_total) <= 0.01 * reference.memory_total
    (memory,) = [v for (name, labels), v in samples.items()
                 if name == "gputop_process_gpu_memory_bytes" and ("pid", str(cuda_process.pid)) in labels]
    assert memory >= ALLOCATION


@pytest.mark.serial
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@needs_host_pids
def test_the_tui_shows_the_child_and_k_ends_it(real_gpus: list[SmiGpu], tmp_path: Path) -> None:
    from e2e.test_tmux import TIMEOUT_S, Tmux, filter_box_closed

    child = start_child(256 * MiB)
    tmux = Tmux(tmp_path, ENV | {"TERM": "xterm-256color"})
    try:
        tmux.start([sys.executable, "-m", "gputop", "--interval", "0.5"], size=(160, 45))
        tmux.wait_for("the process panel", lambda s: "Processes" in s)
        # Filtered to the child's PID first: on a busy machine its row may be below the panel's fold.
        tmux.keys("/")
        tmux.wait_for("the filter box", lambda s: "text, PID, user, container" in s)
        tmux.keys(str(child.pid), literal=True)
        row = re.compile(rf"\s{child.pid}\s.*python")
        tmux.wait_for("the CUDA child's row", lambda s: any(row.search(line) for line in s.splitlines()))
        tmux.keys("Enter")
        tmux.wait_for("the filter box to close", filter_box_closed)
        tmux.keys("k")
        screen = tmux.wait_for("the kill dialog", lambda s: "Send a signal to 1 process?" in s)
        assert re.search(rf"PID {child.pid}\s", screen)
        tmux.keys("Enter")
        assert child.wait(timeout=TIMEOUT_S) == -15
        tmux.wait_for("the notice", lambda s: f"SIGTERM sent to PID {child.pid}" in s)
        tmux.keys("q")
        assert tmux.exit_status() == 0, f"the screen was:\n{tmux.screen()}"
    finally:
        end_child(child)
        tmux.kill_server()


def test_a_capture_of_this_machine_is_written_beside_the_results_and_replays_as_recorded(
    real_gpus: list[SmiGpu], cuda_process: subprocess.Popen[str], tmp_path: Path
) -> None:
    from capture_compare import differences, recorded_ticks, replay_documents

    from gputop.core.capture.capture_file import read_capture

    folder = results_dir(tmp_path)
    taken = folder / "capture.json.gz"
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "-i", "0.5", "doctor", "--capture", str(taken), "--seconds", "5"],
        capture_output=True, text=True, timeout=120, env=ENV,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    capture = read_capture(str(taken))
    path = folder / capture_name(capture.document())
    taken.rename(path)
    said = note(path, path.stat().st_size)
    (folder / NOTE_NAME).write_text(said + "\n")
    print(said)
    recorded = recorded_ticks(capture)
    assert len(recorded) >= 8
    for tick, (before, after) in enumerate(zip(recorded, replay_documents(path, len(recorded)), strict=True), 1):
        assert differences(before, after) == [], f"tick {tick}"
