"""A capture gputop cannot replay says so in one line; one of a machine without GPUs, or whose GPU is
lost from the start, shows what gputop showed there."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakenvml import Scenario
from fakenvml.fixture import FakeNvml

from gputop.cli.main import main
from gputop.core.capture.capture_file import write_capture
from gputop.core.capture.take import CaptureOptions, take_capture
from gputop.core.settings import Settings


def capture_of(fake_nvml: FakeNvml, scenario: Scenario) -> dict[str, Any]:
    fake_nvml.write(scenario)
    fake_nvml.load()
    return take_capture(CaptureOptions(seconds=0.25, interval_s=0.1), Settings()).document


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("empty", "is empty: not a gputop capture"),
        ("truncated gzip", ": the gzip data is cut off or damaged ("),
        ("truncated", " is cut off or is not a gputop capture ("),
        ("newer schema", " is a capture of schema 2, newer than this gputop reads (1): upgrade gputop"),
        ("not a capture", ' is not a gputop capture (no "format": "gputop-nvml-capture")'),
        ("damaged call", ": the capture is damaged (a call without a function name or return code)"),
    ],
)
def test_a_capture_that_cannot_be_replayed_is_refused_in_one_line(
    fake_nvml: FakeNvml, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    document = capture_of(fake_nvml, Scenario().gpu())
    good = json.dumps(document).encode()
    path = tmp_path / "capture.json.gz"
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated gzip":
        path.write_bytes(gzip.compress(good)[: len(good) // 20])
    elif damage == "truncated":
        path = tmp_path / "capture.json"
        path.write_bytes(good[: len(good) // 2])
    elif damage == "newer schema":
        write_capture({**document, "schema": 2}, str(path))
    elif damage == "not a capture":
        write_capture({"schema": 1, "gpus": []}, str(path))
    else:
        document["ticks"][0]["calls"][0] = {"a": []}
        write_capture(document, str(path))
    for command in (["--json"], ["--once"], ["record", str(tmp_path / "out.jsonl")]):
        status, out, err = run(capsys, "--nvml-capture", str(path), *command)
        assert (status, out) == (2, "")
        assert err.startswith(f"gputop: {path}") and err.endswith(message + err.split(message)[-1])
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_capture_of_a_machine_without_gpus_replays_as_no_gpus(
    fake_nvml: FakeNvml, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "none.json"
    write_capture(capture_of(fake_nvml, Scenario()), str(path))
    status, out, err = run(capsys, "--nvml-capture", str(path), "--json")
    assert (status, err) == (0, "")
    document = json.loads(out)
    assert (document["gpus"], document["source"], document["hostname"]) == ([], "capture", "host-1")


def test_a_gpu_lost_from_the_first_tick_is_replayed_lost(
    fake_nvml: FakeNvml, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lost.json"
    write_capture(capture_of(fake_nvml, Scenario().gpu().gpu().lost(1)), str(path))
    fake_nvml.unload()
    status, out, err = run(capsys, "--nvml-capture", str(path), "--json")
    assert (status, err) == (0, "")
    answering, lost = json.loads(out)["gpus"]
    assert (answering["lost"], lost["lost"], lost["last_error"], lost["name"]) == (False, True, "GPU is lost", None)
    only_lost = tmp_path / "only-lost.json"
    write_capture(capture_of(fake_nvml, Scenario().gpu().lost(0)), str(only_lost))
    status, out, err = run(capsys, "--nvml-capture", str(only_lost), "--once", "--width", "80", "--color", "never")
    assert (status, err) == (0, "")
    assert out.splitlines()[0].startswith("host-1  ")
    # What --once says on the machine itself.
    assert out.splitlines()[1:] == [
        "[0] N/A  GPU LOST: not answering", "", "No GPU processes.", "", "Alerts",
        "  ⚠ GPU 0 is lost: it stopped answering the driver",
    ]


def test_a_capture_of_a_machine_where_nvml_would_not_start_replays_that(
    fake_nvml: FakeNvml, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "no-driver.json"
    taken = capture_of(fake_nvml, Scenario().gpu().fail_init("DRIVER_NOT_LOADED"))
    assert taken["open_failure"] == (
        "NVML is not available: nvmlInit failed: Driver Not Loaded — run `gputop doctor` to see why,"
        " or `gputop --demo` to try gputop without a GPU"
    )
    write_capture(taken, str(path))
    status, out, err = run(capsys, "--nvml-capture", str(path), "--once")
    assert (status, out) == (2, "")
    assert err == f"gputop: {path} (a capture): {taken['open_failure']}\n"


def test_the_help_and_a_failing_doctor_say_to_attach_a_capture_to_a_bug_report(
    fake_nvml: FakeNvml, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["doctor", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--capture FILE record every NVML call gputop makes and its answer" in help_text
    assert "attach it to a bug report" in help_text
    fake_nvml.write(Scenario().gpu().fail_init("DRIVER_NOT_LOADED"))
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "doctor"], capture_output=True, text=True, timeout=60, env=fake_nvml.env()
    )
    assert result.returncode == 1
    *_, before, last = result.stdout.split("\n\n")
    assert " ".join(last.split()) == (
        "To report this: `gputop doctor --capture capture.json.gz` records what this machine's NVML answers;"
        " attach that file to a bug report"
    )
    taken = subprocess.run(
        [sys.executable, "-m", "gputop", "doctor", "--capture", "failing.json", "--seconds", "0.2"],
        capture_output=True, text=True, timeout=60, env=fake_nvml.env(), cwd=fake_nvml.scenario_path.parent,
    )
    # Capturing: the verdict, and where the capture went (holding nvmlInit's answer); no hint to capture.
    assert (taken.returncode, taken.stdout) == (1, "")
    said = taken.stderr.splitlines()
    assert said[0] == "gputop doctor: gputop cannot run: nvmlInit failed: Driver Not Loaded"
    assert said[-1].startswith(
        "gputop: captured why NVML would not start (NVML is not available: nvmlInit failed: Driver Not Loaded)"
        " to failing.json ("
    )
    assert said[-1].endswith("): attach it to a bug report")


def test_the_demo_and_a_capture_cannot_both_be_the_gpus(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "--demo", "--nvml-capture", "capture.json.gz", "--json")
    assert (status, out, err) == (2, "", "gputop: --demo and --nvml-capture each choose the GPUs: give one of them\n")


@pytest.mark.parametrize("named", ["gputop.core.sources.factory.open_source", "os.system"])
def test_a_capture_that_names_something_to_call_gets_it_refused_not_called(
    fake_nvml: FakeNvml, tmp_path: Path, capsys: pytest.CaptureFixture[str], named: str
) -> None:
    document = capture_of(fake_nvml, Scenario().gpu())
    for tick in document["ticks"]:
        for call in tick["calls"]:
            if call["f"] == "nvmlDeviceGetMemoryInfo_v2":
                call["r"]["$"] = named
    path = tmp_path / "crafted.json"
    write_capture(document, str(path))
    status, out, err = run(capsys, "--nvml-capture", str(path), "--json")
    # The GPU's read fails, saying why, as any answer gputop cannot read would.
    assert (status, out, err) == (2, "", f"gputop: no GPU answered: read failed: nvmlDeviceGetMemoryInfo_v2:"
                                          f" ValueError: an answer of an unknown type {named!r}\n")


def test_a_call_the_capture_never_saw_answers_not_supported(
    fake_nvml: FakeNvml, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = capture_of(fake_nvml, Scenario().gpu(fan=55))
    for tick in document["ticks"]:
        tick["calls"] = [call for call in tick["calls"] if call["f"] != "nvmlDeviceGetFanSpeed"]
    path = tmp_path / "no-fan.json"
    write_capture(document, str(path))
    status, out, err = run(capsys, "--nvml-capture", str(path), "--json")
    assert (status, err) == (0, "")
    [gpu] = json.loads(out)["gpus"]
    # As a driver without the call would: no fan reading, every other figure as recorded.
    assert (gpu["fan"], gpu["answering"], gpu["temperature"]["current"]) == (None, True, 35)
    assert document["ticks"][-1]["json"]["gpus"][0]["fan"] == 55
