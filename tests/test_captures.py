"""Every capture in tests/captures/ replayed: gputop reads each machine's recorded NVML answers as it
read them when the capture was taken (the recorded ``--json``, tick by tick), and judges nothing there
that it did not judge then. A capture of a real machine added to the folder joins this test."""

from __future__ import annotations

from pathlib import Path

import pytest
from capture_compare import differences, judgements, recorded_ticks, replay_documents

from gputop.core.capture.capture_file import read_capture

CAPTURES = Path(__file__).parent / "captures"
# Captures are committed: each stays small (tests/gpu's note says to check before adding one).
MOST_BYTES = 256 * 1024


def captures() -> list[Path]:
    return sorted(path for path in CAPTURES.iterdir() if path.name.endswith((".json", ".json.gz")))


def test_the_fake_driver_s_captures_are_kept() -> None:
    names = {path.name for path in captures()}
    assert {
        "fake-mig.json.gz", "fake-gpm-and-pre-hopper.json.gz", "fake-size-probe-success.json.gz",
        "fake-not-supported.json.gz", "fake-lost-gpu.json.gz", "fake-old-driver.json.gz", "fake-hung-gpu.json.gz",
    } <= names


@pytest.mark.parametrize("path", captures(), ids=lambda path: path.name)
def test_a_capture_replays_as_recorded(path: Path) -> None:
    assert path.stat().st_size <= MOST_BYTES
    recorded = recorded_ticks(read_capture(str(path)))
    assert recorded, "a capture without a tick tests nothing"
    replayed = replay_documents(path, len(recorded))
    for tick, (before, after) in enumerate(zip(recorded, replayed, strict=True), start=1):
        assert differences(before, after) == [], f"tick {tick}"
        assert judgements(after) - judgements(before) == set(), f"tick {tick}: judged only in the replay"
