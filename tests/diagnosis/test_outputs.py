"""The diagnoses in --json, the --once problems section, and recordings that replay them."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path

from gputop.core.analysis.foresight import Watcher
from gputop.core.model import GpuHealth, MigSample, RemappedRows, XidEvent
from gputop.core.output.once_table import render_text
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.recording.record import Recorder, read_recording
from gputop.core.settings import Thresholds
from tests.diagnosis.helpers import GIB, gpu, process, snapshot

HEALTH = GpuHealth(
    ecc_uncorrected_volatile=1,
    ecc_uncorrected_aggregate=4,
    remapped_rows=RemappedRows(corrected=2, uncorrected=1, pending=True, failure=False),
    retired_pages_pending=None,
    xid_events=(XidEvent(79, 95.0),),
)


def frames() -> list:  # type: ignore[type-arg]
    """Four GPUs over 130 s: an idle hog with unattributed memory, a power cap, a stall, bad health."""
    hog = process(memory=30 * GIB, sm=0.0, container="docker:0123456789ab", container_name="trainer")
    job = process(pid=99, memory=40 * GIB, sm=100.0, gpu_index=2)
    capped = process(pid=98, memory=8 * GIB, sm=100.0, gpu_index=1)
    mig = MigSample(index=0, memory_total=20 * GIB, memory_used=2 * GIB, processes=())
    out = []
    for t in range(0, 140, 10):
        out.append(
            snapshot(
                float(t),
                gpu(0, used=70 * GIB, processes=(hog,), clock_sm_max=1980, clock_memory_max=2619),
                gpu(
                    1, used=8 * GIB, utilization_gpu=100.0, power_draw=700.0, clock_event_reasons=("sw_power_cap",),
                    processes=(capped,),
                ),  # fmt: skip
                gpu(
                    2, used=40 * GIB, utilization_gpu=100.0, power_draw=100.0, clock_event_reasons=(), processes=(job,)
                ),
                gpu(3, used=2 * GIB, health=HEALTH, mig_mode=True, mig_devices=(mig,), clock_event_reasons=None),
            )
        )
    return out


def run_all(thresholds: Thresholds) -> tuple[Watcher, list]:  # type: ignore[type-arg]
    watcher = Watcher(thresholds)
    return watcher, [watcher.update(s) for s in frames()]


def test_json_names_every_diagnosis_as_the_issue_does() -> None:
    watcher, foresights = run_all(Thresholds(idle_after_s=60.0))
    last = frames()[-1]
    document = snapshot_to_dict(
        last, foresights[-1].forecasts, watcher.monitor.active.values(), foresights[-1].diagnoses
    )
    first, power, stalled, sick = document["gpus"]
    assert (first["verdict"], power["verdict"], stalled["verdict"], sick["verdict"]) == (
        None,
        "throttled",
        "stalled",
        None,
    )
    assert first["unattributed_memory"] == 40 * GIB
    assert first["clocks"] == {"sm": None, "memory": None, "sm_max": 1980, "memory_max": 2619}
    assert first["clock_event_reasons"] == ["gpu_idle"]
    assert sick["clock_event_reasons"] is None
    assert first["processes"][0]["idle_seconds"] == 130.0
    assert first["processes"][0]["container_name"] == "trainer"
    assert sick["health"] == {
        "ecc_uncorrected_volatile": 1,
        "ecc_uncorrected_aggregate": 4,
        "remapped_rows": {"corrected": 2, "uncorrected": 1, "pending": True, "failure": False},
        "retired_pages_pending": None,
        "xid_events": [{"code": 79, "time": 95.0}],
    }
    assert sick["mig_devices"][0]["unattributed_memory"] == 2 * GIB
    assert document["gpus"][1]["health"]["xid_events"] is None  # no event support: null, not []
    kinds = sorted((alert["kind"], alert["gpu"]) for alert in document["alerts"])
    assert kinds == [("health", 3), ("health", 3), ("health", 3), ("idle", 0), ("stall", 2)]


def test_json_of_a_process_memory_not_available_is_null() -> None:
    watcher = Watcher()
    sample = snapshot(0.0, gpu(processes=(process(memory=None, sm=None),)))
    document = snapshot_to_dict(sample, diagnoses=watcher.update(sample).diagnoses)
    assert document["gpus"][0]["unattributed_memory"] is None
    assert document["gpus"][0]["processes"][0]["idle_seconds"] is None


def test_once_ends_with_the_problems_and_says_nothing_when_there_are_none() -> None:
    watcher, foresights = run_all(Thresholds(idle_after_s=60.0))
    text = render_text(frames()[-1], colour=False, diagnoses=foresights[-1].diagnoses)
    problems = text.splitlines()[text.splitlines().index("Problems") + 1 :]
    since = time.strftime("%H:%M:%S", time.localtime(0.0))
    xid_since = time.strftime("%H:%M:%S", time.localtime(95.0))
    assert problems == [
        "  GPU 0  (no process) 40.0GiB of memory no listed process accounts for",
        "  GPU 0  PID 4242 (python, alice) idle 2m10s, holding 30.0GiB",
        "  GPU 1  THROTTLED · power cap",
        "  GPU 2  STALLED? 100% busy at 14% of its power limit, memory flat",
        "  GPU 3 MIG 0  (no process) 2.0GiB of memory no listed process accounts for",
        f"  GPU 3  1 uncorrected ECC error since the driver loaded ({since})",
        f"  GPU 3  a row remap is pending: reset the GPU to apply it ({since})",
        f"  GPU 3  XID 79: GPU has fallen off the bus ({xid_since})",
    ]
    quiet = snapshot(0.0, gpu(used=GIB))
    assert "Problems" not in render_text(quiet, colour=False, diagnoses=Watcher().update(quiet).diagnoses)


def test_a_recording_carries_what_the_gpu_reported_and_replay_judges_it_again(tmp_path: Path) -> None:
    path = str(tmp_path / "run.jsonl")
    thresholds = Thresholds(idle_after_s=60.0)
    live = Watcher(thresholds)
    recorder = Recorder(path)
    live_verdicts = []
    for sample in frames():
        foresight = live.update(sample)
        live_verdicts.append({i: d.verdict for i, d in foresight.diagnoses.gpus.items()})
        recorder.write(sample, forecasts=foresight.forecasts, alerts=foresight.events, diagnoses=foresight.diagnoses)
    recorder.close()

    recording = read_recording(path)
    assert recording.snapshots == frames()
    line = json.loads(Path(path).read_text().splitlines()[-1])
    assert line["gpus"][0]["processes"][0]["idle_seconds"] == 130.0
    replayed = Watcher(thresholds)
    replay_verdicts = [
        {i: d.verdict for i, d in replayed.update(s).diagnoses.gpus.items()} for s in recording.snapshots
    ]
    assert replay_verdicts == live_verdicts
    assert [(e.kind, e.time) for e in replayed.monitor.log] == [(e.kind, e.time) for e in live.monitor.log]


def test_a_recording_from_before_the_diagnoses_still_replays(tmp_path: Path) -> None:
    document = snapshot_to_dict(snapshot(0.0, gpu(processes=(process(),))))
    gpu_document = document["gpus"][0]
    for key in ("clock_event_reasons", "health"):
        del gpu_document[key]
    del gpu_document["clocks"]["sm_max"], gpu_document["clocks"]["memory_max"]
    del gpu_document["processes"][0]["container_name"]
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps(document) + "\n")
    (old,) = read_recording(str(path)).snapshots
    assert old.gpus[0].health == GpuHealth()
    assert (old.gpus[0].clock_event_reasons, old.gpus[0].clock_sm_max) == (None, None)
    assert replace(old.gpus[0].processes[0]).container_name is None
