"""The diagnoses on /metrics: exact series for a hand-made machine."""

from __future__ import annotations

from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gputop.core.analysis.foresight import Watcher
from gputop.core.model import GpuHealth, RemappedRows, XidEvent
from gputop.core.output.exporter import SnapshotCollector, make_registry
from gputop.core.settings import Thresholds
from tests.diagnosis.helpers import GIB, gpu, process, snapshot

HEALTH = GpuHealth(2, 7, RemappedRows(5, 1, True, False), None, (XidEvent(79, 10.0),))


def series(collector: SnapshotCollector, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    text = generate_latest(make_registry(collector)).decode()
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                labels = {k: v for k, v in sample.labels.items() if k not in ("hostname", "uuid", "name")}
                found[tuple(sorted(labels.items()))] = sample.value
    return found


def test_every_diagnosis_metric_for_one_gpu() -> None:
    hog = process(memory=30 * GIB, sm=0.0, container="docker:0123456789ab", container_name="trainer")
    watcher = Watcher(Thresholds(idle_after_s=60.0))
    collector = SnapshotCollector(hostname="node-1")
    for t in (0.0, 90.0):
        sample = snapshot(
            t,
            gpu(
                0,
                used=40 * GIB,
                processes=(hog,),
                clock_sm_max=1980,
                health=HEALTH,
                clock_event_reasons=("sw_power_cap", "hw_slowdown"),
            ),
        )
        collector.update(sample, {}, watcher.update(sample).diagnoses)

    assert series(collector, "gputop_gpu_memory_unattributed_bytes") == {(("gpu", "0"),): 10.0 * GIB}
    reasons = series(collector, "gputop_gpu_clock_event_reasons")
    assert {labels[1][1] for labels, value in reasons.items() if value == 1.0} == {"sw_power_cap", "hw_slowdown"}
    assert len(reasons) == 9
    assert series(collector, "gputop_gpu_sm_clock_max_hertz") == {(("gpu", "0"),): 1.98e9}
    assert series(collector, "gputop_gpu_ecc_errors_uncorrected_total") == {
        (("gpu", "0"), ("scope", "volatile")): 2.0,
        (("gpu", "0"), ("scope", "aggregate")): 7.0,
    }
    assert series(collector, "gputop_gpu_remapped_rows") == {
        (("gpu", "0"), ("kind", "corrected")): 5.0,
        (("gpu", "0"), ("kind", "uncorrected")): 1.0,
        (("gpu", "0"), ("kind", "pending")): 1.0,
        (("gpu", "0"), ("kind", "failure")): 0.0,
    }
    # Seen on two updates, counted once.
    assert series(collector, "gputop_gpu_xid_errors_total") == {(("gpu", "0"), ("xid", "79")): 1.0}
    ((labels, idle),) = series(collector, "gputop_process_idle_seconds").items()
    assert idle == 90.0
    assert dict(labels)["container_name"] == "trainer" and dict(labels)["pid"] == "4242"


def test_xid_counts_only_grow_as_new_events_arrive() -> None:
    collector = SnapshotCollector(hostname="node-1")
    events: tuple[XidEvent, ...] = ()
    for t, code in ((1.0, 13), (2.0, 13), (3.0, 79)):
        events = (*events, XidEvent(code, t))
        collector.update(snapshot(t, gpu(health=GpuHealth(xid_events=events))))
    assert series(collector, "gputop_gpu_xid_errors_total") == {
        (("gpu", "0"), ("xid", "13")): 2.0,
        (("gpu", "0"), ("xid", "79")): 1.0,
    }
