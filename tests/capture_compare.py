"""Replaying a capture in this process and comparing it with what was recorded (tests/test_capture*.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gputop.core.analysis.foresight import Watcher
from gputop.core.capture.capture_file import Capture
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.sampler import Sampler
from gputop.core.settings import Thresholds
from gputop.core.sources.nvml_capture import open_capture

# The one field a replay is meant to change: it says it is a capture. Everything else, the
# timestamps included (the replay runs on the capture's clock), is as recorded...
REPLAY_DIFFERS = {"source": ("nvml", "capture")}
# ...but for when a GPU stopped answering: the device code takes that from this machine's clock.
THIS_MACHINE_S_TIME = {"not_answering_since"}


def replay_documents(path: Path, ticks: int) -> list[dict[str, Any]]:
    """What ``gputop --nvml-capture PATH record`` writes for the first ``ticks`` ticks."""
    source = open_capture(str(path), deadline_s=5.0)
    thresholds = Thresholds(**source.capture.facts.get("thresholds", {}))
    sampler = Sampler(source)
    watcher = Watcher(thresholds)
    sampler.open()
    documents = []
    try:
        for _ in range(ticks):
            snapshot = sampler.sample()
            foresight = watcher.update(snapshot)
            documents.append(snapshot_to_dict(snapshot, foresight.forecasts, foresight.events, foresight.diagnoses))
    finally:
        sampler.close()
    return documents


def differences(recorded: Any, replayed: Any, path: str = "") -> list[str]:
    """Where the replay's document says something else than the recorded one. A field the replay
    has and the recording has not (added to gputop since the capture was taken) is no difference."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        found = []
        for key, value in recorded.items():
            if key not in replayed:
                found.append(f"{path}/{key}: missing from the replay")
            elif not _as_meant(key, value, replayed[key]):
                found += differences(value, replayed[key], f"{path}/{key}")
        return found
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        pairs = enumerate(zip(recorded, replayed, strict=True))
        return [found for at, pair in pairs for found in differences(*pair, f"{path}[{at}]")]
    return [] if recorded == replayed else [f"{path}: recorded {recorded!r}, replayed {replayed!r}"]


def _as_meant(key: str, recorded: Any, replayed: Any) -> bool:
    """A difference the replay is meant to make (see REPLAY_DIFFERS, THIS_MACHINE_S_TIME)."""
    if REPLAY_DIFFERS.get(key) == (recorded, replayed):
        return True
    return key in THIS_MACHINE_S_TIME and (recorded is None) == (replayed is None)


def judgements(document: dict[str, Any]) -> set[str]:
    """The alerts raised and the diagnoses made in one tick's document, as comparable lines."""
    found = {
        f"alert {alert['kind']} gpu {alert['gpu']} {alert['subject']} cleared={alert['cleared']}"
        for alert in document.get("alerts", [])
    }
    for gpu in document["gpus"]:
        if gpu.get("verdict"):
            found.add(f"gpu {gpu['index']} verdict {gpu['verdict']}")
        for process in gpu["processes"]:
            if process.get("idle_seconds"):
                found.add(f"gpu {gpu['index']} pid {process['pid']} idle")
    return found


def recorded_ticks(capture: Capture) -> list[dict[str, Any]]:
    return [tick.json for tick in capture.ticks if tick.json is not None]
