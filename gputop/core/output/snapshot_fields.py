"""One field table per record of a snapshot: where each field sits in the JSON document, and how it is
written and read back. ``snapshot_json`` (``--json``, recordings) writes through these tables and
``snapshot_decode`` (replays) reads through them, so a new figure is one row here, and a field missing
from a table fails ``tests/test_snapshot_fields.py``.

A row names the record's attribute, its path in the document (``("memory", "total")``), and, for a
field that documents written by older gputops lack, the value such a document means (``missing``:
None, never a guess). Values that are not plain JSON have a ``write`` and a ``read``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from gputop.core.analysis.diagnosis.codec import health_from_dict, health_to_dict
from gputop.core.host.visibility import REASONS
from gputop.core.model import (
    NO_HEALTH,
    Activity,
    Allocation,
    Energy,
    GpuSample,
    HostSample,
    Job,
    MigSample,
    NvLink,
    ProcessSample,
)

Record = TypeVar("Record")

REQUIRED: Any = object()  # a field every document since schema 1 has: missing, the document is broken


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True, slots=True)
class Field(Generic[Record]):
    """One field of a record: its attribute, its place in the document, and how it is written and read."""

    attribute: str
    path: tuple[str, ...]
    missing: Any = REQUIRED  # what a document without it means (written before the field existed)
    write: Callable[[Any], Any] = _same  # the attribute's value -> JSON
    read: Callable[[Any], Any] = _same  # JSON -> the attribute's value (not called on a missing field)
    # Where the value is not the attribute's own (a GPU lists its MIG devices' processes too).
    value_of: Callable[[Record], Any] | None = None


def field(attribute: str, *path: str, **options: Any) -> Field[Any]:
    """A row: the attribute, then its path (the attribute's own name where none is given)."""
    return Field(attribute, path or (attribute,), **options)


def encode(record: Record, table: Sequence[Field[Record]]) -> dict[str, Any]:
    """The record as a document, its fields in the table's order."""
    document: dict[str, Any] = {}
    for row in table:
        value = row.value_of(record) if row.value_of is not None else getattr(record, row.attribute)
        place = document
        for key in row.path[:-1]:
            place = place.setdefault(key, {})
        place[row.path[-1]] = row.write(value)
    return document


def decode(document: dict[str, Any], table: Sequence[Field[Any]]) -> dict[str, Any]:
    """The record's attributes read from a document (``KeyError`` where a required field is missing)."""
    values: dict[str, Any] = {}
    for row in table:
        place: Any = document
        for key in row.path:
            if not isinstance(place, dict) or key not in place:
                if row.missing is REQUIRED:
                    raise KeyError("/".join(row.path))
                values[row.attribute] = row.missing
                break
            place = place[key]
        else:
            values[row.attribute] = row.read(place)
    return values


def _optional(read: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else read(value)


def _tuple_of(item: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: tuple(item(entry) for entry in value or ())


def _list_of(item: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: [item(entry) for entry in value]


def _reason(value: object) -> str | None:
    """A recording's reason, if it is one gputop gives (another file's word is not believed)."""
    return value if isinstance(value, str) and value in REASONS else None


JOB_FIELDS: tuple[Field[Job], ...] = (
    field("scheduler", read=str),
    field("id", read=str),
    *(field(name, missing=None) for name in ("step", "name", "user", "partition", "account")),
)

ALLOCATION_FIELDS: tuple[Field[Allocation], ...] = tuple(
    field(name, read=str) for name in ("namespace", "pod", "container", "resource")
)


def _record(table: Sequence[Field[Any]], kind: type) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """Write and read for a nested record that may be absent (null, and in older documents)."""
    return (
        lambda record: None if record is None else encode(record, table),
        lambda document: kind(**decode(document, table)) if isinstance(document, dict) else None,
    )


_JOB = _record(JOB_FIELDS, Job)
_ALLOCATION = _record(ALLOCATION_FIELDS, Allocation)

PROCESS_FIELDS: tuple[Field[ProcessSample], ...] = (
    field("pid", read=int),
    field("type", read=str),
    field("gpu_memory"),
    field("sm_utilization"),
    field("sm_last_active", missing=None),
    field("mig_index", "mig_device", missing=None),
    field("user"),
    field("name"),
    field("command"),
    field("cpu_percent"),
    field("host_memory"),
    field("started"),
    field("container"),
    field("container_name", missing=None),
    field("visible", read=bool),
    # Recordings made before the process tree have no parent; before the reason was read, none.
    field("parent_pid", missing=None),
    field("parent_command", missing=None),
    field("stale", missing=False, read=bool),
    field("not_visible_reason", missing=None, read=_reason),
    field("container_runtime", missing=None),
    field("container_id", missing=None),
    field("pod_uid", missing=None),
    field("job", missing=None, write=_JOB[0], read=_JOB[1]),
)
# Not in the document: the process's GPU is the document it is listed in.
PROCESS_CONTEXT = frozenset({"gpu_index"})

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
ACTIVITY_TABLE: tuple[Field[Activity], ...] = tuple(field(name, missing=None) for name in ACTIVITY_FIELDS)
ENERGY_FIELDS: tuple[Field[Energy], ...] = (
    field("since_driver_load_j", missing=None),
    field("since_start_j", missing=None),
)
NVLINK_FIELDS: tuple[Field[NvLink], ...] = (
    *(field(name, missing=None) for name in ("version", "links_active", "links_total", "rx", "tx")),
    field("errors_crc", "errors", "crc", missing=None),
    field("errors_replay", "errors", "replay", missing=None),
    field("errors_recovery", "errors", "recovery", missing=None),
    # Beyond the fields, so that a replay names the link as the live run did.
    field("links_down", missing=(), write=list, read=_tuple_of(int)),
    field(
        "errors_by_link", missing=(), write=_list_of(list),
        read=_tuple_of(lambda pair: (int(pair[0]), int(pair[1]))),
    ),
)
_ACTIVITY = _record(ACTIVITY_TABLE, Activity)
_ENERGY = _record(ENERGY_FIELDS, Energy)
_NVLINK = _record(NVLINK_FIELDS, NvLink)


def processes_of(documents: list[dict[str, Any]], gpu_index: int) -> tuple[ProcessSample, ...]:
    return tuple(ProcessSample(gpu_index=gpu_index, **decode(document, PROCESS_FIELDS)) for document in documents)


MIG_FIELDS: tuple[Field[MigSample], ...] = (
    field("index", read=int),
    field("name"),
    field("uuid"),
    field("gpu_instance_id"),
    field("compute_instance_id"),
    field("memory_total", "memory", "total"),
    field("memory_used", "memory", "used"),
    field("memory_free", "memory", "free"),
    # Read by the GPU's decoder, which knows the GPU's index (processes_of).
    field("processes", write=_list_of(lambda process: encode(process, PROCESS_FIELDS))),
    field("activity", missing=None, write=_ACTIVITY[0], read=_ACTIVITY[1]),
    field("allocation", missing=None, write=_ALLOCATION[0], read=_ALLOCATION[1]),
    field("processes_known", missing=True, read=bool),
)


def _mig_of(gpu_index: int) -> Callable[[dict[str, Any]], MigSample]:
    def read(document: dict[str, Any]) -> MigSample:
        values = decode(document, MIG_FIELDS)
        values["processes"] = processes_of(values["processes"], gpu_index)
        return MigSample(**values)

    return read


def _reasons(value: Any) -> tuple[str, ...]:
    return tuple(str(name) for name in value)


GPU_FIELDS: tuple[Field[GpuSample], ...] = (
    field("index", read=int),
    field("name"),
    field("uuid"),
    field("pci_bus_id"),
    field("lost", read=bool),
    field("answering", missing=True, read=bool),
    field("not_answering_since", missing=None),
    field("last_error", missing=None),
    field("read_failed", missing=False, read=bool),
    field("memory_total", "memory", "total"),
    field("memory_used", "memory", "used"),
    field("memory_free", "memory", "free"),
    field("memory_reserved", "memory", "reserved"),
    field("utilization_gpu", "utilization", "gpu"),
    field("utilization_memory", "utilization", "memory"),
    field("utilization_encoder", "utilization", "encoder"),
    field("utilization_decoder", "utilization", "decoder"),
    field("temperature", "temperature", "current"),
    field("temperature_slowdown", "temperature", "slowdown"),
    field("temperature_shutdown", "temperature", "shutdown"),
    field("memory_temperature", "temperature", "memory", missing=None),  # not read before schema 2
    field("fan_speed", "fan"),
    field("power_draw", "power", "draw"),
    field("power_limit", "power", "limit"),
    field("clock_sm", "clocks", "sm"),
    field("clock_memory", "clocks", "memory"),
    field("clock_sm_max", "clocks", "sm_max", missing=None),
    field("clock_memory_max", "clocks", "memory_max", missing=None),
    field("clock_event_reasons", missing=None, write=_optional(list), read=_optional(_reasons)),
    field("health", missing=NO_HEALTH, write=health_to_dict, read=health_from_dict),
    field("pstate"),
    field("pcie_rx", "pcie", "rx"),
    field("pcie_tx", "pcie", "tx"),
    # Schema 1 documents have no link, activity, NVLink or energy: None.
    field("pcie_link_gen", "pcie", "link_gen", missing=None),
    field("pcie_link_gen_max", "pcie", "link_gen_max", missing=None),
    field("pcie_link_width", "pcie", "link_width", missing=None),
    field("pcie_link_width_max", "pcie", "link_width_max", missing=None),
    field("pcie_replay_errors", "pcie", "replay_errors", missing=None),
    field("activity", missing=None, write=_ACTIVITY[0], read=_ACTIVITY[1]),
    field("nvlink", missing=None, write=_NVLINK[0], read=_NVLINK[1]),
    field("energy", missing=None, write=_ENERGY[0], read=_ENERGY[1]),
    field("mig_mode"),
    # Read by gpu_from_dict, which knows the GPU's index.
    field("mig_devices", write=_list_of(lambda mig: encode(mig, MIG_FIELDS))),
    # Every process of the GPU, its MIG devices' too (each naming its device); read back, the MIG
    # processes go under their device and the GPU keeps the others.
    field(
        "processes", write=_list_of(lambda process: encode(process, PROCESS_FIELDS)),
        value_of=lambda gpu: gpu.all_processes(),
    ),
    field("allocation", missing=None, write=_ALLOCATION[0], read=_ALLOCATION[1]),
    field("processes_known", missing=True, read=bool),
)


def gpu_from_dict(document: dict[str, Any]) -> GpuSample:
    values = decode(document, GPU_FIELDS)
    index = values["index"]
    values["mig_devices"] = tuple(_mig_of(index)(mig) for mig in values["mig_devices"])
    values["processes"] = processes_of([p for p in values["processes"] if p.get("mig_device") is None], index)
    return GpuSample(**values)


def _load(value: Any) -> tuple[float, float, float] | None:
    return None if value is None else (float(value[0]), float(value[1]), float(value[2]))


HOST_FIELDS: tuple[Field[HostSample], ...] = (
    field("cpu_percent"),
    field("memory_total"),
    field("memory_used"),
    field("swap_total"),
    field("swap_used"),
    field("load_average", write=_optional(list), read=_load),
    field("net_rx_rate"),
    field("net_tx_rate"),
    field("net_interfaces", missing=None, write=_optional(list), read=_optional(_tuple_of(str))),
)

# Every record's table, for tests/test_snapshot_fields.py: each attribute of the record is in its table,
# or in the context the document it sits in gives it.
TABLES: dict[type, tuple[tuple[Field[Any], ...], frozenset[str]]] = {
    GpuSample: (GPU_FIELDS, frozenset()),
    MigSample: (MIG_FIELDS, frozenset()),
    ProcessSample: (PROCESS_FIELDS, PROCESS_CONTEXT),
    HostSample: (HOST_FIELDS, frozenset()),
    Activity: (ACTIVITY_TABLE, frozenset()),
    Energy: (ENERGY_FIELDS, frozenset()),
    NvLink: (NVLINK_FIELDS, frozenset()),
    Job: (JOB_FIELDS, frozenset()),
    Allocation: (ALLOCATION_FIELDS, frozenset()),
}
