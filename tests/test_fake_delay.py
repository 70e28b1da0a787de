"""The fake driver's delays, through the real pynvml: a slow or hung call blocks only its own thread."""

from __future__ import annotations

import threading
import time

import pynvml
from fakenvml import INIT_FUNCTIONS, FakeNvml, Scenario


def timed(fn: object, *args: object) -> float:
    started = time.monotonic()
    fn(*args)  # type: ignore[operator]
    return time.monotonic() - started


def test_a_delay_line_is_written_with_its_window() -> None:
    scenario = (
        Scenario()
        .delay("nvmlDeviceGetPcieThroughput", 0.02)
        .delay("nvmlDeviceGetMemoryInfo", gpu=1, start=100.5, until=130.5)
    )

    assert scenario.render().splitlines()[3:] == [
        "delay fn=nvmlDeviceGetPcieThroughput ms=20",
        "delay fn=nvmlDeviceGetMemoryInfo gpu=1 start=100.5 until=130.5",
    ]


def test_a_delay_slows_one_function_on_one_gpu_only(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().gpu().delay("nvmlDeviceGetMemoryInfo", 1.0, gpu=1))
    fake_nvml.load()
    pynvml.nvmlInit()
    try:
        first, second = (pynvml.nvmlDeviceGetHandleByIndex(i) for i in (0, 1))

        assert timed(pynvml.nvmlDeviceGetMemoryInfo, second) >= 1.0
        assert timed(pynvml.nvmlDeviceGetMemoryInfo, first) < 0.5
        assert timed(pynvml.nvmlDeviceGetPowerUsage, second) < 0.5
    finally:
        pynvml.nvmlShutdown()


def test_a_stalled_call_blocks_only_its_own_thread(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().gpu().stall(1, 1.0, "nvmlDeviceGetMemoryInfo"))
    fake_nvml.load()
    pynvml.nvmlInit()
    try:
        first, second = (pynvml.nvmlDeviceGetHandleByIndex(i) for i in (0, 1))
        answered = threading.Event()
        stuck = threading.Thread(
            target=lambda: (pynvml.nvmlDeviceGetMemoryInfo(second), answered.set()), daemon=True
        )
        stuck.start()
        while fake_nvml.sleeping() == 0:
            time.sleep(0.01)

        # The other GPU, and other calls on the stuck one, answer meanwhile.
        assert timed(pynvml.nvmlDeviceGetMemoryInfo, first) < 0.2
        assert timed(pynvml.nvmlDeviceGetTemperature, second, 0) < 0.2
        assert not answered.is_set()
        assert fake_nvml.sleeping() == 1

        stuck.join(5)
        assert answered.is_set()
        assert fake_nvml.sleeping() == 0
        # The window is over: the same call answers at once again.
        assert timed(pynvml.nvmlDeviceGetMemoryInfo, second) < 0.1
    finally:
        pynvml.nvmlShutdown()


def test_a_delay_outside_its_window_does_nothing(fake_nvml: FakeNvml) -> None:
    later = time.time() + 60
    fake_nvml.write(Scenario().gpu().delay("*", 5.0, start=later, until=later + 10))
    fake_nvml.load()

    assert timed(pynvml.nvmlInit) < 0.5
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        assert timed(pynvml.nvmlDeviceGetMemoryInfo, handle) < 0.1
    finally:
        pynvml.nvmlShutdown()


def test_nvml_init_can_hang(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().delay(INIT_FUNCTIONS, 0.4))
    fake_nvml.load()

    assert timed(pynvml.nvmlInit) >= 0.4
    pynvml.nvmlShutdown()


def test_a_scenario_without_the_stall_ends_it(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().stall(0, 30.0, "nvmlDeviceGetMemoryInfo"))
    fake_nvml.load()
    pynvml.nvmlInit()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        stuck = threading.Thread(target=pynvml.nvmlDeviceGetMemoryInfo, args=(handle,), daemon=True)
        stuck.start()
        while fake_nvml.sleeping() == 0:
            time.sleep(0.01)

        fake_nvml.write(Scenario().gpu())  # the driver recovers
        stuck.join(2)

        assert not stuck.is_alive()
    finally:
        pynvml.nvmlShutdown()
