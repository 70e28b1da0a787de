"""Replaying a capture: a gateway whose calls are answered from the capture instead of a library.

Everything above the gateway (the device code, the fallbacks, the sampler) runs as it does on a
driver. Each call is looked up by its function and what it asked: in the tick being replayed first
(the n-th such call of the tick gets the n-th answer, the last one again after that), then in the
nearest tick before, then after; a call the capture never saw answers NOT_SUPPORTED. Errors come back
as they were recorded, in the library's words: a lost GPU stays lost.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pynvml

from gputop.core.capture.capture_file import Call, Capture
from gputop.core.capture.codec import ReplayRefs, asked, decode, fill
from gputop.core.sources.nvml_gateway import Gateway

T = TypeVar("T")

# Calls that wait for an event: past the answers of their tick they time out, after waiting as asked
# (their last argument, in ms; at most WAIT_MOST_S), as a driver with nothing to say does. Any call
# answers after as long as it took there (``ms``); one that never came back waits until the replay ends.
WAITS = ("nvmlEventSetWait",)
WAIT_MOST_S = 0.5


# An integer argument this large is a time (microseconds since the epoch: "samples since"), never a
# selector (an index, a sensor, a field id): it depends on the answers before it, so it is matched by
# the order of the calls, not by its value (a repeated last tick asks from a time never captured).
TIME_ARGUMENT = 1 << 32


def _key(name: str, asked_for: Any) -> str:
    return json.dumps([name, _without_times(asked_for)], sort_keys=True, separators=(",", ":"))


def _without_times(value: Any) -> Any:
    if isinstance(value, list):
        return [_without_times(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool) and value >= TIME_ARGUMENT:
        return "time"
    return value


class Player:
    """The capture's answers by tick (0: while opening NVML, then one per sample) and by call."""

    def __init__(self, capture: Capture) -> None:
        phases = [capture.opening, *(tick.calls for tick in capture.ticks)]
        self._answers: list[dict[str, list[Call]]] = []
        for calls in phases:
            by_key: dict[str, list[Call]] = {}
            for call in calls:
                by_key.setdefault(_key(call["f"], call.get("a", [])), []).append(call)
            self._answers.append(by_key)
        self._texts = capture.errors
        self._lock = threading.Lock()
        self._taken: dict[str, int] = {}
        self.tick = 0
        # Set when the replay ends: a call that never came back on the captured machine waits for it.
        self.closed = threading.Event()

    @property
    def ticks(self) -> int:
        """How many ticks the capture holds."""
        return len(self._answers) - 1

    def next_tick(self) -> int:
        """Move on to the next tick (the last one repeats); its number, from 1."""
        with self._lock:
            self.tick += 1
            self._taken = {}
            return self.tick

    def answer(self, key: str, waits: bool) -> Call | None:
        with self._lock:
            phase = min(self.tick, len(self._answers) - 1)
            here = self._answers[phase].get(key)
            if here:
                taken = self._taken.get(key, 0)
                self._taken[key] = taken + 1
                if taken < len(here):
                    return here[taken]
                return None if waits else here[-1]
            if waits:
                return None
            for other in [*range(phase - 1, -1, -1), *range(phase + 1, len(self._answers))]:
                found = self._answers[other].get(key)
                if found:
                    chosen: Call = found[-1] if other < phase else found[0]
                    return chosen
            return None

    def error(self, code: int) -> pynvml.NVMLError:
        """The NVML error of ``code``, worded as the captured library worded it (no library needed)."""
        kind = type(pynvml.NVMLError(code))
        text = self._texts.get(str(code), f"NVML error {code}")
        captured = type(kind.__name__, (kind,), {"__str__": lambda self: text})
        return captured(code)


class ReplayGateway(Gateway):
    """The gateway, answered from a capture: no NVML library is loaded."""

    def __init__(self, player: Player) -> None:
        super().__init__()
        self.player = player
        self.refs = ReplayRefs()

    def _invoke(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        name = fn.__name__
        waits = name.startswith(WAITS)
        player = self.player
        call = player.answer(_key(name, asked(args, self.refs)), waits)
        if call is None:
            if waits:
                player.closed.wait(min(WAIT_MOST_S, float(args[-1]) / 1000) if args else 0)
                raise player.error(pynvml.NVML_ERROR_TIMEOUT)
            raise player.error(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if call.get("unanswered"):
            player.closed.wait()  # it never came back there: not here either, while the replay lasts
            raise player.error(pynvml.NVML_ERROR_TIMEOUT)
        if call.get("ms"):
            player.closed.wait(float(call["ms"]) / 1000)  # as slow as it was there
        if call.get("error"):
            kind, text = call["error"]
            raise type(str(kind), (Exception,), {})(text)
        code = call["rc"]
        if code:
            raise player.error(int(code))
        for position, written in (call.get("out") or {}).items():
            fill(args[int(position)], written, self.refs)
        answer = call.get("r")
        if isinstance(answer, dict) and answer.get("$") == "arg":
            return args[int(answer["v"])]  # type: ignore[no-any-return]
        return decode(answer, self.refs)  # type: ignore[no-any-return]
