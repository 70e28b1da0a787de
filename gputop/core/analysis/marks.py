"""The verdict marks a GPU's card shows (``THROTTLED``, ``STALLED?``, ``BUSY, FEW SMs``), held by time as the
alerts are, so that a mark does not come and go every few seconds.

``THROTTLED`` shows once the GPU has been throttled for 3 s (2 ticks at least) and stays until it has not been
for 15 s; ``STALLED?`` and ``BUSY, FEW SMs``, whose verdicts already waited their own while, show at once and
stay 15 s after they end. The diagnosis itself (``verdict``, in ``--json``, the recording and the exporter)
stays the tick's own: only what the card shows is held, in ``GpuDiagnosis.held``.
"""

from __future__ import annotations

from types import MappingProxyType

from gputop.core.analysis.diagnosis.diagnoser import Diagnoses, GpuDiagnosis, HeldMarks
from gputop.core.analysis.hold import HOLD, Holder, HoldTimes, clear_held
from gputop.core.frozen_copy import copier

MARK_VERDICTS = ("throttled", "stalled", "busy_few_sms")
# Each GPU's diagnosis with its held marks, every tick: dataclasses.replace took ~5 us a GPU.
_WITH_HELD = copier(GpuDiagnosis, "held")
_NO_MARKS = HeldMarks(verdicts=frozenset(), limiting=())


def _now_says(diagnosis: GpuDiagnosis, verdict: str) -> bool:
    return diagnosis.busy_few_sms if verdict == "busy_few_sms" else diagnosis.verdict == verdict


class MarkHolder:
    """Holds each GPU's verdict marks, tick after tick; one per stream of snapshots."""

    def __init__(self, hold: HoldTimes = HOLD) -> None:
        self._times = {"throttled": hold, "stalled": clear_held(hold), "busy_few_sms": clear_held(hold)}
        self._holder: Holder[tuple[int, str]] = Holder()
        self._on: set[tuple[int, str]] = set()
        self._limiting: dict[int, tuple[str, ...]] = {}

    def update(self, now: float, diagnoses: Diagnoses, judged: set[int]) -> Diagnoses:
        """``diagnoses`` with each GPU's held marks; ``judged``: the GPUs whose verdict means something this
        tick (answering, not lost): for the others it is unknown, and their marks stay as they were."""
        gpus: dict[int, GpuDiagnosis] = {}
        for index, diagnosis in diagnoses.gpus.items():
            for verdict in MARK_VERDICTS:
                key = (index, verdict)
                condition = _now_says(diagnosis, verdict) if index in judged else None
                held = key in self._on
                if self._holder.step(key, held, condition, now, self._times[verdict]):
                    self._on ^= {key}
            if diagnosis.verdict == "throttled" and diagnosis.limiting:
                self._limiting[index] = diagnosis.limiting
            if not self._on:  # no mark shown on any GPU: most ticks
                gpus[index] = _WITH_HELD(diagnosis, _NO_MARKS)
                continue
            shown = frozenset(verdict for verdict in MARK_VERDICTS if (index, verdict) in self._on)
            limiting = self._limiting.get(index, ()) if "throttled" in shown else ()
            gpus[index] = _WITH_HELD(diagnosis, HeldMarks(verdicts=shown, limiting=limiting))
        self._holder.sweep()
        self._on = {key for key in self._on if key[0] in gpus}
        self._limiting = {index: reasons for index, reasons in self._limiting.items() if index in gpus}
        return Diagnoses(gpus=MappingProxyType(gpus), migs=diagnoses.migs, processes=diagnoses.processes)
