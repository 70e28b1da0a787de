"""A capture file: what one machine's NVML answered gputop, tick by tick, and what gputop made of it.

One JSON document (gzip when the name ends in ``.gz``), its fields in docs/capture.md. ``SCHEMA`` is
raised when a field changes meaning; a reader refuses a newer schema in one line.
"""

from __future__ import annotations

import gzip
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

FORMAT = "gputop-nvml-capture"
SCHEMA = 1

Call = dict[str, Any]  # {"f": name, "a": what was asked, "rc": return code, "r": answer, "out": ...}


class CaptureError(Exception):
    """A capture cannot be read or written; the message is one clear line."""


@dataclass(slots=True)
class Tick:
    """The calls of one tick, in the order they were made, and the tick's ``--json`` (a recording's line)."""

    calls: list[Call] = field(default_factory=list)
    json: dict[str, Any] | None = None


@dataclass(slots=True)
class Capture:
    """A whole capture: the facts about it, the calls made while opening NVML, then each tick."""

    facts: dict[str, Any] = field(default_factory=dict)
    opening: list[Call] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # return code -> the library's words for it

    def document(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "schema": SCHEMA,
            **self.facts,
            "errors": self.errors,
            "open": self.opening,
            "ticks": [{"calls": tick.calls, "json": tick.json} for tick in self.ticks],
        }

    @property
    def hostname(self) -> str | None:
        value = self.facts.get("hostname")
        return value if isinstance(value, str) else None


def write_capture(document: dict[str, Any], path: str) -> int:
    """Write the document (gzip for ``.gz``); the size written, in bytes."""
    data = json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    try:
        with open(path, "wb") as handle:
            handle.write(data)
    except OSError as error:
        raise CaptureError(f"cannot write {path}: {error.strerror or error}") from None
    return len(data)


def read_capture(path: str) -> Capture:
    """Read a capture; CaptureError (one line) for a file that is missing, empty, cut off, corrupt,
    not a capture, or of a newer schema."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise CaptureError(f"cannot read {path}: {error.strerror or error}") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise CaptureError(f"{path}: the gzip data is cut off or damaged ({error})") from None
    if not data.strip():
        raise CaptureError(f"{path} is empty: not a gputop capture")
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as error:
        raise CaptureError(f"{path} is cut off or is not a gputop capture ({_short(error)})") from None
    return _capture(document, path)


def _capture(document: Any, path: str) -> Capture:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise CaptureError(f"{path} is not a gputop capture (no \"format\": \"{FORMAT}\")")
    schema = document.get("schema")
    if not isinstance(schema, int):
        raise CaptureError(f"{path}: the capture has no schema number")
    if schema > SCHEMA:
        raise CaptureError(
            f"{path} is a capture of schema {schema}, newer than this gputop reads ({SCHEMA}): upgrade gputop"
        )
    try:
        ticks = [Tick(list(tick["calls"]), tick.get("json")) for tick in document["ticks"]]
        opening = list(document["open"])
        errors = {str(code): str(text) for code, text in dict(document.get("errors", {})).items()}
        for call in [*opening, *(call for tick in ticks for call in tick.calls)]:
            if not isinstance(call, dict) or not isinstance(call.get("f"), str) or "rc" not in call:
                raise TypeError("a call without a function name or return code")
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise CaptureError(f"{path}: the capture is damaged ({_short(error)})") from None
    facts = {
        name: value for name, value in document.items() if name not in ("format", "schema", "errors", "open", "ticks")
    }
    return Capture(facts=facts, opening=opening, ticks=ticks, errors=errors)


def _short(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0][:120]
