"""Recordings: one snapshot per line in the ``--json`` schema (JSON lines, gzip for ``.gz``)."""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from gputop.core.alerts import AlertEvent
from gputop.core.diagnosis import Diagnoses
from gputop.core.diagnosis.codec import health_from_dict
from gputop.core.forecast import Forecasts
from gputop.core.format import safe_json
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessSample, Snapshot
from gputop.core.report import snapshot_to_dict


class RecordingError(Exception):
    """A recording cannot be opened or written; the message is one clear line."""


def _open_text(path: str, mode: str) -> IO[str]:
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.GzipFile(path, mode + "b"), encoding="utf-8")
    return open(path, mode, encoding="utf-8")


class Recorder:
    """Appends snapshots to a recording, one line each, flushed so a crash loses at most one line."""

    def __init__(self, path: str) -> None:
        self.path = path
        try:
            self._file = _open_text(path, "w")
        except OSError as error:
            raise RecordingError(f"cannot write {path}: {error.strerror or error}") from None
        self.count = 0

    def write(
        self,
        snapshot: Snapshot,
        extra: dict[str, Any] | None = None,
        *,
        forecasts: Forecasts | None = None,
        alerts: Iterable[AlertEvent] | None = None,
        diagnoses: Diagnoses | None = None,
    ) -> None:
        """One line: the snapshot, its forecasts, diagnoses and the alert events of its tick (see the README)."""
        document = snapshot_to_dict(snapshot, forecasts, alerts, diagnoses)
        if extra:
            document.update(extra)
        try:
            self._file.write(safe_json(json.dumps(document, ensure_ascii=False, separators=(",", ":"))) + "\n")
            self._file.flush()
            raw = getattr(self._file, "buffer", None)
            if isinstance(raw, gzip.GzipFile):
                raw.flush(zlib.Z_SYNC_FLUSH)
        except OSError as error:
            raise RecordingError(f"cannot write {self.path}: {error.strerror or error}") from None
        self.count += 1

    def close(self) -> None:
        try:
            self._file.close()
        except OSError as error:
            raise RecordingError(f"cannot finish {self.path}: {error.strerror or error}") from None


@dataclass(slots=True)
class Recording:
    """The snapshots read from a file, and where reading stopped if the file is damaged."""

    snapshots: list[Snapshot] = field(default_factory=list)
    extras: list[dict[str, Any]] = field(default_factory=list)
    damage: str | None = None


def read_recording(path: str) -> Recording:
    """Read every good line; a truncated or corrupt file stops at the damage, which is described."""
    recording = Recording()
    try:
        handle = _open_text(path, "r")
    except OSError as error:
        raise RecordingError(f"cannot read {path}: {error.strerror or error}") from None
    line_number = 0
    try:
        with handle:
            for line_number, line in enumerate(_lines(handle), start=1):
                if not line.strip():
                    continue
                try:
                    document = json.loads(line)
                    snapshot = snapshot_from_dict(document)
                except (ValueError, KeyError, TypeError) as error:
                    recording.damage = (
                        f"{path}: line {line_number} is damaged ({_short(error)}); "
                        f"replaying the {len(recording.snapshots)} snapshots before it"
                    )
                    break
                recording.snapshots.append(snapshot)
                recording.extras.append(_extra(document))
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as error:
        recording.damage = (
            f"{path}: the file ends or breaks after line {line_number} ({_short(error)}); "
            f"replaying the {len(recording.snapshots)} snapshots before it"
        )
    if not recording.snapshots and recording.damage is None:
        raise RecordingError(f"{path} holds no snapshots")
    return recording


def _extra(document: dict[str, Any]) -> dict[str, Any]:
    """What a line holds besides the snapshot: its alert events, and forecasts by GPU index."""
    extra: dict[str, Any] = {}
    if "alerts" in document:
        extra["alerts"] = document["alerts"]
    forecasts = {gpu["index"]: gpu["forecast"] for gpu in document["gpus"] if "forecast" in gpu}
    if forecasts:
        extra["forecast"] = forecasts
    return extra


def _lines(handle: IO[str]) -> Iterator[str]:
    for line in handle:
        if not line.endswith("\n"):
            # The writer ends every line: one without an end was cut off mid-write.
            raise EOFError("the last line was cut off")
        yield line


def _short(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    return text.splitlines()[0][:120]


# --- back from JSON -------------------------------------------------------------


def _process(data: dict[str, Any], gpu_index: int) -> ProcessSample:
    return ProcessSample(
        pid=int(data["pid"]),
        gpu_index=gpu_index,
        type=str(data["type"]),
        gpu_memory=data["gpu_memory"],
        sm_utilization=data["sm_utilization"],
        mig_index=data.get("mig_device"),
        started=data["started"],
        user=data["user"],
        name=data["name"],
        command=data["command"],
        cpu_percent=data["cpu_percent"],
        host_memory=data["host_memory"],
        container=data["container"],
        container_name=data.get("container_name"),
        visible=bool(data["visible"]),
    )


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
    )


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
        mig_mode=data["mig_mode"],
        health=health_from_dict(data.get("health")),
        mig_devices=tuple(_mig(m, index) for m in data["mig_devices"]),
        # MIG processes are listed under their MIG device; the GPU keeps the others.
        processes=tuple(_process(p, index) for p in data["processes"] if p.get("mig_device") is None),
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
