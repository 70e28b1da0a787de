"""Recordings: one snapshot per line in the ``--json`` schema (JSON lines, gzip for ``.gz``).

The lines are written and read by the codec in ``snapshot_json``."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.forecast import Forecasts
from gputop.core.model import Snapshot
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_json import dumps, snapshot_to_dict


class RecordingError(Exception):
    """A recording cannot be opened or written; the message is one clear line."""


def _open_text(path: str, mode: str) -> IO[str]:
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.GzipFile(path, mode + "b"), encoding="utf-8")
    return open(path, mode, encoding="utf-8")


class Recorder:
    """Appends snapshots to a recording, one line each, flushed so a crash loses at most one line."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._file = _open_text(path, "w")
        except OSError as error:
            raise RecordingError(f"cannot write {path}: {error.strerror or error}") from None
        self.count = 0

    def write(
        self,
        snapshot: Snapshot,
        extra: dict[str, Any] | None = None,
        *,
        forecasts: Forecasts | None = None,
        alerts: Iterable[AlertEvent] | None = None,
        diagnoses: Diagnoses | None = None,
    ) -> None:
        """One line: the snapshot, its forecasts, diagnoses and the alert events of its tick (see the README)."""
        document = snapshot_to_dict(snapshot, forecasts, alerts, diagnoses)
        if extra:
            document.update(extra)
        try:
            self._file.write(dumps(document) + "\n")
            self._file.flush()
            raw = getattr(self._file, "buffer", None)
            if isinstance(raw, gzip.GzipFile):
                raw.flush(zlib.Z_SYNC_FLUSH)
        except OSError as error:
            raise RecordingError(f"cannot write {self.path}: {error.strerror or error}") from None
        self.count += 1

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as error:
            raise RecordingError(f"cannot finish {self.path}: {error.strerror or error}") from None


@dataclass(slots=True)
class Recording:
    """The snapshots read from a file, and where reading stopped if the file is damaged."""

    snapshots: list[Snapshot] = field(default_factory=list)
    extras: list[dict[str, Any]] = field(default_factory=list)
    damage: str | None = None


def read_recording(path: str) -> Recording:
    """Read every good line; a truncated or corrupt file stops at the damage, which is described."""
    recording = Recording()
    try:
        handle = _open_text(path, "r")
    except OSError as error:
        raise RecordingError(f"cannot read {path}: {error.strerror or error}") from None
    line_number = 0
    try:
        with handle:
            for line_number, line in enumerate(_lines(handle), start=1):
                if not line.strip():
                    continue
                try:
                    document = json.loads(line)
                    snapshot = snapshot_from_dict(document)
                except (ValueError, KeyError, TypeError) as error:
                    recording.damage = (
                        f"{path}: line {line_number} is damaged ({_short(error)}); "
                        f"replaying the {len(recording.snapshots)} snapshots before it"
                    )
                    break
                recording.snapshots.append(snapshot)
                recording.extras.append(_extra(document))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        recording.damage = (
            f"{path}: the file ends or breaks after line {line_number} ({_short(error)}); "
            f"replaying the {len(recording.snapshots)} snapshots before it"
        )
    if not recording.snapshots and recording.damage is None:
        raise RecordingError(f"{path} holds no snapshots")
    return recording


def _extra(document: dict[str, Any]) -> dict[str, Any]:
    """What a line holds besides the snapshot: its alert events, and forecasts by GPU index."""
    extra: dict[str, Any] = {}
    if "alerts" in document:
        extra["alerts"] = document["alerts"]
    forecasts = {gpu["index"]: gpu["forecast"] for gpu in document["gpus"] if "forecast" in gpu}
    if forecasts:
        extra["forecast"] = forecasts
    return extra


def _lines(handle: IO[str]) -> Iterator[str]:
    for line in handle:
        if not line.endswith("\n"):
            # The writer ends every line: one without an end was cut off mid-write.
            raise EOFError("the last line was cut off")
        yield line


def _short(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0][:120]
