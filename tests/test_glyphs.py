"""The glyph table: which terminals get ASCII, what each glyph becomes there, and ``--once`` in ASCII
through the real command."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.format import bar_cells
from gputop.core.glyphs import ASCII, UNICODE, to_ascii, use_ascii, wants_ascii, wants_no_colour

LOCALE = ("LC_ALL", "LC_CTYPE", "LANG", "TERM", "NO_COLOR")


@pytest.mark.parametrize(
    ("environ", "ascii_only"),
    [
        ({"LANG": "C", "TERM": "xterm"}, True),
        ({"LANG": "POSIX"}, True),
        ({"LANG": "en_US"}, True),  # glibc's en_US is ISO-8859-1
        ({"LANG": "de_DE.ISO-8859-15@euro"}, True),
        ({"LC_ALL": "C", "LANG": "en_US.UTF-8"}, True),  # LC_ALL wins
        ({"LC_CTYPE": "C", "LANG": "en_US.UTF-8"}, True),
        ({"LC_ALL": "", "LC_CTYPE": "", "LANG": "C"}, True),  # empty is not set
        ({"LANG": "en_US.UTF-8"}, False),
        ({"LANG": "C.utf8"}, False),
        ({"LC_CTYPE": "en_GB.UTF-8", "LANG": "C"}, False),
        ({}, False),  # nothing set: taken as UTF-8, as most terminals are
        ({"TERM": "vt100", "LANG": "en_US.UTF-8"}, True),
        ({"TERM": "vt220", "LANG": "en_US.UTF-8"}, True),
        ({"TERM": "linux", "LANG": "en_US.UTF-8"}, True),
        ({"TERM": "vt100-am", "LANG": "en_US.UTF-8"}, True),
        ({"TERM": "xterm-256color", "LANG": "en_US.UTF-8"}, False),
        ({"TERM": "screen.linux", "LANG": "en_US.UTF-8"}, False),  # tmux/screen draw the glyphs themselves
    ],
)
def test_which_terminals_and_locales_get_ascii(environ: dict[str, str], ascii_only: bool) -> None:
    assert wants_ascii(environ) is ascii_only


@pytest.mark.parametrize(("value", "no_colour"), [("1", True), ("true", True), ("0", True), ("", False), (None, False)])
def test_no_color_is_any_non_empty_value(value: str | None, no_colour: bool) -> None:
    assert wants_no_colour({} if value is None else {"NO_COLOR": value}) is no_colour


def test_every_glyph_becomes_one_ascii_character_a_cell() -> None:
    assert to_ascii("╭─ GPU 0 ─╮") == "+- GPU 0 -+"
    assert to_ascii("┏━┓┃┗━┛") == "+=+|+=+"  # heavy
    assert to_ascii("┏╍┓╏┗╍┛") == "+-+:+-+"  # dashed
    assert to_ascii("╔═╗║╚═╝") == "+=+|+=+"  # double
    assert to_ascii("⚠ 2  ✚ HEALTH  ✖ LOST  ● tagged  45°C  a · b  python trai…") == (
        "! 2  + HEALTH  x LOST  * tagged  45 C  a | b  python trai~"
    )
    assert to_ascii("▲▼↑↓←→") == "^v^v<>"
    # Characters nobody listed: a question mark a cell, so that what follows stays in its column.
    assert to_ascii("训练 é x\u0303|") == "???? ? x|"
    assert to_ascii("plain ASCII \x1b[1mstays\x1b[0m") == "plain ASCII \x1b[1mstays\x1b[0m"


def test_the_two_sets_name_the_same_drawings() -> None:
    assert len(UNICODE.spark_levels) > len(ASCII.spark_levels) > 2
    assert len(UNICODE.bar_eighths) == 7 and ASCII.bar_eighths == ""
    assert all(text.isascii() for text in (ASCII.bar_full, ASCII.bar_empty, ASCII.bar_unknown, ASCII.spark_levels))


@pytest.fixture
def ascii_set() -> Iterator[None]:
    use_ascii(True)
    try:
        yield
    finally:
        use_ascii(False)


def test_an_ascii_bar_is_whole_cells_rounded(ascii_set: None) -> None:
    assert bar_cells(43, 10) == ("####", "......")
    assert bar_cells(46, 10) == ("#####", ".....")
    assert bar_cells(100, 4) == ("####", "")


def test_a_unicode_bar_keeps_its_eighths() -> None:
    assert bar_cells(43, 10) == ("████▎", "░░░░░")


def gputop(*args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    base = {name: value for name, value in os.environ.items() if name not in LOCALE}
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True, env=base | env, timeout=60)


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["--demo", "--once"], {"LANG": "C"}),
        (["--demo", "--once", "--width", "100"], {"LC_ALL": "C"}),
        (["--demo", "--once"], {"LANG": "C.UTF-8", "TERM": "vt220"}),
        (["--demo", "--once", "--ascii"], {"LANG": "C.UTF-8"}),
        (["--demo", "--once", "--by", "user"], {"LANG": "C"}),
    ],
    ids=["LANG=C", "LC_ALL=C", "TERM=vt220", "--ascii", "--by user"],
)
def test_once_in_a_c_locale_is_ascii(args: list[str], env: dict[str, str]) -> None:
    result = gputop(*args, **env)
    assert result.returncode == 0, result.stderr
    assert re.findall(rb"[^\x00-\x7f]+", result.stdout) == []
    if "--by" not in args:
        assert re.search(rb"\n    #+\.+ ", result.stdout), "the memory bars, in ASCII"


def test_once_on_utf8_keeps_its_glyphs() -> None:
    result = gputop("--demo", "--once", LANG="C.UTF-8")
    assert "█".encode() in result.stdout and "└ MIG".encode() in result.stdout


def test_the_settings_file_can_ask_for_ascii(tmp_path: Path) -> None:
    settings = tmp_path / "settings.toml"
    settings.write_text("ascii = true\n")
    result = gputop("--demo", "--once", "--config", str(settings), LANG="C.UTF-8")
    assert result.stderr == b""
    assert re.findall(rb"[^\x00-\x7f]+", result.stdout) == []
    assert b"+ MIG 0" in result.stdout


def test_doctor_and_a_refusal_in_a_c_locale_are_ascii(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().fail_init("DRIVER_NOT_LOADED"))
    env = {name: value for name, value in fake_nvml.env().items() if name not in LOCALE} | {"LANG": "C"}
    refusal = subprocess.run([sys.executable, "-m", "gputop", "--once"], capture_output=True, env=env, timeout=60)
    assert refusal.returncode == 2
    assert refusal.stderr.startswith(b"gputop: NVML is not available: ")
    assert b" - run `gputop doctor` to see why" in refusal.stderr and refusal.stderr.isascii()
    doctor = subprocess.run([sys.executable, "-m", "gputop", "doctor"], capture_output=True, env=env, timeout=60)
    utf8 = subprocess.run(
        [sys.executable, "-m", "gputop", "doctor"], capture_output=True, env=env | {"LANG": "C.UTF-8"}, timeout=60
    )
    assert doctor.returncode == utf8.returncode == 1
    assert "→ the NVIDIA kernel module".encode() in utf8.stdout
    assert doctor.stdout.isascii() and b"> the NVIDIA kernel module" in doctor.stdout
    assert doctor.stdout.decode() == to_ascii(utf8.stdout.decode())
