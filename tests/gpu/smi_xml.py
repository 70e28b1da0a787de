"""`nvidia-smi -q -x` read back, and gputop's `--json` compared with it (the real-GPU tier's yardstick).

Element names as nvidia-smi writes them (DTD nvsmi_device_v11/v12): per `<gpu>`, `product_name`,
`uuid`, `fb_memory_usage/{total,used}` ("40960 MiB"), `temperature/gpu_temp` ("36 C"), the power draw
under `power_readings` (drivers before 535) or `gpu_power_readings` (535 and later; 550 and later
split it into `instant_power_draw` and `average_power_draw`), with `power_limit` or
`current_power_limit`, and `processes/process_info/{pid,used_memory}`. Values may carry spaces
(" 37 C ") and any of them may be "N/A".
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Any

MiB = 1024 * 1024
_UNITS = {"MiB": MiB, "GiB": 1024 * MiB, "KiB": 1024, "B": 1, "C": 1, "W": 1}


@dataclass(frozen=True)
class SmiGpu:
    """One GPU as nvidia-smi reports it, in gputop's units (bytes, °C, W); None where "N/A"."""

    name: str | None
    uuid: str | None
    memory_total: int | None
    memory_used: int | None
    temperature: float | None
    power_draw: float | None
    power_limit: float | None
    processes: dict[int, int | None] = field(default_factory=dict)  # pid -> used GPU memory


def quantity(text: str | None) -> float | None:
    """"40960 MiB" -> bytes, "36 C" -> 36.0, "66.92 W" -> 66.92; None for "N/A" or nothing."""
    if text is None:
        return None
    parts = text.split()
    if not parts or parts[0] in ("N/A", "[N/A]") or parts[0].startswith("["):
        return None
    try:
        number = float(parts[0])
    except ValueError:
        return None
    unit = parts[1] if len(parts) > 1 else ""
    return number * _UNITS.get(unit, 1)


def _text(element: ET.Element, path: str) -> str | None:
    found = element.find(path)
    return None if found is None or found.text is None else found.text.strip()


def _first(element: ET.Element, paths: tuple[str, ...]) -> float | None:
    for path in paths:
        value = quantity(_text(element, path))
        if value is not None:
            return value
    return None


def _bytes(value: float | None) -> int | None:
    return None if value is None else int(value)


def parse_smi_xml(text: str) -> list[SmiGpu]:
    """Every `<gpu>` of a `nvidia-smi -q -x` document, in its order (nvidia-smi's index order)."""
    root = ET.fromstring(text)
    gpus = []
    for gpu in root.findall("gpu"):
        processes: dict[int, int | None] = {}
        for process in gpu.findall("processes/process_info"):
            pid = quantity(_text(process, "pid"))
            if pid is not None:
                processes[int(pid)] = _bytes(quantity(_text(process, "used_memory")))
        gpus.append(SmiGpu(
            name=_text(gpu, "product_name"),
            uuid=_text(gpu, "uuid"),
            memory_total=_bytes(quantity(_text(gpu, "fb_memory_usage/total"))),
            memory_used=_bytes(quantity(_text(gpu, "fb_memory_usage/used"))),
            temperature=quantity(_text(gpu, "temperature/gpu_temp")),
            power_draw=_first(gpu, (
                "gpu_power_readings/instant_power_draw", "gpu_power_readings/power_draw",
                "gpu_power_readings/average_power_draw", "power_readings/power_draw",
            )),
            power_limit=_first(gpu, (
                "gpu_power_readings/current_power_limit", "gpu_power_readings/power_limit",
                "power_readings/power_limit", "power_readings/enforced_power_limit",
            )),
            processes=processes,
        ))
    return gpus


# How far apart gputop's reading and nvidia-smi's may be: they are taken a second or so apart.
MEMORY_SHARE = 0.01  # of the GPU's total memory
TEMPERATURE_C = 10.0
POWER_W = 100.0


def compare(report: dict[str, Any], smi: list[SmiGpu], pid: int | None, allocation: int) -> list[str]:
    """What in gputop's `--json` disagrees with nvidia-smi's view; [] when all agrees.

    The process ``pid`` must be listed once, holding at least ``allocation`` bytes, with the memory
    nvidia-smi gives it (MiB-rounded); None leaves the processes out (NVML's PIDs are the host's).
    """
    problems = []
    gpus = report["gpus"]
    ours = [(gpu["name"], gpu["uuid"]) for gpu in gpus]
    theirs = [(gpu.name, gpu.uuid) for gpu in smi]
    if ours != theirs:
        problems.append(f"names and UUIDs: gputop {ours}, nvidia-smi {theirs}")
    for gpu, reference in zip(gpus, smi, strict=False):
        where = f"GPU {gpu['index']}"
        total, used = gpu["memory"]["total"], gpu["memory"]["used"]
        if reference.memory_total is None or total is None:
            problems.append(f"{where}: total memory gputop {total}, nvidia-smi {reference.memory_total}")
            continue
        slack = MEMORY_SHARE * reference.memory_total
        if abs(total - reference.memory_total) > slack:
            problems.append(f"{where}: total memory gputop {total}, nvidia-smi {reference.memory_total}")
        if used is None or reference.memory_used is None or abs(used - reference.memory_used) > slack:
            problems.append(f"{where}: used memory gputop {used}, nvidia-smi {reference.memory_used}")
        temperature = gpu["temperature"]["current"]
        if (temperature is None or reference.temperature is None or not 0 < temperature < 110
                or abs(temperature - reference.temperature) > TEMPERATURE_C):
            problems.append(f"{where}: temperature gputop {temperature}, nvidia-smi {reference.temperature}")
        power, limit = gpu["power"]["draw"], gpu["power"]["limit"] or reference.power_limit
        if (power is None or reference.power_draw is None or not 0 < power <= (limit or power) * 1.2
                or abs(power - reference.power_draw) > POWER_W):
            problems.append(f"{where}: power gputop {power} W (limit {limit}), nvidia-smi {reference.power_draw} W")
    if pid is None:
        return problems
    listed = [(gpu, p) for gpu in gpus for p in gpu["processes"] if p["pid"] == pid and p["mig_device"] is None]
    if len(listed) != 1:
        problems.append(f"PID {pid} listed {len(listed)} times, not once")
        return problems
    gpu, process = listed[0]
    memory = process["gpu_memory"]
    smi_memory = smi[gpu["index"]].processes.get(pid) if gpu["index"] < len(smi) else None
    if memory is None or memory < allocation:
        problems.append(f"PID {pid}: GPU memory {memory}, less than the {allocation} bytes it allocated")
    if smi_memory is None or memory is None or abs(memory - smi_memory) > max(MiB, MEMORY_SHARE * smi_memory):
        problems.append(f"PID {pid}: GPU memory gputop {memory}, nvidia-smi {smi_memory}")
    if not process["visible"] or process["not_visible_reason"] is not None:
        problems.append(f"PID {pid}: not visible ({process['not_visible_reason']})")
    return problems
