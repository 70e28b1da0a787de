"""The readable table of ``--once``: GPUs, then processes, in plain text with optional colour."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.activity import below_max, pcie_link_text
from gputop.core.analysis.diagnosis.problems import problems
from gputop.core.analysis.diagnosis.states import lost_reason, mig_state
from gputop.core.analysis.levels import Level, load_level, temperature_level
from gputop.core.format import (
    NA,
    bar_cells,
    fmt_bytes,
    fmt_duration,
    fmt_percent,
    fmt_temperature,
    fmt_watts,
    safe_text,
)
from gputop.core.host.visibility import not_visible_words
from gputop.core.model import GpuSample, ProcessSample, Snapshot, percent
from gputop.core.output.command_text import command_text, fit_command, sibling_spans
from gputop.core.text_cut import cut_end, fit_cells

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_DIM = "\x1b[2m"
_RED = "\x1b[31m"
_YELLOW = "\x1b[33m"
_GREEN = "\x1b[32m"
_CYAN = "\x1b[36m"


# How each level looks in the table (the cut-offs are in core.analysis.levels, shared with the cards).
_LEVEL_COLOURS = {None: _DIM, Level.OK: _GREEN, Level.WARN: _YELLOW, Level.ALARM: _RED}


def _bar(level: float | None, width: int) -> str:
    cells = bar_cells(level, width)
    return NA.center(width) if cells is None else "".join(cells)


def cut(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells; a cut is marked with "…"."""
    return cut_end(text, width)


def render_text(
    snapshot: Snapshot,
    colour: bool,
    width: int = 80,
    alerts: Sequence[AlertEvent] = (),
    diagnoses: Diagnoses | None = None,
    sort_column: str = "gpu_memory",
    sort_descending: bool = True,
    whole_commands: bool = False,
) -> str:
    """The ``--once`` table: GPUs, then processes, the problems found and the alerts active now, in
    ``width`` columns; the processes in the TUI's order (the settings' sort, GPU memory by default).
    ``whole_commands``: command lines are never cut (``ps ww``: the table goes to a pipe or a file)."""

    def paint(code: str, text: str) -> str:
        return f"{code}{text}{_RESET}" if colour else text

    lines: list[str] = []
    header = f"{snapshot.hostname}  {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(snapshot.timestamp))}"
    versions = f"driver {snapshot.driver_version or NA}  CUDA {snapshot.cuda_driver_version or NA}"
    lines.append(paint(_BOLD, cut(header.ljust(width - len(versions)) + versions, width)))
    for gpu in snapshot.gpus:
        lines.extend(_gpu_lines(gpu, width, paint))
    lines.append("")
    lines.extend(_process_lines(snapshot, None if whole_commands else width, paint, sort_column, sort_descending))
    if diagnoses is not None:
        lines.extend(_problem_lines(snapshot, diagnoses, width, paint))
    if alerts:
        lines.append("")
        lines.append(paint(_BOLD, "Alerts"))
        for alert in alerts:
            lines.append(
                paint(_YELLOW if alert.kind in ("memory", "forecast") else _RED, cut(f"  ⚠ {alert.message}", width))
            )
    return "\n".join(lines) + "\n"


def _problem_lines(snapshot: Snapshot, diagnoses: Diagnoses, width: int, paint: Any) -> list[str]:
    found = problems(snapshot, diagnoses)
    if not found:
        return []
    lines = ["", paint(_BOLD, "Problems")]
    for problem in found:
        colour = _YELLOW if problem.kind in ("idle", "unattributed") else _RED
        text = cut(safe_text(problem.text), max(0, width - len(problem.device) - 4))
        lines.append(f"  {paint(colour, problem.device)}  {text}")
    return lines


def _gpu_lines(gpu: GpuSample, width: int, paint: Any) -> list[str]:
    name = safe_text(gpu.name or NA)
    if gpu.lost:
        reason = "not answering" if not gpu.health.xid_events else lost_reason(gpu)
        return [paint(_RED, cut(f"[{gpu.index}] {name}  GPU LOST: {reason}", width))]
    if not gpu.answering:
        # A read that raised is no hung driver: its own words, the error on the next line.
        state = "READ FAILED" if gpu.read_failed else "NOT ANSWERING"
        return [
            paint(_RED, cut(f"[{gpu.index}] {name}  {state}", width)),
            cut(f"    {gpu.last_error or NA}", width),
        ]
    memory = gpu.memory_percent
    temperature_colour = _LEVEL_COLOURS[temperature_level(gpu.temperature, gpu.temperature_slowdown)]
    power_colour = _LEVEL_COLOURS[load_level(percent(gpu.power_draw, gpu.power_limit))]
    title = cut(f"[{gpu.index}] {name}", 36)
    power_text = fmt_watts(gpu.power_draw).rjust(5)
    limit_text = f"/{fmt_watts(gpu.power_limit)}" if gpu.power_limit is not None else ""
    stats = (
        f"{paint(temperature_colour, fmt_temperature(gpu.temperature).rjust(5))} "
        f"{paint(power_colour, power_text)}{limit_text:<6} "
        f"util {fmt_percent(gpu.utilization_gpu).rjust(4)}"
    )
    line1 = f"{title:<37}{stats}"
    memory_text = f"{fmt_bytes(gpu.memory_used)} / {fmt_bytes(gpu.memory_total)}".rjust(19)
    bar_width = max(10, width - 4 - 1 - len(memory_text) - 1 - 4)
    line2 = (
        f"    {paint(_LEVEL_COLOURS[load_level(memory)], _bar(memory, bar_width))} "
        f"{memory_text} {fmt_percent(memory).rjust(4)}".rstrip()
    )
    lines = [line1, line2]
    activity = _activity_line(gpu)
    if activity:
        lines.append(cut(activity, width))
    if (mig_words := mig_state(gpu)) is not None:
        lines.append(f"    └ {mig_words}")
    for mig in gpu.mig_devices:
        profile = safe_text(mig.name).rsplit(" MIG ", 1)[-1] if mig.name else ""
        lines.append(
            cut(
                f"    └ MIG {mig.index} {cut(profile, 12):<12} "
                f"{fmt_bytes(mig.memory_used)} / {fmt_bytes(mig.memory_total)} "
                f"{fmt_percent(percent(mig.memory_used, mig.memory_total))}",
                width,
            )
        )
    return lines


def _activity_line(gpu: GpuSample) -> str:
    """``    act SM 34%  tensor 12%  DRAM 61%``, with a PCIe link below its maximum and NVLink links down;
    empty for a GPU with none of these (a GPU without GPM keeps its two lines)."""
    parts = []
    activity = gpu.activity
    if activity is not None:
        parts.append(
            f"act SM {fmt_percent(activity.sm_active)}  tensor {fmt_percent(activity.tensor_active)}"
            f"  DRAM {fmt_percent(activity.dram_active)}"
        )
    if below_max(gpu):
        parts.append(pcie_link_text(gpu) or "")
    nvlink = gpu.nvlink
    if nvlink is not None and nvlink.links_down:
        parts.append(f"NVLink {nvlink.links_active}/{nvlink.links_total} up")
    return "    " + "  ".join(parts) if parts else ""


_PROCESS_HEADER = f"{'GPU':>4} {'PID':>7} {'USER':<9} {'T':<3} {'GPU-MEM':>8} {'SM':>4} {'CPU':>5} {'TIME':>6}  COMMAND"


# The TUI's sort columns (ui/widgets/rows.py) that --once can order by; any other sorts by GPU memory.
_SORT_KEYS: dict[str, Callable[[ProcessSample], float | str | None]] = {
    "gpu": lambda p: p.gpu_index * 1000 + (-1 if p.mig_index is None else p.mig_index),
    "pid": lambda p: p.pid,
    "user": lambda p: None if p.user is None else p.user.lower(),
    "type": lambda p: p.type,
    "gpu_memory": lambda p: p.gpu_memory,
    "sm": lambda p: p.sm_utilization,
    "cpu": lambda p: p.cpu_percent,
    "host_memory": lambda p: p.host_memory,
    "time": lambda p: None if p.started is None else -p.started,
    "command": lambda p: None if p.command is None else p.command.lower(),
}


def sort_processes(processes: Iterable[ProcessSample], column: str, descending: bool) -> list[ProcessSample]:
    """As the TUI sorts its panel: missing values last, ties by PID then GPU."""
    key = _SORT_KEYS.get(column, _SORT_KEYS["gpu_memory"])
    by_pid = sorted(processes, key=lambda p: (p.pid, p.gpu_index, -1 if p.mig_index is None else p.mig_index))
    present = [p for p in by_pid if key(p) is not None]
    present.sort(key=key, reverse=descending)  # type: ignore[arg-type]
    return present + [p for p in by_pid if key(p) is None]


def _process_lines(snapshot: Snapshot, width: int | None, paint: Any, column: str, descending: bool) -> list[str]:
    """The process lines in ``width`` cells, each command cut in the middle keeping what tells it from its
    siblings (None: commands whole, the lines as long as they are)."""
    processes = sort_processes(snapshot.processes(), column, descending)
    if not processes:
        return [paint(_DIM, "No GPU processes.")]
    lines = [paint(_BOLD, _PROCESS_HEADER if width is None else cut(_PROCESS_HEADER, width))]
    rows, commands = [], []
    for process in processes:
        gpu = f"{process.gpu_index}" + (f".{process.mig_index}" if process.mig_index is not None else "")
        age = None if process.started is None else snapshot.timestamp - process.started
        cpu = NA if process.cpu_percent is None else f"{process.cpu_percent:.0f}%"
        shown = command_text(process.command, process.name)
        command = safe_text(shown) if process.visible else not_visible_words(process.not_visible_reason)
        if process.stale:
            command = "(as last seen) " + command
        if process.job is not None:
            command = f"[job {safe_text(process.job.label)}] {command}"
        rows.append(
            f"{gpu:>4} {process.pid:>7} {fit_cells(safe_text(process.user or NA), 9)} {process.type:<3} "
            f"{fmt_bytes(process.gpu_memory):>8} {fmt_percent(process.sm_utilization):>4} {cpu:>5} "
            f"{fmt_duration(age):>6}  "
        )
        commands.append(command)
    if width is None:
        return [*lines, *(row + command for row, command in zip(rows, commands, strict=True))]
    spans = sibling_spans(commands)
    for row, command, span in zip(rows, commands, spans, strict=True):
        lines.append(row + fit_command(command, max(0, width - len(row)), span))
    return lines
