"""One-shot output: the JSON document and the readable table of ``--once``."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from gputop.core.alerts import AlertEvent
from gputop.core.diagnosis import Diagnoses
from gputop.core.diagnosis.codec import add_diagnoses, health_to_dict
from gputop.core.diagnosis.problems import problems
from gputop.core.forecast import NO_FORECAST, NOT_GROWING, Forecast, Forecasts
from gputop.core.format import (
    NA,
    fmt_bytes,
    fmt_duration,
    fmt_percent,
    fmt_temperature,
    fmt_watts,
    safe_text,
)
from gputop.core.model import GpuSample, MigSample, ProcessSample, Snapshot, percent

JSON_SCHEMA_VERSION = 1


def process_to_dict(process: ProcessSample) -> dict[str, Any]:
    return {
        "pid": process.pid,
        "type": process.type,
        "gpu_memory": process.gpu_memory,
        "sm_utilization": process.sm_utilization,
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
    }


def gpu_to_dict(gpu: GpuSample) -> dict[str, Any]:
    return {
        "index": gpu.index,
        "name": gpu.name,
        "uuid": gpu.uuid,
        "pci_bus_id": gpu.pci_bus_id,
        "lost": gpu.lost,
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
        "pcie": {"rx": gpu.pcie_rx, "tx": gpu.pcie_tx},
        "mig_mode": gpu.mig_mode,
        "mig_devices": [mig_to_dict(m) for m in gpu.mig_devices],
        "processes": [process_to_dict(p) for p in gpu.all_processes()],
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


# --- the readable table -------------------------------------------------------

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"
_GREEN = "\x1b[32m"
_CYAN = "\x1b[36m"


def _level_colour(level: float | None) -> str:
    """Colour for a percentage of a limit."""
    if level is None:
        return _DIM
    if level >= 90:
        return _RED
    if level >= 70:
        return _YELLOW
    return _GREEN


def _bar(level: float | None, width: int) -> str:
    if level is None:
        return NA.center(width)
    filled = round(max(0.0, min(100.0, level)) / 100 * width)
    return "█" * filled + "░" * (width - filled)


def render_text(snapshot: Snapshot, colour: bool, width: int = 80, diagnoses: Diagnoses | None = None) -> str:
    """The ``--once`` table: GPUs, then processes, then the problems found, in ``width`` columns."""

    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if colour else text

    lines: list[str] = []
    header = f"{snapshot.hostname}  {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(snapshot.timestamp))}"
    versions = f"driver {snapshot.driver_version or NA}  CUDA {snapshot.cuda_driver_version or NA}"
    lines.append(paint(_BOLD, header.ljust(width - len(versions)) + versions)[: width + 16])
    for gpu in snapshot.gpus:
        lines.extend(_gpu_lines(gpu, width, paint))
    lines.append("")
    lines.extend(_process_lines(snapshot, width, paint))
    if diagnoses is not None:
        lines.extend(_problem_lines(snapshot, diagnoses, width, paint))
    return "\n".join(lines) + "\n"


def _problem_lines(snapshot: Snapshot, diagnoses: Diagnoses, width: int, paint: Any) -> list[str]:
    found = problems(snapshot, diagnoses)
    if not found:
        return []
    lines = ["", paint(_BOLD, "Problems")]
    for problem in found:
        colour = _YELLOW if problem.kind in ("idle", "unattributed") else _RED
        text = safe_text(problem.text)[: max(0, width - len(problem.device) - 4)]
        lines.append(f"  {paint(colour, problem.device)}  {text}")
    return lines


def _gpu_lines(gpu: GpuSample, width: int, paint: Any) -> list[str]:
    name = safe_text(gpu.name or NA)
    if gpu.lost:
        return [paint(_RED, f"[{gpu.index}] {name}  GPU LOST: not answering"[:width])]
    memory = gpu.memory_percent
    # Temperature against the card's own slowdown threshold (100 = at slowdown).
    temperature = percent(gpu.temperature, gpu.temperature_slowdown or 90.0)
    power = percent(gpu.power_draw, gpu.power_limit)
    title = f"[{gpu.index}] {name}"[:36]
    power_text = fmt_watts(gpu.power_draw).rjust(5)
    limit_text = f"/{fmt_watts(gpu.power_limit)}" if gpu.power_limit is not None else ""
    stats = (
        f"{paint(_level_colour(temperature), fmt_temperature(gpu.temperature).rjust(5))} "
        f"{paint(_level_colour(power), power_text)}{limit_text:<6} "
        f"util {fmt_percent(gpu.utilization_gpu).rjust(4)}"
    )
    line1 = f"{title:<37}{stats}"
    memory_text = f"{fmt_bytes(gpu.memory_used)} / {fmt_bytes(gpu.memory_total)}".rjust(19)
    bar_width = max(10, width - 4 - 1 - len(memory_text) - 1 - 4)
    line2 = (
        f"    {paint(_level_colour(memory), _bar(memory, bar_width))} "
        f"{memory_text} {fmt_percent(memory).rjust(4)}".rstrip()
    )
    lines = [line1, line2]
    for mig in gpu.mig_devices:
        profile = safe_text(mig.name).rsplit(" MIG ", 1)[-1] if mig.name else ""
        lines.append(
            f"    └ MIG {mig.index} {profile[:12]:<12} "
            f"{fmt_bytes(mig.memory_used)} / {fmt_bytes(mig.memory_total)} "
            f"{fmt_percent(percent(mig.memory_used, mig.memory_total))}"
        )
    return lines


_PROCESS_HEADER = f"{'GPU':>4} {'PID':>7} {'USER':<9} {'T':<3} {'GPU-MEM':>8} {'SM':>4} {'CPU':>5} {'TIME':>6}  COMMAND"


def _process_lines(snapshot: Snapshot, width: int, paint: Any) -> list[str]:
    processes = sorted(snapshot.processes(), key=lambda p: (p.gpu_index, -(p.gpu_memory or 0), p.pid))
    if not processes:
        return [paint(_DIM, "No GPU processes.")]
    lines = [paint(_BOLD, _PROCESS_HEADER[:width])]
    for process in processes:
        gpu = f"{process.gpu_index}" + (f".{process.mig_index}" if process.mig_index is not None else "")
        age = None if process.started is None else snapshot.timestamp - process.started
        cpu = NA if process.cpu_percent is None else f"{process.cpu_percent:.0f}%"
        command = safe_text(process.command) if process.visible else "(not visible from here)"
        row = (
            f"{gpu:>4} {process.pid:>7} {safe_text(process.user or NA)[:9]:<9} {process.type:<3} "
            f"{fmt_bytes(process.gpu_memory):>8} {fmt_percent(process.sm_utilization):>4} {cpu:>5} "
            f"{fmt_duration(age):>6}  "
        )
        lines.append(row + command[: max(0, width - len(row))])
    return lines
