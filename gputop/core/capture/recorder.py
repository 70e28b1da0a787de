"""Taking a capture: a gateway that writes down every NVML call and its answer, and a source that
marks where each tick begins.

The recorder stands where the gateway asks the library (``Gateway._invoke``), so every call gputop
makes is captured, whichever module makes it, including calls added after this was written.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

import pynvml

from gputop.core.capture.capture_file import Call, Capture, Tick
from gputop.core.capture.codec import Refs, asked, encode, outputs
from gputop.core.model import GpuSample
from gputop.core.sources.nvml import NvmlSource
from gputop.core.sources.nvml_gateway import Gateway, describe

T = TypeVar("T")


class CallLog:
    """The calls made so far, in order: those made while opening, then each tick's."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.refs = Refs()
        self._lock = threading.Lock()
        self._calls = capture.opening

    def begin_tick(self) -> Tick:
        tick = Tick()
        with self._lock:
            self.capture.ticks.append(tick)
            self._calls = tick.calls
        return tick

    def add(self, call: Call) -> None:
        with self._lock:
            self._calls.append(call)

    def error_text(self, code: int, text: str) -> None:
        with self._lock:
            self.capture.errors.setdefault(str(code), text)


class RecordingGateway(Gateway):
    """The gateway, writing down each call it makes: the function, what it asked, the return code,
    the answer and what NVML wrote into the arguments."""

    def __init__(self, log: CallLog) -> None:
        super().__init__()
        self.log = log

    def _invoke(self, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
        refs = self.log.refs
        call: Call = {"f": fn.__name__, "a": asked(args, refs)}
        try:
            result = fn(*args)
        except pynvml.NVMLError as error:
            call["rc"] = int(error.value)
            self.log.error_text(int(error.value), describe(error))
            self.log.add(call)
            raise
        except Exception as error:
            call["rc"] = None
            call["error"] = [type(error).__name__, str(error)]
            self.log.add(call)
            raise
        call["rc"] = pynvml.NVML_SUCCESS
        # An answer that is one of the arguments, filled in (pynvml hands back the request it was
        # given): which argument, not the same fields twice.
        given = next((position for position, arg in enumerate(args) if arg is result and result is not None), None)
        call["r"] = encode(result, refs) if given is None else {"$": "arg", "v": given}
        written = outputs(args, refs)
        if written:
            call["out"] = written
        self.log.add(call)
        return result


class RecordingSource(NvmlSource):
    """The driver, through a recording gateway; each sample begins a tick."""

    def __init__(self, deadline_s: float, log: CallLog) -> None:
        super().__init__(deadline_s, gateway=RecordingGateway(log))
        self.log = log

    def sample(self) -> tuple[GpuSample, ...]:
        self.log.begin_tick()
        return super().sample()
