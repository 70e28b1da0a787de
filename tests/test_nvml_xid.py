"""XID events from the driver: taken once a tick without waiting, by the real nvidia-ml-py against the
fake driver, with no thread that wakes between ticks to wait on the driver."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from fakenvml import FakeNvml, Scenario

from gputop.core.sources.nvml import NvmlSource
from gputop.core.sources.nvml_events import XidEvents
from gputop.core.sources.nvml_gateway import Gateway

OpenSource = Callable[..., NvmlSource]


def registered(fake_nvml: FakeNvml, gpus: int) -> None:
    """Wait until the event set holds every GPU (registered beside the first tick's reads)."""
    deadline = time.monotonic() + 10.0
    while fake_nvml.call_count("nvmlDeviceRegisterEvents") < gpus and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake_nvml.call_count("nvmlDeviceRegisterEvents") == gpus


def codes(source: NvmlSource) -> list[list[int] | None]:
    """Each GPU's XID codes in one sample, oldest first."""
    return [
        None if gpu.health.xid_events is None else [event.code for event in gpu.health.xid_events]
        for gpu in source.sample()
    ]


def gputop_wake_ups() -> int:
    """How many times gputop's threads of this process have gone to sleep and been woken so far."""
    total = 0
    for thread in threading.enumerate():
        if not thread.name.startswith("gputop") or thread.native_id is None:
            continue
        with contextlib.suppress(OSError), open(f"/proc/self/task/{thread.native_id}/status") as status:
            total += sum(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches"))
    return total


def test_an_xid_raised_by_the_driver_shows_in_the_next_ticks_sample(
    nvml_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    source = nvml_source(Scenario().gpu().gpu())
    source.sample()
    registered(fake_nvml, 2)
    assert codes(source) == [[], []]

    fake_nvml.write(Scenario().gpu().gpu().xid(1, 79))

    seen = [codes(source), codes(source)]
    # The very next tick, with no wait on any thread: the poll is the last step of the GPUs' turns. On a
    # machine so loaded that a GPU's read outlasted its 5 ms turn, the turns broke and the poll went to a
    # lane of its own, not waited for (test_an_xid_shows_while_the_gpus_are_slower_than_their_turn_...).
    turns_broke = "gputop-events" in {thread.name for thread in threading.enumerate()}
    assert seen[0] == [[], [79]] or (turns_broke and seen[0] == [[], []])
    assert seen[1] == [[], [79]]  # kept (the newest 32 per GPU), and not taken twice


def test_an_xid_shows_while_the_gpus_are_slower_than_their_turn_read_at_once_on_their_own_threads(
    nvml_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    # Every GPU slower than its 5 ms turn, as on a driver whose calls take milliseconds: each tick the
    # turns break and the rest are read at once, the count on the system lane and the poll beside it.
    def slow() -> Scenario:
        return Scenario().gpu().gpu().delay("nvmlDeviceGetMemoryInfo", 0.02)

    source = nvml_source(slow())
    source.sample()
    registered(fake_nvml, 2)
    assert codes(source) == [[], []]
    fake_nvml.write(slow().xid(1, 79))
    fake_nvml.reset_counts()

    # Taken by the tick's poll, which the tick does not wait for once the turns are broken: this
    # tick's samples, or at the latest the next one's.
    seen = [codes(source), codes(source)]

    assert [[], [79]] in seen
    assert seen[-1] == [[], [79]]
    assert fake_nvml.call_count("nvmlEventSetWait_v2") >= 2  # asked every tick (it was refused, the count out)


def test_between_ticks_no_thread_of_the_source_wakes(nvml_source: OpenSource, fake_nvml: FakeNvml) -> None:
    source = nvml_source(Scenario().gpu().gpu())
    for _ in range(3):
        source.sample()
    registered(fake_nvml, 2)
    assert not [thread.name for thread in threading.enumerate() if thread.name == "gputop-xid-events"]
    time.sleep(0.1)  # the lanes' last hand-overs of the tick (a turn at a lock) are over
    before = gputop_wake_ups()

    time.sleep(1.0)  # a tick's interval, idle

    # An event thread waiting on the driver with a timeout, to notice when it is stopped, woke 5 times.
    assert gputop_wake_ups() - before == 0


def test_an_event_poll_that_hangs_in_the_driver_delays_no_gpu_and_is_not_asked_again(
    nvml_source: OpenSource, fake_nvml: FakeNvml
) -> None:
    source = nvml_source(Scenario().gpu().gpu())
    source.sample()
    registered(fake_nvml, 2)
    fake_nvml.write(Scenario().gpu(util_gpu=61).gpu(util_gpu=62).stall(None, 5.0, fn="nvmlEventSetWait_v2"))
    fake_nvml.reset_counts()

    for _ in range(3):
        started = time.monotonic()
        gpus = source.sample()
        took = time.monotonic() - started
        assert [(gpu.answering, gpu.utilization_gpu) for gpu in gpus] == [(True, 61.0), (True, 62.0)]
        assert took < 1.0, f"a tick took {took:.2f}s behind the hung event poll"
    assert fake_nvml.call_count("nvmlEventSetWait_v2") == 1  # the hung poll is still out: no second one

    # The driver answers again: the poll comes back, and closing shuts NVML down (the library stays
    # loaded for the next test, its XIDs delivered afresh only after a shutdown).
    fake_nvml.write(Scenario().gpu().gpu())
    deadline = time.monotonic() + 10.0
    while fake_nvml.sleeping() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake_nvml.sleeping() == 0



def test_what_the_registration_found_shows_from_the_tick_after_it_whichever_thread_finished_first(
    nvml_source: OpenSource,
) -> None:
    # The first tick's reads and the GPUs' registration run at once: a GPU that could not be registered (lost)
    # read as "none seen" or as "cannot report" by which thread came first, and a capture replayed as it was
    # recorded only by chance. What the registration found now shows from the next tick on.
    nvml_source(Scenario().gpu().gpu().lost(gpu=1))  # NVML open, on the fake driver
    events = XidEvents(Gateway(), 2)
    events.poll()  # registered: GPU 1 could not be
    assert [events.events(0), events.events(1)] == [(), ()]  # this tick: none seen yet, on either
    events.publish()  # the next tick begins
    assert [events.events(0), events.events(1)] == [(), None]
    events.close()
