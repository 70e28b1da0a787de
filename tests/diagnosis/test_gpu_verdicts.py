"""Throttling, the stall verdict, unattributed memory, and no false alarms on healthy GPUs."""

from __future__ import annotations

from dataclasses import replace

from gputop.core.analysis.diagnosis.memory import Hidden
from gputop.core.analysis.diagnosis.problems import problems
from gputop.core.analysis.diagnosis.reasons import decode_reasons, limiting_reasons
from gputop.core.analysis.foresight import Watcher
from gputop.core.model import MigSample
from gputop.core.output.once_table import render_text
from gputop.core.settings import Thresholds
from tests.diagnosis.helpers import GIB, TOTAL, cleared, gpu, process, raised, run, snapshot


def test_the_reason_bitmask_decodes_to_names_in_nvml_order() -> None:
    assert decode_reasons(0x1) == ("gpu_idle",)
    assert decode_reasons(0x4 | 0x40 | 0x8000) == ("sw_power_cap", "hw_thermal")
    assert limiting_reasons(("gpu_idle", "sw_power_cap", "hw_slowdown")) == ("hw_slowdown", "sw_power_cap")


# A job holding memory on the GPU: a verdict needs one.
JOB = (process(memory=9 * GIB, sm=100.0),)


def test_a_power_cap_is_throttled_but_raises_no_alert() -> None:
    busy = gpu(utilization_gpu=100.0, power_draw=700.0, clock_event_reasons=("sw_power_cap",), processes=JOB)
    _, ticks = run([(0.0, busy), (1.0, busy)])
    assert [f.diagnoses.gpus[0].verdict for f in ticks] == ["throttled", "throttled"]
    assert ticks[0].diagnoses.gpus[0].limiting == ("sw_power_cap",)
    assert raised(ticks, "throttle") == []


def test_hw_thermal_slowdown_raises_a_throttle_alert_once_and_clears_once() -> None:
    hot = gpu(utilization_gpu=100.0, power_draw=500.0, clock_event_reasons=("hw_thermal", "sw_thermal"), processes=JOB)
    fine = gpu(utilization_gpu=100.0, power_draw=500.0, clock_event_reasons=(), processes=JOB)
    # Throttled from 1 s to 5 s (a blip of 2 s first, too short to alert), then fine from 6 s: the alert is
    # raised once the throttling has held 3 s (at 4 s), cleared once it has been gone 15 s (at 21 s).
    frames = [(0.0, fine), (1.0, hot), (2.0, hot), (3.0, hot), (4.0, hot), (5.0, hot)]
    frames = [(-10.0, hot), (-9.0, hot), (-8.0, fine), *frames] + [(float(t), fine) for t in range(6, 25)]
    _, ticks = run(frames)
    verdicts = [f.diagnoses.gpus[0].verdict for f in ticks]
    assert verdicts[:9] == ["throttled", "throttled", None, None] + ["throttled"] * 5 and set(verdicts[9:]) == {None}
    assert [(e.time, e.message) for e in raised(ticks, "throttle")] == [
        (4.0, "GPU 0 throttled: HW thermal, SW thermal")
    ]
    assert [(e.time, e.message) for e in cleared(ticks, "throttle")] == [(21.0, "GPU 0 no longer throttled")]


def test_stalled_after_two_minutes_busy_at_low_power_with_flat_memory() -> None:
    spinning = gpu(used=40 * GIB, utilization_gpu=100.0, power_draw=150.0, clock_event_reasons=(), processes=JOB)
    working = replace(spinning, power_draw=600.0)
    frames = [(t * 10.0, spinning) for t in range(14)] + [(t * 10.0, working) for t in range(14, 17)]
    _, ticks = run(frames)
    verdicts = [f.diagnoses.gpus[0].verdict for f in ticks]
    assert verdicts.index("stalled") == 12  # 120 s after the first tick at 0 s
    assert verdicts[12:] == ["stalled", "stalled", None, None, None]
    assert [(e.time, e.message) for e in raised(ticks, "stall")] == [
        (
            120.0,
            "GPU 0 may be stalled: 100% busy at 21% of its power limit with memory flat"
            " (a job spinning in a collective?)",
        )
    ]
    # Working again from 140 s: cleared once that has held 15 s, on the tick at 160 s.
    assert [e.time for e in cleared(ticks, "stall")] == [160.0]


def test_no_verdict_without_a_process_holding_memory_on_the_gpu() -> None:
    # Utilization held high at idle power with nothing running (issue 28): nothing is stalled there.
    empty = gpu(used=0, utilization_gpu=100.0, power_draw=70.0, clock_event_reasons=("sw_power_cap",))
    holding_nothing = replace(empty, processes=(process(memory=0, sm=None),))
    memory_unknown = replace(empty, processes=(process(memory=None, sm=None),))
    for sample in (empty, holding_nothing, memory_unknown):
        _, ticks = run([(t * 10.0, sample) for t in range(20)])
        assert {f.diagnoses.gpus[0].verdict for f in ticks} == {None}
        assert ticks[-1].diagnoses.gpus[0].limiting == ("sw_power_cap",)  # the reason is still reported
        assert raised(ticks, "stall") == []
    # The same GPU once a process holds memory there: stalled after two minutes, as before.
    held = replace(empty, processes=JOB)
    _, ticks = run([(t * 10.0, held) for t in range(14)])
    assert [f.diagnoses.gpus[0].verdict for f in ticks][11:] == ["throttled", "stalled", "stalled"]


def test_memory_on_the_move_is_not_a_stall() -> None:
    frames = [
        (t * 10.0, gpu(used=(10 + t) * GIB, utilization_gpu=100.0, power_draw=150.0, clock_event_reasons=()))
        for t in range(30)
    ]
    _, ticks = run(frames)
    assert {f.diagnoses.gpus[0].verdict for f in ticks} == {None}
    assert raised(ticks, "stall") == []


def test_no_false_alarms_on_flat_busy_or_idle_but_empty_gpus() -> None:
    idle_empty = gpu(used=0)
    flat = gpu(used=20 * GIB, utilization_gpu=40.0, power_draw=300.0, clock_event_reasons=())
    busy = gpu(
        used=70 * GIB,
        utilization_gpu=100.0,
        power_draw=650.0,
        clock_event_reasons=(),
        processes=(process(memory=70 * GIB - 300 * 1024 * 1024, sm=97.0),),
    )
    for sample in (idle_empty, flat, busy):
        _, ticks = run([(t * 30.0, replace(sample, processes=sample.processes)) for t in range(60)])
        diagnosis = ticks[-1].diagnoses.gpus[0]
        assert diagnosis.verdict is None
        assert diagnosis.health == ()
        assert diagnosis.unattributed.shown is (sample is flat)  # 20 GiB used and no process listed
        assert [e.kind for f in ticks for e in f.events] == []


def test_memory_no_process_accounts_for_is_shown_above_the_tolerance() -> None:
    listed = (process(memory=30 * GIB), process(pid=77, memory=2 * GIB, visible=False))
    _, ticks = run([(0.0, gpu(used=70 * GIB, processes=listed)), (1.0, gpu(used=34 * GIB, processes=listed))])
    first, second = (f.diagnoses.gpus[0].unattributed for f in ticks)
    assert (first.memory, first.shown, first.hidden_processes) == (38 * GIB, True, 1)
    # 2 GiB is within max(1 GiB, 5 % of 80 GiB = 4 GiB).
    assert (second.memory, second.shown) == (2 * GIB, False)


def test_hidden_processes_are_counted_and_their_memory_summed_by_reason_in_the_words_of_the_panel() -> None:
    listed = (
        process(memory=30 * GIB),
        process(pid=71, memory=2 * GIB, visible=False, not_visible_reason="exited"),
        process(pid=72, memory=3 * GIB, visible=False, not_visible_reason="exited"),
        process(pid=73, memory=4 * GIB, visible=False, not_visible_reason="pid_namespace"),
        process(pid=74, memory=1 * GIB, visible=False, not_visible_reason=None),
    )
    snap = snapshot(0.0, gpu(used=70 * GIB, processes=listed))
    diagnoses = Watcher().update(snap).diagnoses
    unattributed = diagnoses.gpus[0].unattributed
    # The hidden processes' memory is accounted for by what NVML lists: 70 - 30 - 2 - 3 - 4 - 1.
    assert (unattributed.memory, unattributed.hidden_processes) == (30 * GIB, 4)
    assert unattributed.hidden == (
        Hidden(reason="exited", processes=2, memory=5 * GIB),
        Hidden(reason="pid_namespace", processes=1, memory=4 * GIB),
        Hidden(reason=None, processes=1, memory=1 * GIB),
    )
    [found] = [p.text for p in problems(snap, diagnoses) if p.kind == "unattributed"]
    assert found == (
        "(no process) 30.0GiB of memory no listed process accounts for; 4 listed but not visible here:"
        " 2 exited (5.0GiB), 1 other PID namespace (4.0GiB), 1 reason unknown (1.0GiB)"
    )
    lines = render_text(snap, colour=False, width=120, diagnoses=diagnoses).splitlines()
    # --once names each by its reason, in the words of the panel and the process screen.
    commands = {int(line.split()[1]): line.split("  ")[-1] for line in lines if line.startswith("   0      7")}
    assert commands == {
        71: "(not visible: exited)",
        72: "(not visible: exited)",
        73: "(not visible: other PID namespace)",
        74: "(not visible from here)",
    }


def test_unattributed_memory_is_unknown_when_a_process_memory_is() -> None:
    _, ticks = run([(0.0, gpu(used=70 * GIB, processes=(process(memory=None),)))])
    assert ticks[0].diagnoses.gpus[0].unattributed.memory is None
    assert ticks[0].diagnoses.gpus[0].unattributed.shown is False


def test_unattributed_memory_per_mig_device_and_outside_them() -> None:
    mig = MigSample(
        index=1, memory_total=20 * GIB, memory_used=12 * GIB, processes=(process(memory=2 * GIB, mig_index=1),)
    )
    sample = gpu(used=14 * GIB, mig_mode=True, mig_devices=(mig,))
    _, ticks = run([(0.0, sample)], Thresholds(unattributed_min_gib=1.0))
    assert ticks[0].diagnoses.migs[(0, 1)].memory == 10 * GIB
    assert ticks[0].diagnoses.migs[(0, 1)].shown is True
    assert ticks[0].diagnoses.gpus[0].unattributed.memory == 2 * GIB
    assert ticks[0].diagnoses.gpus[0].unattributed.shown is False
    assert TOTAL == 80 * GIB
