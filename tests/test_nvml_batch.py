"""Fewer driver calls (issue 27): row remapping and retired pages come in the tick's one
nvmlDeviceGetFieldValues batch, with the calls of their own only where the batch does not answer;
through the real nvidia-ml-py against the fake libnvidia-ml.so.1."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import pynvml
from fakenvml import FakeNvml, Scenario

from gputop.core.model import RemappedRows
from gputop.core.sources.nvml import NvmlSource
from gputop.core.sources.nvml_fields import FieldBatch
from gputop.core.sources.nvml_gateway import Gateway

T = TypeVar("T")

HEALTH_CALLS = ("nvmlDeviceGetRemappedRows", "nvmlDeviceGetRetiredPagesPendingStatus")


def sample_twice(fake_nvml: FakeNvml) -> tuple[object, dict[str, int]]:
    """The second sample (the first reads the facts once) and the calls it made, by name."""
    fake_nvml.load()
    source = NvmlSource()
    source.open()
    try:
        source.sample()
        fake_nvml.reset_counts()
        gpus = source.sample()
        return gpus, {name: fake_nvml.call_count(name) for name in (*HEALTH_CALLS, "nvmlDeviceGetFieldValues")}
    finally:
        source.close()


def test_remapped_rows_and_retired_pages_come_in_the_field_value_batch(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(
        Scenario()
        .gpu(remap_corrected=2, remap_uncorrected=3, remap_pending=1, remap_failure=0, retired_pending=0)
        .gpu(remap_corrected=None, retired_pending=1)
    )
    gpus, calls = sample_twice(fake_nvml)
    first, second = gpus  # type: ignore[misc]
    assert first.health.remapped_rows == RemappedRows(corrected=2, uncorrected=3, pending=True, failure=False)
    assert first.health.retired_pages_pending is False
    assert second.health.retired_pages_pending is True
    # One batch a GPU, and no call of their own: the GPU whose driver does not remap answered
    # NOT_SUPPORTED to the remapping call too in the first sample (None, never 0), which decided it
    # (asked again only every DECIDE_AGAIN samples, tests/test_nvml_field_fallback.py).
    assert calls == {"nvmlDeviceGetRemappedRows": 0, "nvmlDeviceGetRetiredPagesPendingStatus": 0,
                     "nvmlDeviceGetFieldValues": 2}
    assert second.health.remapped_rows is None


def test_a_driver_without_field_values_is_asked_the_old_way(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(
        Scenario()
        .gpu(remap_corrected=2, remap_uncorrected=3, remap_pending=1, retired_pending=1)
        .error("nvmlDeviceGetFieldValues", "NOT_SUPPORTED")
    )
    gpus, calls = sample_twice(fake_nvml)
    (gpu,) = gpus  # type: ignore[misc]
    assert gpu.health.remapped_rows == RemappedRows(corrected=2, uncorrected=3, pending=True, failure=False)
    assert gpu.health.retired_pages_pending is True
    assert calls == {"nvmlDeviceGetRemappedRows": 1, "nvmlDeviceGetRetiredPagesPendingStatus": 1,
                     "nvmlDeviceGetFieldValues": 1}


class _Answering(Gateway):
    """A driver's answer written into the batch's array: (value type, return code, value) per slot."""

    def __init__(self, answers: list[tuple[int, int, float | int]]) -> None:
        super().__init__()
        self.answers = answers

    def call(self, fn: Callable[..., T], *args: Any) -> T | None:
        for slot, (kind, code, value) in zip(args[1], self.answers, strict=True):
            slot.valueType, slot.nvmlReturn = kind, code
            member = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal", 6: "usVal"}[kind]
            if hasattr(slot.value, member):  # bindings before 12.570 lack usVal: its two bytes written as uiVal's
                setattr(slot.value, member, value)
            else:
                slot.value.uiVal = int(value)
        return True  # type: ignore[return-value]


def test_each_value_type_of_a_batch_is_read_as_the_driver_wrote_it_and_a_refused_slot_is_none() -> None:
    fields = [(field_id, 0) for field_id in range(100, 108)]
    batch = FieldBatch(fields)
    success, refused = pynvml.NVML_SUCCESS, pynvml.NVML_ERROR_NOT_SUPPORTED
    answers: list[tuple[int, int, float | int]] = [
        (0, success, 41.5), (1, success, 4_000_000_000), (2, success, 9 << 40), (3, success, (1 << 64) - 1),
        (4, success, -(5 << 40)), (5, success, -7), (6, success, 65_535), (3, refused, 0),
    ]
    read = batch.read(_Answering(answers), None)
    assert read == dict(zip(fields, [41.5, 4_000_000_000, 9 << 40, (1 << 64) - 1, -(5 << 40), -7, 65_535, None],
                            strict=True))
    # A driver that answers a slot differently next time (another type, a refusal lifted) is read anew.
    answers[0], answers[7] = (1, success, 12), (2, success, 3)
    assert list(batch.read(_Answering(answers), None).values()) == [  # type: ignore[union-attr]
        12, 4_000_000_000, 9 << 40, (1 << 64) - 1, -(5 << 40), -7, 65_535, 3
    ]
