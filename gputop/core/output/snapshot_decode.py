"""The one JSON codec of a snapshot, its reading half: recordings and replays come back through this.

``snapshot_from_dict`` is the inverse of ``snapshot_json.snapshot_to_dict``. Fields that documents
written by older gputops lack come back as None (or their old meaning), never as a guess.
"""

from __future__ import annotations

from typing import Any

from gputop.core.analysis.diagnosis.codec import health_from_dict
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
from gputop.core.output.snapshot_json import ACTIVITY_FIELDS


def process_from_dict(data: dict[str, Any], gpu_index: int) -> ProcessSample:
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
        processes=tuple(process_from_dict(p, gpu_index) for p in data["processes"]),
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
        processes=tuple(process_from_dict(p, index) for p in data["processes"] if p.get("mig_device") is None),
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
            net_interfaces=_names(host.get("net_interfaces")),  # absent from recordings made before it
        ),
        gpus=tuple(_gpu(g) for g in data["gpus"]),
        driver_version=data["driver_version"],
        cuda_driver_version=data.get("cuda_driver_version"),
        source=str(data.get("source", "nvml")),
    )


def _names(data: Any) -> tuple[str, ...] | None:
    return None if not isinstance(data, list) else tuple(str(name) for name in data)


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


def _allocation(data: Any) -> Allocation | None:
    """A device's pod back from JSON; None for none (and in recordings made before allocations)."""
    if not isinstance(data, dict):
        return None
    return Allocation(
        namespace=str(data["namespace"]), pod=str(data["pod"]), container=str(data["container"]),
        resource=str(data["resource"]),
    )
