"""Fewer driver calls (issue 27): row remapping and retired pages come in the tick's one
nvmlDeviceGetFieldValues batch, with the calls of their own only where the batch does not answer;
through the real nvidia-ml-py against the fake libnvidia-ml.so.1."""

from __future__ import annotations

from fakenvml import FakeNvml, Scenario

from gputop.core.model import RemappedRows
from gputop.core.sources.nvml import NvmlSource

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
