"""Recordings: what was recorded comes back the same, and a damaged file replays up to the damage."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from gputop.core.recording.record import Recorder, RecordingError, read_recording
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource


def demo_snapshots(count: int) -> list:  # type: ignore[type-arg]
    clock = iter(float(1_800_000_000 + n) for n in range(10_000))
    sampler = Sampler(DemoSource(gpu_count=4, clock=lambda: 1_799_990_000.0), clock=lambda: next(clock))
    sampler.open()
    return [sampler.sample() for _ in range(count)]


@pytest.mark.parametrize("name", ["session.jsonl", "session.jsonl.gz"])
def test_a_recording_reads_back_as_the_same_snapshots(tmp_path: Path, name: str) -> None:
    snapshots = demo_snapshots(12)
    recorder = Recorder(str(tmp_path / name))
    for snapshot in snapshots:
        recorder.write(snapshot)
    recorder.close()
    recording = read_recording(str(tmp_path / name))
    assert recording.damage is None
    assert recording.snapshots == snapshots


def test_a_truncated_gzip_recording_replays_up_to_the_damage(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl.gz"
    recorder = Recorder(str(path))
    snapshots = demo_snapshots(6)
    for snapshot in snapshots:
        recorder.write(snapshot)
    recorder.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    recording = read_recording(str(path))
    assert 1 <= len(recording.snapshots) < 6
    assert recording.snapshots == snapshots[: len(recording.snapshots)]
    assert recording.damage is not None
    assert recording.damage.startswith(f"{path}: the file ends or breaks after line ")
    assert recording.damage.endswith(f"replaying the {len(recording.snapshots)} snapshots before it")


def test_a_corrupt_line_stops_the_replay_there_and_says_which(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    recorder = Recorder(str(path))
    for snapshot in demo_snapshots(3):
        recorder.write(snapshot)
    recorder.close()
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(2, '{"timestamp": 1, "gpus": oops}\n')
    path.write_text("".join(lines))
    recording = read_recording(str(path))
    assert len(recording.snapshots) == 2
    assert recording.damage is not None
    assert recording.damage.startswith(f"{path}: line 3 is damaged (")
    assert recording.damage.endswith("replaying the 2 snapshots before it")


def test_a_line_cut_off_mid_write_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    recorder = Recorder(str(path))
    for snapshot in demo_snapshots(2):
        recorder.write(snapshot)
    recorder.close()
    text = path.read_text()
    path.write_text(text[:-40])
    recording = read_recording(str(path))
    assert len(recording.snapshots) == 1
    assert recording.damage is not None and "after line 1" in recording.damage


def test_an_empty_or_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(RecordingError, match="holds no snapshots"):
        read_recording(str(tmp_path / "empty.jsonl"))
    with pytest.raises(RecordingError, match="cannot read .*missing.jsonl: No such file or directory"):
        read_recording(str(tmp_path / "missing.jsonl"))


def test_gputop_record_samples_for_the_duration_into_gzip_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl.gz"
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--demo", "record", str(path), "--duration", "1", "--interval", "0.25"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    with gzip.open(path, "rt") as handle:
        count = sum(1 for _ in handle)
    assert 3 <= count <= 5
    assert result.stderr == f"gputop: recorded {count} snapshots to {path}\n"
    assert len(read_recording(str(path)).snapshots) == count


def test_gputop_record_to_a_path_it_cannot_write_exits_2_with_one_line(tmp_path: Path) -> None:
    target = tmp_path / "no-such-dir" / "x.jsonl"
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--demo", "record", str(target), "--duration", "1"],
        capture_output=True, text=True, timeout=60,
    )
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"gputop: cannot write {target}: No such file or directory\n"
