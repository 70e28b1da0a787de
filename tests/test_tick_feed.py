"""The sampler side of the TUI's data path: each tick taken in full, and handed over without loss."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from gputop.core.analysis.foresight import Watcher
from gputop.core.analysis.tick_feed import Handover, TickFeed
from gputop.core.model import GpuSample, HostSample, Snapshot
from gputop.core.recording.record import Recorder
from gputop.core.settings import Thresholds

GIB = 1024**3
NOW = 1_700_000_000.0


def snap(step: int, *, used_gib: float = 10.0, temperature: float = 60.0) -> Snapshot:
    gpus = tuple(
        GpuSample(
            index=index,
            name="NVIDIA H100 80GB HBM3",
            memory_total=80 * GIB,
            memory_used=int(used_gib * GIB) if index == 1 else 10 * GIB,
            temperature=temperature if index == 0 else 60.0,
            temperature_slowdown=87.0,
            utilization_gpu=float(step % 100),
        )
        for index in range(2)
    )
    return Snapshot(timestamp=NOW + step, hostname="node", host=HostSample(), gpus=gpus, source="test")


def test_a_tick_carries_its_alerts_and_the_kinds_raised_after_it(tmp_path: Path) -> None:
    feed = TickFeed(Watcher(Thresholds()), Recorder(str(tmp_path / "r.jsonl")))
    # GPU 0 hot from t=1, GPU 1's memory full from t=3: each raised once it has held 3 s (at 4 and 6).
    ticks = [
        feed.take(snap(step, temperature=86.0 if step >= 1 else 60.0, used_gib=78.0 if step >= 3 else 10.0))
        for step in range(8)
    ]
    assert [[(e.kind, e.gpu_index) for e in tick.foresight.events] for tick in ticks] == [
        [], [], [], [], [("thermal", 0)], [], [("memory", 1)], []
    ]
    assert [tick.alerted for tick in ticks] == [frozenset()] * 4 + [{("thermal", 0)}] * 2 + [
        {("thermal", 0), ("memory", 1)}
    ] * 2
    feed.stop_recording()
    lines = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(line["timestamp"], [a["kind"] for a in line["alerts"]]) for line in lines if line["alerts"]] == [
        (NOW + 4, ["thermal"]), (NOW + 6, ["memory"])
    ]
    assert len(lines) == 8


def test_a_recording_that_fails_stops_and_says_so_on_that_tick_only() -> None:
    feed = TickFeed(Watcher(), Recorder("/dev/full"))
    failed = feed.take(snap(0))
    after = feed.take(snap(1))
    assert str(failed.recording_error) == "cannot write /dev/full: No space left on device"
    assert after.recording_error is None and feed.recorder is None
    assert len(feed.watcher.history) == 2  # the ticks go on into the history


def test_the_handover_keeps_the_newest_tick_and_every_event_and_error_of_the_ticks_between() -> None:
    feed = TickFeed(Watcher(), Recorder("/dev/full"))
    handover = Handover()
    assert handover.take() is None
    # Hot from 1 to 4 (raised at 4, cleared 15 s after it cooled: at 20), memory full from 18 (raised at 21).
    ticks = [
        feed.take(snap(step, temperature=86.0 if 1 <= step <= 4 else 60.0, used_gib=78.0 if step >= 18 else 10.0))
        for step in range(22)
    ]
    for tick in ticks:
        handover.put(tick)
    delivery = handover.take()
    assert delivery is not None
    assert delivery.tick is ticks[-1] and delivery.ticks == 22
    assert delivery.events == ticks[4].foresight.events + ticks[20].foresight.events + ticks[21].foresight.events
    assert [(e.time - NOW, e.kind, e.cleared) for e in delivery.events] == [
        (4, "thermal", False), (20, "thermal", True), (21, "memory", False)
    ]
    assert delivery.recording_error is ticks[0].recording_error is not None
    assert handover.take() is None  # each tick delivered once


def test_the_history_read_under_the_watchers_lock_agrees_with_itself_while_another_thread_feeds_it() -> None:
    feed = TickFeed(Watcher(history=None))
    history = feed.watcher.history
    done = threading.Event()

    def sample_thread() -> None:
        for step in range(400):
            feed.take(snap(step))
        done.set()

    thread = threading.Thread(target=sample_thread)
    thread.start()
    reads = 0
    while not done.is_set() or reads == 0:
        with feed.watcher.lock:
            gpu = history.gpus.get(0)
            if gpu is not None:
                times, utilization = list(gpu.timestamps), list(gpu.utilization)
                # Same length, and the newest value belongs to the newest time (utilization = step % 100).
                assert len(times) == len(utilization) == len(history)
                assert utilization[-1] == float(round(times[-1] - NOW) % 100)
                reads += 1
    thread.join()
    assert reads > 1 and len(history) == 400
