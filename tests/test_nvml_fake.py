"""The fake NVML kit itself: scenario text, builds, and the cost of a busy sample."""

from __future__ import annotations

import subprocess
import sys

import pytest
from fakenvml import (
    NOT_AVAILABLE,
    OLD_DRIVER,
    FakeNvml,
    GiB,
    Scenario,
    build_library,
    build_scenario,
)

from gputop.core.sources import nvml
from gputop.core.sources.nvml import NvmlSource


def test_scenario_text_is_one_record_per_line() -> None:
    scenario = (
        Scenario(driver="550.54.15", cuda=12040)
        .gpu(name="NVIDIA L4", memory_total=24 * GiB, memory_used=GiB, memory_reserved=0, fan=None)
        .process(gpu=0, pid=42, used=NOT_AVAILABLE, kind="CG", sm=10)
        .error("nvmlDeviceGetPowerUsage", "NOT_SUPPORTED", gpu=0)
        .fail_init(9)
    )

    lines = scenario.render().splitlines()

    assert lines[1:4] == ["driver 550.54.15", "cuda 12040", "init_error 9"]
    assert lines[4].startswith('gpu name="NVIDIA L4" uuid=GPU-00000000-')
    assert "memory_free=24696061952 " in lines[4]
    assert " fan=" not in lines[4]
    assert lines[5:] == [
        "process gpu=0 pid=42 used=na kind=CG sm=10",
        "error fn=nvmlDeviceGetPowerUsage code=3 gpu=0",
    ]


def test_a_value_with_a_quote_is_refused() -> None:
    with pytest.raises(ValueError, match="quotes"):
        Scenario().gpu(name='say "hi"').render()


def test_an_old_driver_build_lacks_the_newer_symbols() -> None:
    library = build_library(OLD_DRIVER) / "libnvidia-ml.so.1"
    symbols = subprocess.run(
        ["nm", "-D", "--defined-only", str(library)], capture_output=True, text=True, check=True
    ).stdout

    assert " nvmlDeviceGetComputeRunningProcesses\n" in symbols
    assert "nvmlDeviceGetComputeRunningProcesses_v3" not in symbols
    assert "nvmlDeviceGetMemoryInfo_v2" not in symbols


def test_after_the_first_sample_only_changing_values_are_read(
    fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Static facts (name, UUID, thresholds, limits) are read once; the CPU cost is in tests/bench."""
    # Every GPU answers in its turn, however loaded the machine: one that overran its 5 ms would be read
    # on a thread of its own, whose list array is sized by a call of its own (a count of 17, not 16).
    monkeypatch.setattr(nvml, "TURN_S", 5.0)
    fake_nvml.write(build_scenario(gpus=8, procs_per_gpu=128))
    fake_nvml.load()
    source = NvmlSource()
    source.open()
    try:
        assert sum(len(gpu.processes) for gpu in source.sample()) == 1024
        # The second sample reads the GPUs in turn, each on its own thread; from the third on, those
        # that answered in their turn are read on the thread they share, whose buffers are sized then.
        source.sample()
        source.sample()
        fake_nvml.reset_counts()
        source.sample()
        source.sample()
    finally:
        source.close()
    for static in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetTemperatureThreshold"):
        assert fake_nvml.call_count(static) == 0, static
    # One call per list per GPU per sample: the fastest symbol is remembered, not searched again,
    # and the array kept from the last sample has room, so the size is not asked first.
    assert fake_nvml.call_count("nvmlDeviceGetComputeRunningProcesses_v3") == 2 * 8
    assert fake_nvml.call_count("nvmlDeviceGetProcessUtilization") == 2 * 8
    assert fake_nvml.call_count("nvmlDeviceGetMemoryInfo_v2") == 2 * 8


def test_the_nvml_source_does_not_import_textual() -> None:
    code = "import sys, gputop.core.sources.nvml; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    assert result.stdout.strip() == "False", result.stderr
