"""The one JSON codec of a snapshot, its writing half: ``--json``, recordings and the exporter's tests write this.

``snapshot_to_dict`` encodes (optionally with forecasts and alerts), ``dumps`` writes a document as
text; ``snapshot_decode`` reads it back (recordings, replays). The schema: docs/json.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.codec import add_diagnoses, health_to_dict
from gputop.core.analysis.forecast import FORECAST_NOT_YET, GROWTH_NOT_YET, Forecast, Forecasts
from gputop.core.format import safe_json
from gputop.core.model import (
    Activity,
    Allocation,
    Energy,
    GpuSample,
    Job,
    MigSample,
    NvLink,
    ProcessSample,
    Snapshot,
)

# 2: activity (GPM), energy, NVLink and the PCIe link (issue 29); schema 1 documents still read back.
JSON_SCHEMA_VERSION = 2


def process_to_dict(process: ProcessSample) -> dict[str, Any]:
    return {
        "pid": process.pid,
        "type": process.type,
        "gpu_memory": process.gpu_memory,
        "sm_utilization": process.sm_utilization,
        "sm_last_active": process.sm_last_active,
        "mig_device": process.mig_index,
        "user": process.user,
        "name": process.name,
        "command": process.command,
        "cpu_percent": process.cpu_percent,
        "host_memory": process.host_memory,
        "started": process.started,
        "container": process.container,
        "container_name": process.container_name,
        "visible": process.visible,
        "parent_pid": process.parent_pid,
        "parent_command": process.parent_command,
        "stale": process.stale,
        "not_visible_reason": process.not_visible_reason,
        "container_runtime": process.container_runtime,
        "container_id": process.container_id,
        "pod_uid": process.pod_uid,
        "job": None if process.job is None else job_to_dict(process.job),
    }


def job_to_dict(job: Job) -> dict[str, Any]:
    return {
        "scheduler": job.scheduler,
        "id": job.id,
        "step": job.step,
        "name": job.name,
        "user": job.user,
        "partition": job.partition,
        "account": job.account,
    }


def mig_to_dict(mig: MigSample) -> dict[str, Any]:
    return {
        "index": mig.index,
        "name": mig.name,
        "uuid": mig.uuid,
        "gpu_instance_id": mig.gpu_instance_id,
        "compute_instance_id": mig.compute_instance_id,
        "memory": {"total": mig.memory_total, "used": mig.memory_used, "free": mig.memory_free},
        "processes": [process_to_dict(p) for p in mig.processes],
        "activity": activity_to_dict(mig.activity),
        "allocation": allocation_to_dict(mig.allocation),
        "processes_known": mig.processes_known,
    }


ACTIVITY_FIELDS = (
    "sm_active",
    "sm_occupancy",
    "tensor_active",
    "dram_active",
    "fp64_active",
    "fp32_active",
    "fp16_active",
    "graphics_active",
)


def activity_to_dict(activity: Activity | None) -> dict[str, Any] | None:
    """Percent, each null where unknown; null as a whole without GPM."""
    if activity is None:
        return None
    return {name: getattr(activity, name) for name in ACTIVITY_FIELDS}


def nvlink_to_dict(nvlink: NvLink | None) -> dict[str, Any] | None:
    if nvlink is None:
        return None
    return {
        "version": nvlink.version,
        "links_active": nvlink.links_active,
        "links_total": nvlink.links_total,
        "rx": nvlink.rx,
        "tx": nvlink.tx,
        "errors": {"crc": nvlink.errors_crc, "replay": nvlink.errors_replay, "recovery": nvlink.errors_recovery},
        # Beyond the fields, so that a replay names the link as the live run did.
        "links_down": list(nvlink.links_down),
        "errors_by_link": [[link, count] for link, count in nvlink.errors_by_link],
    }


def energy_to_dict(energy: Energy | None) -> dict[str, Any] | None:
    if energy is None:
        return None
    return {"since_driver_load_j": energy.since_driver_load_j, "since_start_j": energy.since_start_j}


def allocation_to_dict(allocation: Allocation | None) -> dict[str, Any] | None:
    if allocation is None:
        return None
    return {
        "namespace": allocation.namespace,
        "pod": allocation.pod,
        "container": allocation.container,
        "resource": allocation.resource,
    }


def gpu_to_dict(gpu: GpuSample) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "name": gpu.name,
        "uuid": gpu.uuid,
        "pci_bus_id": gpu.pci_bus_id,
        "lost": gpu.lost,
        "answering": gpu.answering,
        "not_answering_since": gpu.not_answering_since,
        "last_error": gpu.last_error,
        "read_failed": gpu.read_failed,
        "memory": {
            "total": gpu.memory_total,
            "used": gpu.memory_used,
            "free": gpu.memory_free,
            "reserved": gpu.memory_reserved,
        },
        "utilization": {
            "gpu": gpu.utilization_gpu,
            "memory": gpu.utilization_memory,
            "encoder": gpu.utilization_encoder,
            "decoder": gpu.utilization_decoder,
        },
        "temperature": {
            "current": gpu.temperature,
            "slowdown": gpu.temperature_slowdown,
            "shutdown": gpu.temperature_shutdown,
            "memory": gpu.memory_temperature,
        },
        "fan": gpu.fan_speed,
        "power": {"draw": gpu.power_draw, "limit": gpu.power_limit},
        "clocks": {
            "sm": gpu.clock_sm,
            "memory": gpu.clock_memory,
            "sm_max": gpu.clock_sm_max,
            "memory_max": gpu.clock_memory_max,
        },
        "clock_event_reasons": None if gpu.clock_event_reasons is None else list(gpu.clock_event_reasons),
        "health": health_to_dict(gpu.health),
        "pstate": gpu.pstate,
        "pcie": {
            "rx": gpu.pcie_rx,
            "tx": gpu.pcie_tx,
            "link_gen": gpu.pcie_link_gen,
            "link_gen_max": gpu.pcie_link_gen_max,
            "link_width": gpu.pcie_link_width,
            "link_width_max": gpu.pcie_link_width_max,
            "replay_errors": gpu.pcie_replay_errors,
        },
        "activity": activity_to_dict(gpu.activity),
        "nvlink": nvlink_to_dict(gpu.nvlink),
        "energy": energy_to_dict(gpu.energy),
        "mig_mode": gpu.mig_mode,
        "mig_devices": [mig_to_dict(m) for m in gpu.mig_devices],
        "processes": [process_to_dict(p) for p in gpu.all_processes()],
        "allocation": allocation_to_dict(gpu.allocation),
        "processes_known": gpu.processes_known,
    }


def forecast_to_dict(forecast: Forecast) -> dict[str, Any]:
    return {"seconds_to_full": forecast.seconds_to_full, "growth_rate": forecast.growth_rate}


def alert_to_dict(event: AlertEvent) -> dict[str, Any]:
    return {
        "time": event.time,
        "gpu": event.gpu_index,
        "mig_device": event.mig_index,
        "kind": event.kind,
        "message": event.message,
        "cleared": event.cleared,
        "subject": event.subject,
        "updated": event.updated,
    }


def _add_forecasts(document: dict[str, Any], snapshot: Snapshot, forecasts: Forecasts) -> None:
    """Per GPU and MIG device ``forecast``, per process ``growth_rate`` (0.0: no steady growth; None: not known yet)."""
    for gpu, gpu_document in zip(snapshot.gpus, document["gpus"], strict=True):
        gpu_document["forecast"] = forecast_to_dict(forecasts.gpus.get(gpu.index, FORECAST_NOT_YET))
        for mig, mig_document in zip(gpu.mig_devices, gpu_document["mig_devices"], strict=True):
            forecast = forecasts.migs.get((gpu.index, mig.index), FORECAST_NOT_YET)
            mig_document["forecast"] = forecast_to_dict(forecast)
            for process, process_document in zip(mig.processes, mig_document["processes"], strict=True):
                growth = forecasts.processes.get(process.identity, GROWTH_NOT_YET)
                process_document["growth_rate"] = growth.growth_rate
        for process, process_document in zip(gpu.all_processes(), gpu_document["processes"], strict=True):
            growth = forecasts.processes.get(process.identity, GROWTH_NOT_YET)
            process_document["growth_rate"] = growth.growth_rate


def snapshot_to_dict(
    snapshot: Snapshot,
    forecasts: Forecasts | None = None,
    alerts: Iterable[AlertEvent] | None = None,
    diagnoses: Diagnoses | None = None,
) -> dict[str, Any]:
    """The ``--json`` document (see the README for the schema).

    With ``forecasts``, every GPU and MIG device gets a ``forecast`` and every
    process a ``growth_rate``; with ``diagnoses``, every GPU a ``verdict``, GPUs
    and MIG devices ``unattributed_memory`` and processes ``idle_seconds``;
    with ``alerts``, the document lists them.
    """
    document = _snapshot_document(snapshot)
    if forecasts is not None:
        _add_forecasts(document, snapshot, forecasts)
    if diagnoses is not None:
        add_diagnoses(document, snapshot, diagnoses)
    if alerts is not None:
        document["alerts"] = [alert_to_dict(event) for event in alerts]
    return document


def _snapshot_document(snapshot: Snapshot) -> dict[str, Any]:
    host = snapshot.host
    return {
        "schema": JSON_SCHEMA_VERSION,
        "timestamp": snapshot.timestamp,
        "hostname": snapshot.hostname,
        "source": snapshot.source,
        "driver_version": snapshot.driver_version,
        "cuda_driver_version": snapshot.cuda_driver_version,
        "host": {
            "cpu_percent": host.cpu_percent,
            "memory_total": host.memory_total,
            "memory_used": host.memory_used,
            "swap_total": host.swap_total,
            "swap_used": host.swap_used,
            "load_average": list(host.load_average) if host.load_average is not None else None,
            "net_rx_rate": host.net_rx_rate,
            "net_tx_rate": host.net_tx_rate,
            "net_interfaces": None if host.net_interfaces is None else list(host.net_interfaces),
        },
        "gpus": [gpu_to_dict(g) for g in snapshot.gpus],
    }


def dumps(document: dict[str, Any], *, indent: int | None = None) -> str:
    """A document as JSON text: UTF-8 kept, terminal controls escaped; one line without ``indent``."""
    separators = (",", ":") if indent is None else None
    return safe_json(json.dumps(document, indent=indent, ensure_ascii=False, separators=separators))
