"""The real command against a fake driver that hangs: --json, --once, record and export never wait on it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fakenvml import INIT_FUNCTIONS, GiB, Scenario
from fakenvml.fixture import FakeNvml

DEADLINE_S = 0.5
STUCK = f"nvmlDeviceGetMemoryInfo_v2 did not answer within {DEADLINE_S:g}s"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "settings.toml"
    path.write_text(f"driver_deadline_s = {DEADLINE_S}\n")
    return path


def machine() -> Scenario:
    return (
        Scenario()
        .gpu(name="NVIDIA H100 80GB HBM3", memory_used=40 * GiB, util_gpu=87)
        .gpu(name="NVIDIA L4", memory_used=1 * GiB, util_gpu=12)
    )


def gputop(fake: FakeNvml, config: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--config", str(config), *args],
        capture_output=True, text=True, timeout=60, env=fake.env(),
    )
    return result, time.monotonic() - started


def within_deadline(fake: FakeNvml, config: Path, stuck: Scenario) -> subprocess.CompletedProcess[str]:
    """``gputop --json`` on ``stuck``, which must finish within the deadline and a second of the usual run.

    The usual run and the stuck one side by side, up to three times: on a machine busy with other
    tests one pair can differ by a second of waiting for a CPU; a command that waits on a stuck
    call (10 s) fails every pair.
    """
    pairs = []
    for _ in range(3):
        fake.write(machine())
        _, usual = gputop(fake, config, "--json")
        fake.write(stuck)
        result, took = gputop(fake, config, "--json")
        pairs.append((round(usual, 2), round(took, 2)))
        if took < usual + DEADLINE_S + 1.0:
            return result
    raise AssertionError(f"--json waited beyond the deadline and a second: (usual, stuck) runs {pairs}")


def test_json_reports_a_hung_gpu_and_finishes_within_the_deadline(fake_nvml: FakeNvml, config: Path) -> None:
    result = within_deadline(fake_nvml, config, machine().stall(1, 10.0, "nvmlDeviceGetMemoryInfo"))

    assert result.returncode == 0, result.stderr
    first, second = json.loads(result.stdout)["gpus"]
    assert (first["answering"], first["utilization"]["gpu"], first["memory"]["used"]) == (True, 87, 40 * GiB)
    assert (second["answering"], second["last_error"], second["name"]) == (False, STUCK, "NVIDIA L4")
    assert second["memory"] == {"total": None, "used": None, "free": None, "reserved": None}
    assert second["utilization"]["gpu"] is None and second["not_answering_since"] > 0


def test_once_says_which_gpu_is_not_answering(fake_nvml: FakeNvml, config: Path) -> None:
    fake_nvml.write(machine().stall(1, 10.0, "nvmlDeviceGetMemoryInfo"))

    result, _ = gputop(fake_nvml, config, "--once")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[1].startswith("[0] NVIDIA H100 80GB HBM3")
    assert lines[3:5] == ["[1] NVIDIA L4  NOT ANSWERING", f"    {STUCK}"]


@pytest.mark.parametrize("mode", ["--json", "--once"])
def test_when_no_gpu_answers_it_exits_2_with_one_line(fake_nvml: FakeNvml, config: Path, mode: str) -> None:
    fake_nvml.write(machine().stall(None, 10.0, "nvmlDeviceGetMemoryInfo"))

    result, _ = gputop(fake_nvml, config, mode)

    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"gputop: no GPU answered: {STUCK}\n"


def test_gpus_that_cannot_be_counted_exit_2_with_one_line(fake_nvml: FakeNvml, config: Path) -> None:
    fake_nvml.write(machine().delay("nvmlDeviceGetCount", 10.0))

    result, _ = gputop(fake_nvml, config, "--json")

    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"gputop: NVML is not available: nvmlDeviceGetCount did not answer within {DEADLINE_S:g}s"
        " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU\n"
    )


def test_a_hung_nvml_init_exits_2_with_one_line(fake_nvml: FakeNvml, config: Path) -> None:
    result = within_deadline(fake_nvml, config, machine().delay(INIT_FUNCTIONS, 10.0))

    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"gputop: NVML is not available: nvmlInit did not answer within {DEADLINE_S:g}s"
        " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU\n"
    )


def test_record_writes_a_line_every_interval_with_the_hung_gpu_marked(
    fake_nvml: FakeNvml, config: Path, tmp_path: Path
) -> None:
    fake_nvml.write(machine().stall(1, 10.0, "nvmlDeviceGetUtilizationRates"))
    recording = tmp_path / "stall.jsonl"

    result, _ = gputop(fake_nvml, config, "record", str(recording), "--duration", "2", "--interval", "0.2")

    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in recording.read_text().splitlines()]
    assert [line["gpus"][1]["answering"] for line in lines] == [False] * len(lines)
    assert all(line["gpus"][0]["utilization"]["gpu"] == 87 for line in lines)
    # The first tick waits out the deadline; every later one comes at the interval, sooner than
    # the deadline would allow if it were waited out again.
    gaps = [b["timestamp"] - a["timestamp"] for a, b in zip(lines[1:], lines[2:], strict=False)]
    assert len(lines) >= 6 and max(gaps) < DEADLINE_S


def test_export_answers_at_once_and_serves_no_figures_for_a_hung_gpu(fake_nvml: FakeNvml, config: Path) -> None:
    fake_nvml.write(machine().stall(1, 10.0, "nvmlDeviceGetMemoryInfo"))
    exporter = subprocess.Popen(
        [sys.executable, "-m", "gputop", "--config", str(config), "export", "--listen", "127.0.0.1:0",
         "--interval", "0.2"],
        stderr=subprocess.PIPE, text=True, env=fake_nvml.env(),
    )
    try:
        assert exporter.stderr is not None
        served = re.search(r"http://127\.0\.0\.1:(\d+)/metrics", exporter.stderr.readline())
        assert served, "the exporter did not say where it listens"
        url = f"http://127.0.0.1:{served.group(1)}/metrics"
        text = ""
        give_up = time.monotonic() + 20
        while 'gputop_gpu_answering{gpu="1"' not in text and time.monotonic() < give_up:
            time.sleep(0.05)
            text = urllib.request.urlopen(url, timeout=5).read().decode()
        for _ in range(3):
            started = time.monotonic()
            text = urllib.request.urlopen(url, timeout=5).read().decode()
            assert time.monotonic() - started < 2.0  # the hung call has 10 s to run
        answering = re.findall(r'gputop_gpu_answering\{gpu="(\d)".*\} (\S+)', text)
        assert answering == [("0", "1.0"), ("1", "0.0")]
        used = re.findall(r'gputop_gpu_memory_used_bytes\{gpu="(\d)"', text)
        assert used == ["0"]
    finally:
        exporter.terminate()
        exporter.wait(10)
