"""Idle memory hogs: a process holding memory that has not used SM time for idle_after_s."""

from __future__ import annotations

from gputop.core.settings import Thresholds
from tests.diagnosis.helpers import GIB, cleared, gpu, process, raised, run


def test_idle_seconds_count_from_the_last_tick_the_process_ran() -> None:
    frames = [(t, gpu(processes=(process(sm=50.0 if t <= 100 else 0.0),))) for t in range(0, 800, 50)]
    watcher, ticks = run([(float(t), g) for t, g in frames])
    identity = (4242, 5242.0)
    assert [f.diagnoses.processes[identity].idle_seconds for f in ticks][:5] == [0.0, 0.0, 0.0, 50.0, 100.0]
    idle = [f.diagnoses.processes[identity].idle for f in ticks]
    # Last ran at 100 s: idle from 700 s on (600 s later).
    assert idle.index(True) == 14
    assert [e.message for e in raised(ticks, "idle")] == [
        "PID 4242 (python, alice) idle 10m00s on GPU 0, holding 8.0GiB"
    ]
    assert raised(ticks, "idle")[0].time == 700.0


def test_an_idle_process_that_runs_again_clears_its_alert_once_and_can_be_raised_again() -> None:
    thresholds = Thresholds(idle_after_s=60.0)
    pattern = [0.0] * 8 + [30.0] + [0.0] * 8
    watcher, ticks = run([(t * 10.0, gpu(processes=(process(sm=sm),))) for t, sm in enumerate(pattern)], thresholds)
    assert [e.time for e in raised(ticks, "idle")] == [60.0, 140.0]
    assert [(e.time, e.message) for e in cleared(ticks, "idle")] == [
        (80.0, "PID 4242 (python, alice) on GPU 0 is no longer idle")
    ]


def test_an_idle_process_that_exits_clears_its_alert() -> None:
    thresholds = Thresholds(idle_after_s=20.0)
    frames = [(t * 10.0, gpu(processes=(process(),))) for t in range(4)] + [(40.0, gpu())]
    _, ticks = run(frames, thresholds)
    assert [e.time for e in raised(ticks, "idle")] == [20.0]
    assert [(e.time, e.message) for e in cleared(ticks, "idle")] == [(40.0, "PID 4242 on GPU 0 has exited")]


def test_a_process_holding_little_memory_is_never_idle() -> None:
    thresholds = Thresholds(idle_after_s=20.0)
    frames = [(t * 10.0, gpu(processes=(process(memory=512 * 1024 * 1024),))) for t in range(10)]
    _, ticks = run(frames, thresholds)
    assert ticks[-1].diagnoses.processes[(4242, 5242.0)].idle_seconds == 90.0
    assert not any(f.diagnoses.processes[(4242, 5242.0)].idle for f in ticks)
    assert raised(ticks, "idle") == []


def test_without_per_process_samples_idleness_is_unknown_never_guessed() -> None:
    thresholds = Thresholds(idle_after_s=20.0)
    frames = [(t * 10.0, gpu(processes=(process(sm=None),))) for t in range(10)]
    _, ticks = run(frames, thresholds)
    assert {f.diagnoses.processes[(4242, 5242.0)].idle_seconds for f in ticks} == {None}
    assert raised(ticks, "idle") == []


def test_an_unknown_tick_starts_the_count_over() -> None:
    thresholds = Thresholds(idle_after_s=30.0)
    sms = [0.0, 0.0, None, 0.0, 0.0, 0.0, 0.0]
    _, ticks = run([(t * 10.0, gpu(processes=(process(sm=sm),))) for t, sm in enumerate(sms)], thresholds)
    assert [f.diagnoses.processes[(4242, 5242.0)].idle_seconds for f in ticks] == [
        0.0,
        10.0,
        None,
        10.0,
        20.0,
        30.0,
        40.0,
    ]
    assert [e.time for e in raised(ticks, "idle")] == [50.0]


def test_a_process_on_two_gpus_ran_if_it_ran_on_either_and_holds_both_memories() -> None:
    thresholds = Thresholds(idle_after_s=20.0, idle_min_memory_gib=10.0)
    frames = [
        (
            t * 10.0,
            gpu(
                processes=(
                    process(memory=6 * GIB, sm=0.0),
                    process(memory=6 * GIB, sm=5.0 if t == 1 else 0.0, gpu_index=1),
                )
            ),
        )
        for t in range(5)
    ]
    _, ticks = run(frames, thresholds)
    assert [f.diagnoses.processes[(4242, 5242.0)].idle_seconds for f in ticks] == [0.0, 0.0, 10.0, 20.0, 30.0]
    assert ticks[-1].diagnoses.processes[(4242, 5242.0)].memory == 12 * GIB
    assert [e.time for e in raised(ticks, "idle")] == [30.0]


def test_a_process_on_two_gpus_unknown_or_stale_on_one_starts_its_count_over_and_its_alert_moves_with_it() -> None:
    # Rows merged across GPUs: unknown on one and idle on the other is unknown (the count starts over);
    # a stale row says nothing; memory unknown on one is unknown; the source's latest SM use counts.
    thresholds = Thresholds(idle_after_s=20.0, idle_min_memory_gib=10.0)
    second = [0.0, None, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    frames = [
        (
            t * 10.0,
            gpu(
                processes=(
                    process(memory=6 * GIB, sm=0.0),
                    process(memory=6 * GIB, sm=sm, gpu_index=1, stale=t == 6),
                )
            ),
        )
        for t, sm in enumerate(second)
    ]
    _, ticks = run(frames, thresholds)
    identity = (4242, 5242.0)
    seconds = [f.diagnoses.processes[identity].idle_seconds for f in ticks]
    assert seconds == [0.0, None, 10.0, 20.0, 30.0, 40.0, None, 10.0]
    # Raised 20 s after the unknown tick; cleared once the stale tick started the count over.
    assert [e.time for e in raised(ticks, "idle")] == [30.0]
    assert [e.time for e in cleared(ticks, "idle")] == [70.0]
    unknown_memory = gpu(processes=(process(memory=6 * GIB), process(memory=None, gpu_index=1, sm_last_active=25.0)))
    _, ticks = run([(30.0, unknown_memory)], thresholds)
    merged = ticks[0].diagnoses.processes[identity]
    assert (merged.memory, merged.idle_seconds, merged.idle) == (None, 5.0, False)
