"""Output that cannot be written, through the real command: a full disk, a reader that went away, a path
that cannot be written. One line on stderr and a non-zero status, never a traceback; a closed pipe ends
quietly, as ``cat`` does."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

GPUTOP = [sys.executable, "-m", "gputop"]
# Every command that prints its answer on stdout.
PRINTING = [
    ["--demo", "--once"],
    ["--demo", "--json"],
    ["--demo", "--once", "--by", "user"],
    ["export", "--print-dashboard"],
    ["export", "--print-alert-rules"],
    ["doctor"],
    ["doctor", "--json"],
]
PRINTING_IDS = [" ".join(args) for args in PRINTING]


def run_into(args: list[str], stdout: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*GPUTOP, *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", PRINTING, ids=PRINTING_IDS)
def test_a_full_disk_is_one_line_and_status_2(args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        result = run_into(args, full.fileno())
    assert result.stderr == "gputop: cannot write to standard output: No space left on device\n"
    assert result.returncode == 2


@pytest.mark.parametrize("args", PRINTING, ids=PRINTING_IDS)
def test_a_reader_that_went_away_ends_quietly_as_cat_does(args: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # as `| head -1` leaves it once head has its line
    try:
        result = run_into(args, write_end)
    finally:
        os.close(write_end)
    assert result.stderr == ""
    assert result.returncode == 128 + 13  # what a shell says of `cat big | head -1`: 128 + SIGPIPE


def test_a_shell_pipe_whose_reader_has_gone_is_quiet_too() -> None:
    command = " ".join(shlex.quote(word) for word in [*GPUTOP, "--demo", "--json"])
    result = subprocess.run(
        ["bash", "-c", f'{command} | true; echo "status ${{PIPESTATUS[0]}}"'],
        capture_output=True, text=True, timeout=60,
    )
    assert result.stderr == ""
    assert result.stdout == "status 141\n"


def test_record_under_a_file_says_it_is_not_a_directory(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("")
    result = run_into(["--demo", "record", f"{plain}/x.jsonl", "--duration", "1"], subprocess.PIPE)
    assert result.stderr == f"gputop: cannot write {plain}/x.jsonl: Not a directory\n"
    assert result.returncode == 2
    assert result.stdout == ""


def test_record_into_proc_says_what_failed() -> None:
    result = run_into(["--demo", "record", "/proc/version/x.jsonl", "--duration", "1"], subprocess.PIPE)
    assert result.stderr == "gputop: cannot write /proc/version/x.jsonl: Not a directory\n"
    assert result.returncode == 2


@contextlib.contextmanager
def mounted_tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A small tmpfs at ``where`` (root only); skips the test where mounting is not allowed."""
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs takes root")
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mount.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def test_record_on_a_read_only_file_system_says_so(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path / "ro", "ro,size=64k") as read_only:
        result = run_into(["--demo", "record", f"{read_only}/x.jsonl", "--duration", "1"], subprocess.PIPE)
    assert result.stderr == f"gputop: cannot write {read_only}/x.jsonl: Read-only file system\n"
    assert result.returncode == 2


@pytest.mark.parametrize("name", ["x.jsonl", "x.jsonl.gz"])
def test_record_on_a_file_system_that_fills_up_says_so(tmp_path: Path, name: str) -> None:
    """A gzip recording's last block is written when it is closed: that failure is one line too."""
    with mounted_tmpfs(tmp_path / "small", "size=16k") as small:
        filler = small / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as handle:
            handle.write(bytes(16 * 1024))
        result = run_into(["--demo", "record", str(small / name), "--duration", "2"], subprocess.PIPE)
    assert result.stderr == f"gputop: cannot write {small / name}: No space left on device\n"
    assert result.returncode == 2
