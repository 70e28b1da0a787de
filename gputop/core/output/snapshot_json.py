"""The one JSON codec of a snapshot: ``--json``, recordings and replays all read and write this.

``snapshot_to_dict`` encodes (optionally with forecasts and alerts), ``snapshot_from_dict``
decodes, ``dumps`` writes a document as text; the README gives the schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.codec import add_diagnoses, health_from_dict, health_to_dict
from gputop.core.analysis.forecast import NO_FORECAST, NOT_GROWING, Forecast, Forecasts
from gputop.core.format import safe_json
from gputop.core.host.visibility import REASONS
from gputop.core.model import (
    Activity,
    Allocation,
    Energy,
    GpuSample,
    HostSample,
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


def _job(data: Any) -> Job | None:
    """A process's job back from JSON; None for none (and in recordings made before jobs)."""
    if not isinstance(data, dict):
        return None
    return Job(
        scheduler=str(data["scheduler"]),
        id=str(data["id"]),
        step=data.get("step"),
        name=data.get("name"),
        user=data.get("user"),
        partition=data.get("partition"),
        account=data.get("account"),
    )


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


def _allocation(data: Any) -> Allocation | None:
    """A device's pod back from JSON; None for none (and in recordings made before allocations)."""
    if not isinstance(data, dict):
        return None
    return Allocation(
        namespace=str(data["namespace"]), pod=str(data["pod"]), container=str(data["container"]),
        resource=str(data["resource"]),
    )


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
    """Per GPU and MIG device ``forecast``, per process ``growth_rate`` (0.0 without steady growth)."""
    for gpu, gpu_document in zip(snapshot.gpus, document["gpus"], strict=True):
        gpu_document["forecast"] = forecast_to_dict(forecasts.gpus.get(gpu.index, NO_FORECAST))
        for mig, mig_document in zip(gpu.mig_devices, gpu_document["mig_devices"], strict=True):
            forecast = forecasts.migs.get((gpu.index, mig.index), NO_FORECAST)
            mig_document["forecast"] = forecast_to_dict(forecast)
            for process, process_document in zip(mig.processes, mig_document["processes"], strict=True):
                growth = forecasts.processes.get(process.identity, NOT_GROWING)
                process_document["growth_rate"] = growth.growth_rate
        for process, process_document in zip(gpu.all_processes(), gpu_document["processes"], strict=True):
            growth = forecasts.processes.get(process.identity, NOT_GROWING)
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
        },
        "gpus": [gpu_to_dict(g) for g in snapshot.gpus],
    }


def dumps(document: dict[str, Any], *, indent: int | None = None) -> str:
    """A document as JSON text: UTF-8 kept, terminal controls escaped; one line without ``indent``."""
    separators = (",", ":") if indent is None else None
    return safe_json(json.dumps(document, indent=indent, ensure_ascii=False, separators=separators))


# --- back from JSON ---------------------------------------------------------


def _process(data: dict[str, Any], gpu_index: int) -> ProcessSample:
    return ProcessSample(
        pid=int(data["pid"]),
        gpu_index=gpu_index,
        type=str(data["type"]),
        gpu_memory=data["gpu_memory"],
        sm_utilization=data["sm_utilization"],
        mig_index=data.get("mig_device"),
        sm_last_active=data.get("sm_last_active"),
        started=data["started"],
        user=data["user"],
        name=data["name"],
        command=data["command"],
        cpu_percent=data["cpu_percent"],
        host_memory=data["host_memory"],
        container=data["container"],
        container_name=data.get("container_name"),
        visible=bool(data["visible"]),
        stale=bool(data.get("stale", False)),
        # Recordings made before the process tree have no parent.
        parent_pid=data.get("parent_pid"),
        parent_command=data.get("parent_command"),
        # Recordings made before the reason was read have none.
        not_visible_reason=_reason(data.get("not_visible_reason")),
        container_runtime=data.get("container_runtime"),
        container_id=data.get("container_id"),
        pod_uid=data.get("pod_uid"),
        job=_job(data.get("job")),
    )


def _reason(value: object) -> str | None:
    """A recording's reason, if it is one gputop gives (another file's word is not believed)."""
    return value if isinstance(value, str) and value in REASONS else None


def _mig(data: dict[str, Any], gpu_index: int) -> MigSample:
    memory = data["memory"]
    return MigSample(
        index=int(data["index"]),
        uuid=data["uuid"],
        name=data["name"],
        gpu_instance_id=data["gpu_instance_id"],
        compute_instance_id=data["compute_instance_id"],
        memory_total=memory["total"],
        memory_used=memory["used"],
        memory_free=memory["free"],
        processes=tuple(_process(p, gpu_index) for p in data["processes"]),
        activity=_activity(data.get("activity")),
        allocation=_allocation(data.get("allocation")),
        processes_known=bool(data.get("processes_known", True)),
    )


def _activity(data: dict[str, Any] | None) -> Activity | None:
    if data is None:
        return None
    return Activity(**{name: data.get(name) for name in ACTIVITY_FIELDS})


def _nvlink(data: dict[str, Any] | None) -> NvLink | None:
    if data is None:
        return None
    errors = data.get("errors") or {}
    return NvLink(
        version=data.get("version"),
        links_active=data.get("links_active"),
        links_total=data.get("links_total"),
        rx=data.get("rx"),
        tx=data.get("tx"),
        errors_crc=errors.get("crc"),
        errors_replay=errors.get("replay"),
        errors_recovery=errors.get("recovery"),
        links_down=tuple(int(link) for link in data.get("links_down") or ()),
        errors_by_link=tuple((int(link), int(count)) for link, count in data.get("errors_by_link") or ()),
    )


def _energy(data: dict[str, Any] | None) -> Energy | None:
    if data is None:
        return None
    return Energy(since_driver_load_j=data.get("since_driver_load_j"), since_start_j=data.get("since_start_j"))


def _gpu(data: dict[str, Any]) -> GpuSample:
    index = int(data["index"])
    memory, utilization = data["memory"], data["utilization"]
    temperature, power, clocks, pcie = data["temperature"], data["power"], data["clocks"], data["pcie"]
    reasons = data.get("clock_event_reasons")
    return GpuSample(
        index=index,
        name=data["name"],
        uuid=data["uuid"],
        pci_bus_id=data["pci_bus_id"],
        lost=bool(data["lost"]),
        answering=bool(data.get("answering", True)),
        not_answering_since=data.get("not_answering_since"),
        last_error=data.get("last_error"),
        read_failed=bool(data.get("read_failed", False)),
        memory_total=memory["total"],
        memory_used=memory["used"],
        memory_free=memory["free"],
        memory_reserved=memory["reserved"],
        utilization_gpu=utilization["gpu"],
        utilization_memory=utilization["memory"],
        utilization_encoder=utilization["encoder"],
        utilization_decoder=utilization["decoder"],
        temperature=temperature["current"],
        temperature_slowdown=temperature["slowdown"],
        temperature_shutdown=temperature["shutdown"],
        memory_temperature=temperature.get("memory"),  # not in documents written before it was read
        fan_speed=data["fan"],
        power_draw=power["draw"],
        power_limit=power["limit"],
        clock_sm=clocks["sm"],
        clock_memory=clocks["memory"],
        clock_sm_max=clocks.get("sm_max"),
        clock_memory_max=clocks.get("memory_max"),
        clock_event_reasons=None if reasons is None else tuple(str(name) for name in reasons),
        pstate=data["pstate"],
        pcie_rx=pcie["rx"],
        pcie_tx=pcie["tx"],
        # Schema 1 documents have no link, activity, NVLink or energy: None.
        pcie_link_gen=pcie.get("link_gen"),
        pcie_link_gen_max=pcie.get("link_gen_max"),
        pcie_link_width=pcie.get("link_width"),
        pcie_link_width_max=pcie.get("link_width_max"),
        pcie_replay_errors=pcie.get("replay_errors"),
        activity=_activity(data.get("activity")),
        nvlink=_nvlink(data.get("nvlink")),
        energy=_energy(data.get("energy")),
        mig_mode=data["mig_mode"],
        health=health_from_dict(data.get("health")),
        mig_devices=tuple(_mig(m, index) for m in data["mig_devices"]),
        # MIG processes are listed under their MIG device; the GPU keeps the others.
        processes=tuple(_process(p, index) for p in data["processes"] if p.get("mig_device") is None),
        allocation=_allocation(data.get("allocation")),
        processes_known=bool(data.get("processes_known", True)),
    )


def snapshot_from_dict(data: dict[str, Any]) -> Snapshot:
    """The inverse of ``snapshot_to_dict``."""
    host = data["host"]
    load = host["load_average"]
    return Snapshot(
        timestamp=float(data["timestamp"]),
        hostname=str(data["hostname"]),
        host=HostSample(
            cpu_percent=host["cpu_percent"],
            memory_total=host["memory_total"],
            memory_used=host["memory_used"],
            swap_total=host["swap_total"],
            swap_used=host["swap_used"],
            load_average=(float(load[0]), float(load[1]), float(load[2])) if load is not None else None,
            net_rx_rate=host["net_rx_rate"],
            net_tx_rate=host["net_tx_rate"],
        ),
        gpus=tuple(_gpu(g) for g in data["gpus"]),
        driver_version=data["driver_version"],
        cuda_driver_version=data.get("cuda_driver_version"),
        source=str(data.get("source", "nvml")),
    )
