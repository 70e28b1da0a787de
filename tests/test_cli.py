"""The command line: one-shot output from the demo, and clear errors for bad arguments."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time

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


def test_once_piped_has_no_colour_fits_80_columns_and_prints_whole_commands() -> None:
    result = gputop("--demo", "--once")
    assert result.returncode == 0
    assert "\x1b" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[1].startswith("[0] NVIDIA H100 80GB HBM3")
    # As ps ww: a command line is never cut on its way to a pipe or a file; the rest fits 80 columns.
    assert next(line for line in lines if "vllm" in line).endswith("  " + VLLM)
    processes = lines.index(next(line for line in lines if line.lstrip().startswith("GPU     PID")))
    table = lines[processes + 1 : lines.index("", processes)]
    assert len(table) == 10 and max(len(line) for line in table) > 80
    assert max(len(line) for line in lines if line not in table) <= 80
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
    narrow = once("--width", "80")
    assert max(len(line) for line in narrow) == 80
    vllm = next(line for line in narrow if "vllm" in line)
    # Cut in the middle: the program and its module, "…", the end.
    assert vllm.endswith("  python -m vllm.e…stral-7b") and len(vllm) == 80
    wide = once(columns="132")  # what the terminal says its width is
    assert max(len(line) for line in wide if "vllm" not in line) == 132
    assert next(line for line in wide if "vllm" in line).endswith(VLLM)
    assert max(len(line) for line in once("--width", "100")) == 100
    # The ranks of one job keep what tells them apart when their commands are cut.
    ranks = [line for line in once("--width", "76") if "--local-rank" in line]
    assert [line[line.index("  python") + 2 :] for line in ranks] == ["python…--local-rank 1", "python…--local-rank 0"]
    ranks = [line for line in once("--width", "70") if "local-rank" in line]
    assert [line[-17:] for line in ranks] == ["  …--local-rank 1", "  …--local-rank 0"]


# A duration as alerts write it: "25m01s", "42s", "1h24m".
DURATION = re.compile(r"\b(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?\b")


def durations_apart(message: str) -> tuple[str, list[int]]:
    """The message with each duration replaced by {}, and the durations in seconds."""
    seconds: list[int] = []

    def take(match: re.Match[str]) -> str:
        if not match.group(0):
            return ""
        hours, minutes, secs = (int(part or 0) for part in match.groups())
        seconds.append(3600 * hours + 60 * minutes + secs)
        return "{}"

    return DURATION.sub(take, message), seconds


def test_once_ends_with_the_alerts_json_reports() -> None:
    started = time.monotonic()
    document = json.loads(gputop("--demo", "--json").stdout)
    messages = [alert["message"] for alert in document["alerts"]]
    assert "GPU 1 memory at 94% (75.1GiB / 80.0GiB)" in messages
    lines = once(columns="200")
    apart_s = math.ceil(time.monotonic() - started)
    alerts = lines[-1 - len(messages) :]
    assert alerts[0] == "Alerts"
    # The same alerts in the same words. An idle time is counted from each run's own start to its
    # sample (the demo's notebook idle since 25 minutes before it starts), so the two runs' may
    # differ by the seconds a busy machine took between start and sample ("25m01s", "25m00s").
    for written, reported in zip(alerts[1:], messages, strict=True):
        assert written.startswith("  ⚠ ")
        words, seconds = durations_apart(written[4:])
        assert (words, len(seconds)) == (durations_apart(reported)[0], len(durations_apart(reported)[1]))
        for later, earlier in zip(seconds, durations_apart(reported)[1], strict=True):
            assert abs(later - earlier) <= apart_s, (written, reported)


def test_width_below_60_is_refused_in_one_line() -> None:
    result = gputop("--demo", "--once", "--width", "20")
    assert result.returncode == 2
    assert "must be at least 60 columns, not 20" in result.stderr


def process_rows(lines: list[str]) -> list[tuple[int, str]]:
    """(PID, GPU-MEM) of each process line of --once, in the order printed."""
    start = next(n for n, line in enumerate(lines) if line.lstrip().startswith("GPU     PID")) + 1
    rows = []
    for line in lines[start:]:
        if not line.strip():
            break
        fields = line.split()
        rows.append((int(fields[1]), fields[4]))
    return rows


def test_once_sorts_as_the_tui_does_by_gpu_memory_unless_the_settings_say_otherwise(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from gputop.cli.main import main  # in this process: two runs of the real command line, without two start-ups

    def run_once(*args: str) -> list[str]:
        assert main(["--demo", "--once", "--width", "200", *args]) == 0
        return capsys.readouterr().out.splitlines()

    by_memory = process_rows(run_once())
    gib = [float(memory.removesuffix("GiB")) for _, memory in by_memory if memory.endswith("GiB")]
    assert len(by_memory) == 10 and len(gib) >= 8
    assert gib == sorted(gib, reverse=True) and gib[0] > gib[-1]  # not grouped by GPU
    settings = tmp_path / "gputop.toml"
    settings.write_text('[processes]\nsort_column = "pid"\nsort_descending = false\n')
    by_pid = process_rows(run_once("--config", str(settings)))
    assert [pid for pid, _ in by_pid] == sorted(pid for pid, _ in by_memory)


# Each key --help names, as Textual names it, and the action the key map binds it to.
HELP_KEYS = {
    "enter": "open_process", "k": "kill", "f9": "kill", "space": "tag", "slash": "filter", "f4": "filter",
    "escape": "clear_filter", "t": "toggle_tree", "f5": "toggle_tree", "M": "sort_by('gpu_memory')",
    "P": "sort_by('cpu')", "T": "sort_by('time')", "N": "sort_by('pid')", "less_than_sign": "sort_move(-1)",
    "greater_than_sign": "sort_move(1)", "u": "pick_user", "0": "only_gpu(0)", "9": "only_gpu(9)",
    "a": "all_gpus", "g": "detail_selected", "c": "toggle_compact", "exclamation_mark": "alert_log",
    "q": "quit", "f10": "quit", "minus": "fold", "plus": "unfold", "right_square_bracket": "interval(-1)",
    "left_square_bracket": "interval(1)",
}


def test_help_names_the_main_keys_each_bound_as_it_says() -> None:
    from textual.binding import Binding

    from gputop.cli.args import build_parser
    from gputop.ui.keymap import BINDINGS, REFUSALS, REPLAY_ACTIONS

    keys_part = build_parser().format_help().split("keys in the TUI (F1 lists them all):\n", 1)[1]
    assert "  k  F9            send a signal to the selected process (or those tagged with Space)\n" in keys_part
    assert "  t  F5            the process tree: workers under their launcher\n" in keys_part
    assert keys_part.endswith("  q  F10           quit\n")
    bound = {
        key.strip(): binding.action
        for binding in BINDINGS
        if isinstance(binding, Binding) and binding.action not in REFUSALS | REPLAY_ACTIONS  # the live TUI's
        for key in binding.key.split(",")
    }
    assert {key: bound.get(key) for key in HELP_KEYS} == HELP_KEYS
