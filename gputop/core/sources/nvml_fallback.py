"""Every figure of the field batch with its classic NVML call behind it.

A driver may answer ``nvmlDeviceGetFieldValues`` and refuse one of its fields (an older driver knows
fewer field ids than the binding), on one GPU and not the next, or start refusing after it answered.
`FieldReads` asks each field in the batch while the batch answers it, else the field's classic call
(`CLASSIC`, one table: field id -> its reader), and remembers per GPU and per field which path
answers: decided at the first read, decided again whenever the path in use fails (the other path is
asked in the same read). A figure is None only when both fail. Every `DECIDE_AGAIN` reads the fields
read through their classic calls are asked in the batch again, so that a batch that failed once
(a timeout) does not cost a call per figure for good. A figure that never answered by either path (a
GPU without it) has its classic call asked again only that often: its field stays in the batch, where
it costs no call of its own. Every call goes through the gateway.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pynvml

from gputop.core.sources.nvml_fields import (
    FI_ECC_AGGREGATE,
    FI_ECC_VOLATILE,
    FI_ENERGY,
    FI_ERROR_TOTALS,
    FI_LINK_COUNT,
    FI_LINK_ERRORS,
    FI_LINK_STATE,
    FI_LINK_VERSION,
    FI_NVLINK_RX,
    FI_NVLINK_TX,
    FI_PCIE_REPLAY,
    FI_REMAPPED,
    FI_RETIRED_PENDING,
    Field,
    FieldBatch,
    one_field,
)
from gputop.core.sources.nvml_gateway import Gateway, Handle

Value = float | int | None
# A field's classic read: given the read's calls and the field's scope, the value in the field's unit.
Reader = Callable[["ClassicCalls", int], Value]

DECIDE_AGAIN = 30  # reads between two tries of the path a figure does not use
MAX_LINKS = int(getattr(pynvml, "NVML_NVLINK_MAX_LINKS", 18))
UNCORRECTED = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
# nvmlDeviceGetNvLinkErrorCounter's counters in the order of FI_ERROR_TOTALS and FI_LINK_ERRORS: CRC
# (data), replay, recovery.
ERROR_COUNTERS = (
    pynvml.NVML_NVLINK_ERROR_DL_CRC_DATA,
    pynvml.NVML_NVLINK_ERROR_DL_REPLAY,
    pynvml.NVML_NVLINK_ERROR_DL_RECOVERY,
)


class ClassicCalls:
    """The classic calls of one read of one GPU, each asked at most once (the four row-remapping
    figures share one nvmlDeviceGetRemappedRows)."""

    def __init__(self, gateway: Gateway, handle: Handle, links: int) -> None:
        self.gateway, self.handle, self.links = gateway, handle, links
        self._answers: dict[tuple[str, tuple[Any, ...]], Any] = {}

    def __call__(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(handle, *args) through the gateway: None where it has no value."""
        key = (fn.__name__, args)
        if key not in self._answers:
            self._answers[key] = self.gateway.call(fn, self.handle, *args)
        return self._answers[key]

    def value(self, field: Field) -> Value:
        """The field's figure through its classic call; None where it has none (or no such call)."""
        reader = CLASSIC.get(field[0])
        return None if reader is None else reader(self, field[1])

    def summed(self, fn: Callable[..., Any], *args: Any) -> int | None:
        """fn(handle, link, *args) summed over the GPU's links that answer; None when none does."""
        known = [int(answer) for link in range(self.links) if (answer := self(fn, link, *args)) is not None]
        return sum(known) if known else None

    def links_answering(self) -> int | None:
        """How many links, from link 0, nvmlDeviceGetNvLinkState answers for (it refuses a link past
        the GPU's count, and every link of a GPU without NVLink); None when it answers for none."""
        count = 0
        while count < MAX_LINKS and self(pynvml.nvmlDeviceGetNvLinkState, count) is not None:
            count += 1
        return count or None


def _enabled(answer: Any) -> int | None:
    """An NVML_FEATURE_ENABLED/DISABLED answer as the field gives it: 1 or 0."""
    return None if answer is None else int(answer == pynvml.NVML_FEATURE_ENABLED)


def _item(answer: Any, position: int) -> int | None:
    return None if answer is None else int(answer[position])


def _ecc(counter: int) -> Reader:
    return lambda calls, _: calls(pynvml.nvmlDeviceGetTotalEccErrors, UNCORRECTED, counter)


def _remapped(position: int) -> Reader:
    return lambda calls, _: _item(calls(pynvml.nvmlDeviceGetRemappedRows), position)


def _link_error(counter: int) -> Reader:
    return lambda calls, link: calls(pynvml.nvmlDeviceGetNvLinkErrorCounter, link, counter)


def _error_total(counter: int) -> Reader:
    return lambda calls, _: calls.summed(pynvml.nvmlDeviceGetNvLinkErrorCounter, counter)


def _throughput(field_id: int) -> Reader:
    # No classic call counts NVLink data: nvmlDeviceGetNvLinkUtilizationCounter needs counters set up
    # with nvmlDeviceSetNvLinkUtilizationControl (root, for every user of the GPU; deprecated). The
    # same field asked link by link is the other path: a driver may refuse the all-links scope alone.
    return lambda calls, _: calls.summed(one_field, field_id)


# Each field id of the batch and its classic read, in the field's unit. The memory temperature field
# has none: nvml.h's temperature calls know only the GPU's own sensor.
CLASSIC: dict[int, Reader] = {
    FI_ECC_VOLATILE: _ecc(pynvml.NVML_VOLATILE_ECC),
    FI_ECC_AGGREGATE: _ecc(pynvml.NVML_AGGREGATE_ECC),
    FI_ENERGY: lambda calls, _: calls(pynvml.nvmlDeviceGetTotalEnergyConsumption),
    FI_PCIE_REPLAY: lambda calls, _: calls(pynvml.nvmlDeviceGetPcieReplayCounter),
    FI_LINK_COUNT: lambda calls, _: calls.links_answering(),
    FI_LINK_VERSION: lambda calls, link: calls(pynvml.nvmlDeviceGetNvLinkVersion, link),
    FI_LINK_STATE: lambda calls, link: calls(pynvml.nvmlDeviceGetNvLinkState, link),
    FI_RETIRED_PENDING: lambda calls, _: _enabled(calls(pynvml.nvmlDeviceGetRetiredPagesPendingStatus)),
    FI_NVLINK_RX: _throughput(FI_NVLINK_RX),
    FI_NVLINK_TX: _throughput(FI_NVLINK_TX),
    **{field_id: _remapped(position) for position, field_id in enumerate(FI_REMAPPED)},
    **{field_id: _error_total(counter) for field_id, counter in zip(FI_ERROR_TOTALS, ERROR_COUNTERS, strict=True)},
    **{field_id: _link_error(counter) for field_id, counter in zip(FI_LINK_ERRORS, ERROR_COUNTERS, strict=True)},
}


class FieldReads:
    """One GPU's list of fields, each read from the batch or its classic call, whichever answers."""

    def __init__(self, fields: Sequence[Field], links: int = 0) -> None:
        self.fields = tuple(fields)
        self.links = links  # what a classic read summed over the links counts
        self.classic: set[Field] = set()  # fields read through their classic call, out of the batch
        self._answered: set[Field] = set()  # fields that had a value once, by either path
        self._refused: dict[Field, int] = {}  # never answered: the read both paths last failed in
        self._reads = 0
        self._batch = FieldBatch(self.fields)
        self._left_out: frozenset[Field] = frozenset()  # the classic fields the batch was made without
        self._last_batch: dict[Field, Value] | None = None  # the batch's values _all_answered saw last
        self._missing: list[Field] = []  # and the fields they had no value for
        self._quiet_until = 0  # the read before which none of those is due its classic call

    def read(self, gateway: Gateway, handle: Handle) -> dict[Field, Value]:
        """Each field's figure (None where neither path has it); raises DeviceLost."""
        self._reads += 1
        if self.classic and self._reads % DECIDE_AGAIN == 0:  # the batch asked again: it costs no call
            self.classic.clear()
        if self.classic != self._left_out:  # a path changed in the last read: the batch without them
            self._left_out = frozenset(self.classic)
            self._batch = FieldBatch([field for field in self.fields if field not in self.classic])
        batch = self._batch.read(gateway, handle)
        if batch is not None and not self.classic and self._all_answered(batch):
            return batch  # what the loop below makes of a batch that answered every field it is due
        batch = batch or {}  # None: the call itself failed
        calls = ClassicCalls(gateway, handle, self.links)
        values: dict[Field, Value] = {}
        for field in self.fields:
            if field in self.classic:
                value = calls.value(field)
                if value is None:  # failed after it answered: back to the field, asked at once
                    self.classic.discard(field)
                    value = calls(one_field, field[1], field[0])
            else:
                value = batch.get(field)
                if value is None and self._due(field):
                    value = calls.value(field)
                    if value is not None:
                        self.classic.add(field)
                    elif field not in self._answered:
                        self._refused[field] = self._reads
            if value is not None:
                self._answered.add(field)
            values[field] = value
        return values

    def _all_answered(self, batch: dict[Field, Value]) -> bool:
        """Whether the batch (of every field) gave each field a value, or none that is due its classic call."""
        if batch is self._last_batch:  # the batch answered as last read (nvml_fields.py): the same fields missing
            missing = self._missing
        else:
            missing = self._missing = [field for field, value in batch.items() if value is None]
            self._last_batch, self._quiet_until = batch, 0
            if len(self._answered) + len(missing) < len(self.fields):
                self._answered.update(field for field, value in batch.items() if value is not None)
        if not missing or self._reads < self._quiet_until:
            return True
        if any(map(self._due, missing)):
            return False
        # None is due: each was refused by both paths (it never answered), and is due again DECIDE_AGAIN
        # reads after that; until the first of them is, nothing here can change without a new batch dict.
        self._quiet_until = min(self._refused[field] for field in missing) + DECIDE_AGAIN
        return True

    def _due(self, field: Field) -> bool:
        """Whether the classic call of a field the batch did not answer is asked in this read."""
        refused = self._refused.get(field)
        return field in self._answered or refused is None or self._reads - refused >= DECIDE_AGAIN
