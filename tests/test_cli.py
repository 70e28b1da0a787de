"""The command line: one-shot output from the demo, and clear errors for bad arguments."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def gputop(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True, text=True, timeout=60)


def test_json_from_the_demo_is_one_document_with_every_gpu_and_process() -> None:
    result = gputop("--demo", "--json")
    assert result.returncode == 0 and result.stderr == ""
    document = json.loads(result.stdout)
    assert document["source"] == "demo"
    assert [gpu["index"] for gpu in document["gpus"]] == [0, 1, 2, 3]
    assert sorted(document["gpus"][0]) == sorted([
        "index", "name", "uuid", "pci_bus_id", "lost", "answering", "not_answering_since", "last_error", "read_failed",
        "memory", "utilization", "temperature", "fan", "power", "clocks", "pstate", "pcie", "mig_mode",
        "mig_devices", "processes", "processes_known", "forecast",
        "clock_event_reasons", "health", "verdict", "unattributed_memory", "activity", "nvlink", "energy",
        "allocation",
    ])
    assert [m["index"] for m in document["gpus"][2]["mig_devices"]] == [0, 1, 2]
    assert sum(len(gpu["processes"]) for gpu in document["gpus"]) == 10  # torchrun has two workers


def test_once_piped_has_no_colour_and_fits_80_columns() -> None:
    result = gputop("--demo", "--once")
    assert result.returncode == 0
    assert "\x1b" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[1].startswith("[0] NVIDIA H100 80GB HBM3")
    assert max(len(line) for line in lines) <= 80
    assert "\x1b[" in gputop("--demo", "--once", "--color", "always").stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "0"], "argument -i/--interval: must be between 0.1 and 3600 seconds, not 0"),
        (["--interval", "-5"], "argument -i/--interval: must be between 0.1 and 3600 seconds, not -5"),
        (["--interval", "nan"], "argument -i/--interval: must be between 0.1 and 3600 seconds, not nan"),
        (["--interval", "soon"], "argument -i/--interval: not a number of seconds: 'soon'"),
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["--demo", "--demo-gpus", "40", "--once"], "--demo-gpus must be between 1 and 16"),
        (["record", "x.jsonl", "--duration", "-1"], "argument --duration: must be a positive number of seconds"),
    ],
)
def test_bad_arguments_exit_2_with_a_clear_message_and_no_traceback(args: list[str], message: str) -> None:
    result = gputop(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def once(*args: str, columns: str | None = None) -> list[str]:
    import os

    environment = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    if columns is not None:
        environment["COLUMNS"] = columns
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--demo", "--once", *args],
        capture_output=True, text=True, timeout=60, env=environment,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


VLLM = "python -m vllm.entrypoints.openai.api_server --model mistral-7b"


def test_once_takes_the_terminals_width_or_width_n_and_marks_every_cut() -> None:
    narrow = once()
    assert max(len(line) for line in narrow) == 80
    vllm = next(line for line in narrow if "vllm" in line)
    assert vllm.endswith("…") and len(vllm) == 80 and VLLM not in vllm
    wide = once(columns="132")  # what the terminal says its width is
    assert max(len(line) for line in wide) == 132
    assert next(line for line in wide if "vllm" in line).endswith(VLLM)
    assert max(len(line) for line in once("--width", "100")) == 100


def test_once_ends_with_the_alerts_json_reports() -> None:
    document = json.loads(gputop("--demo", "--json").stdout)
    messages = [alert["message"] for alert in document["alerts"]]
    assert "GPU 1 memory at 94% (75.1GiB / 80.0GiB)" in messages
    lines = once(columns="200")
    assert lines[-1 - len(messages) :] == ["Alerts", *(f"  ⚠ {message}" for message in messages)]


def test_width_below_60_is_refused_in_one_line() -> None:
    result = gputop("--demo", "--once", "--width", "20")
    assert result.returncode == 2
    assert "must be at least 60 columns, not 20" in result.stderr
