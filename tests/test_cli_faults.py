"""Bad command lines and output paths: one clear line, exit status 2, no traceback, and no file touched
that the user did not name (nor the named one, when the command never got to run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from fakenvml import Scenario
from fakenvml.fixture import FakeNvml


def gputop(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gputop", *args], capture_output=True, text=True, timeout=60, env=env, cwd=cwd
    )


def assert_usage_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--interval", "1e9"], "argument -i/--interval: must be between 0.1 and 3600 seconds, not 1e9"),
        (["--interval", "inf"], "argument -i/--interval: must be between 0.1 and 3600 seconds, not inf"),
        (["--interval", "0.05"], "argument -i/--interval: must be between 0.1 and 3600 seconds, not 0.05"),
        (["--interval", ""], "argument -i/--interval: not a number of seconds: ''"),
        (["-i"], "argument -i/--interval: expected one argument"),
        (["--demo", "--demo-gpus", "0", "--once"], "--demo-gpus must be between 1 and 16"),
        (["--demo", "--demo-gpus", "-3", "--once"], "--demo-gpus must be between 1 and 16"),
        (["--demo", "--demo-gpus", "many"], "argument --demo-gpus: invalid int value: 'many'"),
        (["--color", "purple"], "argument --color: invalid choice: 'purple'"),
        (["--once", "--json"], "argument --json: not allowed with argument --once"),
        (["--demo", "record"], "the following arguments are required: FILE"),
        (["--demo", "record", "x.jsonl", "--interval", "-1"], "argument --interval: must be between 0.1 and 3600"),
        (["--demo", "record", "x.jsonl", "--duration", "soon"], "argument --duration: not a number of seconds"),
        (["--demo", "record", "x.jsonl", "--duration", "nan"], "argument --duration: must be a positive number"),
        (["--demo", "replay-everything"], "invalid choice: 'replay-everything'"),
    ],
)
def test_bad_values_exit_2_with_one_clear_message(args: list[str], message: str, tmp_path: Path) -> None:
    assert_usage_error(gputop(*args, cwd=tmp_path), message)
    assert list(tmp_path.iterdir()) == [], "a failed command wrote a file"


def test_record_to_a_directory_that_does_not_exist_says_so() -> None:
    result = gputop("--demo", "record", "/nonexistent/x")
    assert_usage_error(result, "gputop: cannot write /nonexistent/x: No such file or directory")
    assert result.stderr == "gputop: cannot write /nonexistent/x: No such file or directory\n"
    assert not Path("/nonexistent").exists()


def test_record_to_a_directory_says_it_is_one(tmp_path: Path) -> None:
    result = gputop("--demo", "record", str(tmp_path), "--duration", "1")
    assert_usage_error(result, f"gputop: cannot write {tmp_path}: Is a directory")
    assert list(tmp_path.iterdir()) == []


def test_record_to_a_full_disk_stops_with_a_clear_message() -> None:
    if not Path("/dev/full").exists():
        pytest.skip("needs /dev/full")
    result = gputop("--demo", "record", "/dev/full", "--duration", "5", "--interval", "0.1")
    assert_usage_error(result, "gputop: cannot write /dev/full: No space left on device")


@pytest.mark.parametrize(
    "args",
    [
        ["record", "{path}", "--duration", "-1"],
        ["--interval", "0", "record", "{path}"],
        ["--demo", "--demo-gpus", "99", "record", "{path}"],
    ],
    ids=["bad duration", "bad interval", "bad demo size"],
)
def test_a_command_that_fails_before_it_starts_leaves_the_named_file_alone(args: list[str], tmp_path: Path) -> None:
    precious = tmp_path / "precious.jsonl"
    precious.write_text("keep me\n")
    result = gputop(*(arg.format(path=precious) for arg in args), cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert precious.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["precious.jsonl"]


def test_no_driver_leaves_the_named_file_alone(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    fake_nvml.write(Scenario().gpu().fail_init("DRIVER_NOT_LOADED"))
    precious = tmp_path / "precious.jsonl"
    precious.write_text("keep me\n")
    result = gputop("record", str(precious), "--duration", "1", env=fake_nvml.env(), cwd=tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.startswith("gputop: ") and result.stderr.count("\n") == 1
    assert precious.read_text() == "keep me\n"
