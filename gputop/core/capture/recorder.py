"""Taking a capture: a gateway that writes down every NVML call and its answer, and a source that
marks where each tick begins.

The recorder stands where the gateway asks the library (``Gateway._invoke``), so every call gputop
makes is captured, whichever module makes it, including calls added after this was written.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import pynvml

from gputop.core.capture.capture_file import Call, Capture, Tick
from gputop.core.capture.codec import Refs, asked, encode, outputs
from gputop.core.model import GpuSample
from gputop.core.sources.nvml import NvmlSource
from gputop.core.sources.nvml_gateway import Gateway, describe

T = TypeVar("T")


# A call that takes this long or longer has its time written down (``ms``), and the replay takes as long.
SLOW_MS = 10


class CallLog:
    """The calls made so far, each in the tick it began in, in the order they began: those made while
    opening, then each tick's. A call is written down when it begins, so one that never comes back is
    kept too (``unanswered``)."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.refs = Refs()
        self._lock = threading.Lock()
        self._calls = capture.opening
        self._started: dict[int, float] = {}  # id of a call not answered yet -> when it began (monotonic)

    def begin_tick(self) -> Tick:
        tick = Tick()
        with self._lock:
            self.capture.ticks.append(tick)
            self._calls = tick.calls
        return tick

    def begin(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)
            self._started[id(call)] = time.monotonic()

    def answered(self, call: Call, answer: Call) -> None:
        with self._lock:
            elapsed_ms = (time.monotonic() - self._started.pop(id(call))) * 1000
            call.update(answer)
            if elapsed_ms >= SLOW_MS:
                call["ms"] = round(elapsed_ms)

    def error_text(self, code: int, text: str) -> None:
        with self._lock:
            self.capture.errors.setdefault(str(code), text)

    def document(self) -> dict[str, Any]:
        """The capture as it stands; a call still out is written down as unanswered, after how long."""
        with self._lock:
            now = time.monotonic()
            for phase in [self.capture.opening, *(tick.calls for tick in self.capture.ticks)]:
                for call in phase:
                    if id(call) in self._started and "rc" not in call:
                        call.update(rc=None, unanswered=True, ms=round((now - self._started[id(call)]) * 1000))
            return json.loads(json.dumps(self.capture.document()))  # type: ignore[no-any-return]


class RecordingGateway(Gateway):
    """The gateway, writing down each call it makes: the function, what it asked, the return code,
    the answer and what NVML wrote into the arguments (and how long it took, when that was long)."""

    def __init__(self, log: CallLog) -> None:
        super().__init__()
        self.log = log

    def _invoke(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        refs = self.log.refs
        call: Call = {"f": fn.__name__, "a": asked(args, refs)}
        self.log.begin(call)
        try:
            result = fn(*args)
        except pynvml.NVMLError as error:
            self.log.error_text(int(error.value), describe(error))
            self.log.answered(call, {"rc": int(error.value)})
            raise
        except Exception as error:
            self.log.answered(call, {"rc": None, "error": [type(error).__name__, str(error)]})
            raise
        # An answer that is one of the arguments, filled in (pynvml hands back the request it was
        # given): which argument, not the same fields twice.
        given = next((position for position, arg in enumerate(args) if arg is result and result is not None), None)
        value = encode(result, refs) if given is None else {"$": "arg", "v": given}
        answer: Call = {"rc": pynvml.NVML_SUCCESS, "r": value}
        written = outputs(args, refs)
        if written:
            answer["out"] = written
        self.log.answered(call, answer)
        return result


class RecordingSource(NvmlSource):
    """The driver, through a recording gateway; each sample begins a tick."""

    def __init__(self, deadline_s: float, log: CallLog) -> None:
        super().__init__(deadline_s, gateway=RecordingGateway(log))
        self.log = log

    def sample(self) -> tuple[GpuSample, ...]:
        self.log.begin_tick()
        return super().sample()
