"""The diagnoses in the ``--json`` schema: raw health counters both ways, judgements one way.

What the GPU reports (health counters, clock event reasons) is recorded, read
back by replay and judged again there; what gputop concludes (verdict,
unattributed memory, idle seconds) is written for readers of ``--json`` and
recordings, and recomputed rather than read back.
"""

from __future__ import annotations

from typing import Any

from gputop.core.analysis.diagnosis.diagnoser import Diagnoses
from gputop.core.model import GpuHealth, RemappedRows, Snapshot, XidEvent


def health_to_dict(health: GpuHealth) -> dict[str, Any]:
    rows = health.remapped_rows
    return {
        "ecc_uncorrected_volatile": health.ecc_uncorrected_volatile,
        "ecc_uncorrected_aggregate": health.ecc_uncorrected_aggregate,
        "remapped_rows": None
        if rows is None
        else {
            "corrected": rows.corrected,
            "uncorrected": rows.uncorrected,
            "pending": rows.pending,
            "failure": rows.failure,
        },
        "retired_pages_pending": health.retired_pages_pending,
        "xid_events": None
        if health.xid_events is None
        else [{"code": event.code, "time": event.time} for event in health.xid_events],
    }


def health_from_dict(data: dict[str, Any] | None) -> GpuHealth:
    """The inverse of ``health_to_dict``; a recording from before health was recorded has none."""
    if data is None:
        return GpuHealth()
    rows, events = data["remapped_rows"], data["xid_events"]
    return GpuHealth(
        ecc_uncorrected_volatile=data["ecc_uncorrected_volatile"],
        ecc_uncorrected_aggregate=data["ecc_uncorrected_aggregate"],
        remapped_rows=None
        if rows is None
        else RemappedRows(
            int(rows["corrected"]), int(rows["uncorrected"]), bool(rows["pending"]), bool(rows["failure"])
        ),
        retired_pages_pending=data["retired_pages_pending"],
        xid_events=None if events is None else tuple(XidEvent(int(e["code"]), float(e["time"])) for e in events),
    )


def add_diagnoses(document: dict[str, Any], snapshot: Snapshot, diagnoses: Diagnoses) -> None:
    """Per GPU ``verdict`` and ``unattributed_memory``, per MIG device ``unattributed_memory``,
    per process ``idle_seconds``."""
    for gpu, gpu_document in zip(snapshot.gpus, document["gpus"], strict=True):
        diagnosis = diagnoses.gpus.get(gpu.index)
        gpu_document["verdict"] = None if diagnosis is None else diagnosis.verdict
        gpu_document["unattributed_memory"] = None if diagnosis is None else diagnosis.unattributed.memory
        for mig, mig_document in zip(gpu.mig_devices, gpu_document["mig_devices"], strict=True):
            unattributed = diagnoses.migs.get((gpu.index, mig.index))
            mig_document["unattributed_memory"] = None if unattributed is None else unattributed.memory
            for process, process_document in zip(mig.processes, mig_document["processes"], strict=True):
                found = diagnoses.processes.get(process.identity)
                process_document["idle_seconds"] = None if found is None else found.idle_seconds
        for process, process_document in zip(gpu.all_processes(), gpu_document["processes"], strict=True):
            found = diagnoses.processes.get(process.identity)
            process_document["idle_seconds"] = None if found is None else found.idle_seconds
