"""Health: uncorrected ECC errors, row remapping, retired pages, XID events."""

from __future__ import annotations

from dataclasses import replace

from gputop.core.analysis.diagnosis.health import XID_OUTSTANDING_S
from gputop.core.model import GpuHealth, GpuSample, RemappedRows, XidEvent
from gputop.core.output.snapshot_json import alert_to_dict
from tests.diagnosis.helpers import cleared, gpu, raised, run, updated

ROWS = RemappedRows(corrected=0, uncorrected=0, pending=False, failure=False)


def healthy(**fields: object) -> GpuHealth:
    values: dict[str, object] = {
        "ecc_uncorrected_volatile": 0,
        "ecc_uncorrected_aggregate": 3,
        "remapped_rows": ROWS,
        "retired_pages_pending": None,
        "xid_events": (),
    }
    values.update(fields)
    return GpuHealth(**values)  # type: ignore[arg-type]


def test_a_healthy_gpu_with_old_aggregate_errors_has_no_health_problem() -> None:
    _, ticks = run([(float(t), gpu(health=healthy())) for t in range(5)])
    assert {f.diagnoses.gpus[0].health for f in ticks} == {()}
    assert raised(ticks, "health") == []


def test_new_uncorrected_ecc_errors_raise_one_health_alert_that_says_the_latest_count() -> None:
    counts = [0, 0, 2, 2, 3, 0]
    watcher, ticks = run([(float(t), gpu(health=healthy(ecc_uncorrected_volatile=n))) for t, n in enumerate(counts)])
    assert [(e.time, e.message) for e in raised(ticks, "health")] == [
        (2.0, "GPU 0 health: 2 uncorrected ECC errors since the driver loaded"),
    ]
    assert updated(ticks, "health") == []  # within a minute of the raise: the log alone has the count
    assert [(e.time, e.started, e.message) for e in watcher.monitor.log if e.kind == "health"] == [
        (4.0, 2.0, "GPU 0 health: 3 uncorrected ECC errors since the driver loaded"),
        (5.0, None, "GPU 0 health: no uncorrected ECC errors since the driver loaded (it was reloaded)"),
    ]
    assert [p.since for p in ticks[4].diagnoses.gpus[0].health] == [2.0]
    assert [e.time for e in cleared(ticks, "health")] == [5.0]


def test_a_counter_climbing_every_tick_keeps_one_alert_updated_at_most_once_a_minute() -> None:
    # Issue 28: uncorrected ECC errors growing every tick raised 18 health alerts in 20 ticks.
    frames = [(10.0 * t, gpu(health=healthy(ecc_uncorrected_volatile=t + 1))) for t in range(20)]
    watcher, ticks = run(frames)
    assert [(e.time, e.message) for e in raised(ticks, "health")] == [
        (0.0, "GPU 0 health: 1 uncorrected ECC error since the driver loaded")
    ]
    assert [(e.time, e.started, e.message) for e in updated(ticks, "health")] == [
        (60.0, 0.0, "GPU 0 health: 7 uncorrected ECC errors since the driver loaded"),
        (120.0, 0.0, "GPU 0 health: 13 uncorrected ECC errors since the driver loaded"),
        (180.0, 0.0, "GPU 0 health: 19 uncorrected ECC errors since the driver loaded"),
    ]
    assert [alert_to_dict(e)["updated"] for f in ticks for e in f.events] == [False, True, True, True]
    # One line in the log: when it started, and the latest count.
    [entry] = [e for e in watcher.monitor.log if e.kind == "health"]
    assert (entry.started, entry.time, entry.message) == (
        0.0, 190.0, "GPU 0 health: 20 uncorrected ECC errors since the driver loaded"
    )
    # The count stops climbing: the update not carried yet is carried once the minute is up.
    _, more = run(frames + [(190.0 + 10.0 * t, frames[-1][1]) for t in range(1, 6)])
    assert [e.time for e in updated(more, "health")][-1] == 240.0
    assert updated(more, "health")[-1].message == "GPU 0 health: 20 uncorrected ECC errors since the driver loaded"
    # A new kind of problem is a new alert.
    pending = replace(ROWS, pending=True)
    worse = replace(frames[-1][1], health=healthy(ecc_uncorrected_volatile=20, remapped_rows=pending))
    _, newer = run(frames + [(200.0, worse)])
    assert [e.message for e in raised(newer, "health")] == [
        "GPU 0 health: 1 uncorrected ECC error since the driver loaded",
        "GPU 0 health: a row remap is pending: reset the GPU to apply it",
    ]


def test_a_pending_remap_and_a_remap_failure_are_outstanding_until_they_go() -> None:
    pending = RemappedRows(corrected=0, uncorrected=1, pending=True, failure=True)
    states = [ROWS, pending, pending, ROWS]
    _, ticks = run([(float(t), gpu(health=healthy(remapped_rows=rows))) for t, rows in enumerate(states)])
    assert [p.key for p in ticks[2].diagnoses.gpus[0].health] == ["remap_pending", "remap_failure"]
    assert sorted(e.message for e in raised(ticks, "health")) == [
        "GPU 0 health: a row remap failed: the GPU needs service",
        "GPU 0 health: a row remap is pending: reset the GPU to apply it",
    ]
    assert len(cleared(ticks, "health")) == 2
    assert ticks[3].diagnoses.gpus[0].health == ()


def test_each_xid_event_is_one_alert_with_its_meaning_and_stays_outstanding_for_an_hour() -> None:
    events = (XidEvent(79, 1.5),)
    frames = [(0.0, gpu(health=healthy())), (2.0, gpu(health=healthy(xid_events=events)))]
    frames += [
        (3.0, gpu(health=healthy(xid_events=events))),
        (1.5 + XID_OUTSTANDING_S, gpu(health=healthy(xid_events=events))),
    ]
    _, ticks = run(frames)
    assert [(e.time, e.message) for e in raised(ticks, "health")] == [
        (2.0, "GPU 0 health: XID 79: GPU has fallen off the bus")
    ]
    assert [(p.since, p.text) for p in ticks[2].diagnoses.gpus[0].health] == [
        (1.5, "XID 79: GPU has fallen off the bus")
    ]
    assert ticks[3].diagnoses.gpus[0].health == ()
    # An event is over when it stops being outstanding: no "cleared" for it.
    assert cleared(ticks, "health") == []


def test_a_gpu_that_stops_answering_keeps_its_problems_and_raises_nothing_new() -> None:
    sick = gpu(health=healthy(ecc_uncorrected_volatile=1))
    silent = GpuSample(index=0, answering=False, not_answering_since=1.0)
    _, ticks = run([(0.0, sick), (1.0, silent), (2.0, silent), (3.0, sick)])
    assert [len(f.diagnoses.gpus[0].health) for f in ticks] == [1, 1, 1, 1]
    assert [(e.time, e.cleared) for f in ticks for e in f.events if e.kind == "health"] == [(0.0, False)]


def test_a_resolved_problem_says_what_changed() -> None:
    pending = RemappedRows(corrected=0, uncorrected=1, pending=True, failure=False)
    frames = [(0.0, gpu(health=healthy(remapped_rows=pending))), (1.0, gpu(health=healthy(remapped_rows=ROWS)))]
    _, ticks = run(frames)
    assert [e.message for e in cleared(ticks, "health")] == ["GPU 0 health: the pending row remap was applied"]
