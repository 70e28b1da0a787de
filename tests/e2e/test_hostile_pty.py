"""The real gputop in a pseudo-terminal, showing real processes with hostile command lines.

Checks the raw bytes written to the terminal: no escape sequence from a process
name reaches it, and every name shows as literal, escaped text in the panel,
the kill dialog and the detail screen. ``--once`` and ``--json`` likewise.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml
from rich.cells import cell_len

from .hostile import ARGS, CASES, FORBIDDEN, spawn_all

pytest.importorskip("pyte", reason="needs pyte (pip install -e '.[test]')")

from .ptyterm import PtyTerminal  # noqa: E402 - needs pyte

COLUMNS, ROWS = 160, 50


@pytest.fixture(scope="module")
def hostile_processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    yield from spawn_all()


def machine(processes: list[subprocess.Popen[bytes]]) -> Scenario:
    scenario = Scenario().gpu(name="NVIDIA H100 80GB HBM3")
    for n, process in enumerate(processes):
        scenario.process(gpu=0, pid=process.pid, used=(n + 1) * GiB)
    return scenario


def assert_nothing_raw(raw: bytes) -> None:
    for forbidden in FORBIDDEN:
        assert forbidden not in raw, f"{forbidden!r} reached the terminal"


@pytest.fixture
def terminal(fake_nvml: FakeNvml, hostile_processes: list[subprocess.Popen[bytes]]) -> Iterator[PtyTerminal]:
    fake_nvml.write(machine(hostile_processes))
    term = PtyTerminal([sys.executable, "-m", "gputop", "--interval", "0.5"], fake_nvml.env(), COLUMNS, ROWS)
    yield term
    term.close()


def shown_everywhere(screen: str) -> bool:
    # pyte, like a terminal, composes combining marks (NFC).
    return all(unicodedata.normalize("NFC", case.shown) in screen for case in CASES)


def test_hostile_names_show_as_escaped_text_in_the_panel_dialog_and_detail(
    terminal: PtyTerminal, hostile_processes: list[subprocess.Popen[bytes]]
) -> None:
    def rows(screen: str) -> list[str]:
        return [line for line in screen.splitlines() if any(f" {p.pid} " in line for p in hostile_processes)]

    # Until the full screen is written whole, a read can catch it half over the plain first frame.
    screen = terminal.wait_for(
        "every hostile process in the panel, once each",
        lambda s: shown_everywhere(s) and len(rows(s)) == len(CASES),
    )
    # Rows stay aligned: every process row ends at the panel's right border.
    shown = rows(screen)
    assert all(line.rstrip().endswith("│") and cell_len(line.rstrip()) == COLUMNS for line in shown), shown

    terminal.type(b" " * len(CASES))  # tag every process
    terminal.type(b"k")
    dialog = terminal.wait_for("the kill dialog", lambda s: f"Send a signal to {len(CASES)} processes?" in s)
    for case in CASES:
        assert unicodedata.normalize("NFC", case.shown[:20]) in dialog, case.name
    terminal.type(b"\x1b")  # Esc: cancel
    terminal.wait_for("the dialog to close", lambda s: "Send a signal" not in s)
    assert all(process.poll() is None for process in hostile_processes), "cancel sent nothing"

    terminal.type(b"g")
    detail = terminal.wait_for("the detail screen", lambda s: "Memory used (GiB)" in s and shown_everywhere(s))
    assert "GPU 0" in detail
    terminal.type(b"\x1b")
    terminal.wait_for("the main screen", lambda s: "Processes " in s and "Memory used" not in s)

    terminal.type(b"q")
    assert terminal.wait_exit() == 0
    assert_nothing_raw(bytes(terminal.raw))
    assert "pwned" not in terminal.screen.title, "the window title was changed"


def gputop(fake_nvml: FakeNvml, *args: str) -> subprocess.CompletedProcess[bytes]:
    # A strict UTF-8 stdout, as on a machine with a UTF-8 locale: undecodable argv bytes must not crash it.
    env = fake_nvml.env() | {"PYTHONIOENCODING": "utf-8:strict"}
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True, timeout=60, env=env)


def test_once_shows_hostile_names_escaped_and_writes_no_escape_sequences(
    fake_nvml: FakeNvml, hostile_processes: list[subprocess.Popen[bytes]]
) -> None:
    fake_nvml.write(machine(hostile_processes))
    for colour in ("never", "always"):
        result = gputop(fake_nvml, "--once", "--color", colour)
        assert result.returncode == 0, result.stderr.decode(errors="replace")
        assert_nothing_raw(result.stdout)
        text = result.stdout.decode("utf-8")  # valid UTF-8
        for case in CASES:
            assert case.shown[:20] in text, case.name
        if colour == "never":
            assert "\x1b" not in text


def test_json_is_valid_utf8_and_keeps_undecodable_bytes_as_escapes(
    fake_nvml: FakeNvml, hostile_processes: list[subprocess.Popen[bytes]]
) -> None:
    fake_nvml.write(machine(hostile_processes))
    result = gputop(fake_nvml, "--json")
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert_nothing_raw(result.stdout)
    document = json.loads(result.stdout.decode("utf-8"))
    commands = {p["pid"]: p["command"] for p in document["gpus"][0]["processes"]}
    for case, process in zip(CASES, hostile_processes, strict=True):
        # The JSON holds the command line exactly (undecodable bytes as surrogate escapes, as Python reads them).
        argv0 = case.argv0.decode("utf-8", "surrogateescape")
        assert commands[process.pid] == argv0 + ARGS, case.name


def test_record_keeps_hostile_names_and_reads_them_back(
    fake_nvml: FakeNvml, hostile_processes: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    from gputop.core.recording.record import read_recording

    fake_nvml.write(machine(hostile_processes))
    path = tmp_path / "hostile.jsonl"
    result = gputop(fake_nvml, "record", str(path), "--duration", "0.3", "--interval", "0.1")
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    path.read_bytes().decode("utf-8")  # valid UTF-8
    recording = read_recording(str(path))
    assert recording.damage is None and recording.snapshots
    commands = {p.pid: p.command for p in recording.snapshots[-1].processes()}
    for case, process in zip(CASES, hostile_processes, strict=True):
        assert (commands[process.pid] or "").startswith(case.argv0.decode("utf-8", "surrogateescape")), case.name
