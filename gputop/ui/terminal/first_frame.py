"""The first frame, drawn before Textual is imported: the GPUs and their processes as NVML lists them.

Importing Textual and building the screen takes most of a second on a busy machine; the GPUs can be
on the terminal in a fraction of that. This frame is plain text on the alternate screen, from a
snapshot without host facts (no user or command yet); the full screen draws over it.
"""

from __future__ import annotations

import os
from typing import TextIO

from gputop.core.format import NA, fmt_age, fmt_bytes, fmt_percent, fmt_temperature, fmt_watts, safe_text
from gputop.core.glyphs import for_terminal
from gputop.core.model import Snapshot

ENTER = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"  # alternate screen, cursor hidden, cleared
LEAVE = "\x1b[?25h\x1b[?1049l"
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def first_frame_lines(snapshot: Snapshot, columns: int, rows: int) -> list[str]:
    """The frame's lines, at most ``columns`` wide (before styles) and ``rows`` many."""
    lines = [_BOLD + f"{snapshot.hostname}  driver {snapshot.driver_version or NA}"[:columns] + _RESET]
    for gpu in snapshot.gpus:
        name = safe_text(gpu.name or NA)
        if gpu.lost:
            lines.append(f"[{gpu.index}] {name}  LOST"[:columns])
            continue
        if not gpu.answering:  # as its card will say: since when its call has not come back, or why it failed
            since = gpu.not_answering_since
            silent = "not answering" + ("" if since is None else f" {fmt_age(snapshot.timestamp - since)}")
            if gpu.read_failed:
                silent = gpu.last_error or "read failed"
            lines.append(f"[{gpu.index}] {name}  {silent}"[:columns])
            continue
        line = (
            f"[{gpu.index}] {name[:24]:<24} {fmt_temperature(gpu.temperature):>5} {fmt_watts(gpu.power_draw):>5}"
            f" util {fmt_percent(gpu.utilization_gpu):>4}"
            f" mem {fmt_bytes(gpu.memory_used)}/{fmt_bytes(gpu.memory_total)} {fmt_percent(gpu.memory_percent):>4}"
        )
        lines.append(line[:columns])
    processes = sorted(snapshot.processes(), key=lambda p: (-(p.gpu_memory or 0), p.gpu_index, p.pid))
    if processes:
        lines.append("")
        lines.append(_BOLD + f"{'GPU':>4} {'PID':>7} {'GPU-MEM':>8}  {'SM':>4}"[:columns] + _RESET)
    for process in processes[: max(0, rows - len(lines))]:
        device = f"{process.gpu_index}" + (f".{process.mig_index}" if process.mig_index is not None else "")
        memory, sm = fmt_bytes(process.gpu_memory), fmt_percent(process.sm_utilization)
        lines.append(f"{device:>4} {process.pid:>7} {memory:>8}  {sm:>4}"[:columns])
    if len(lines) < rows:
        lines.append(_DIM + "starting…"[:columns] + _RESET)
    return lines[:rows]


def draw_first_frame(snapshot: Snapshot, stream: TextIO) -> bool:
    """Draw the frame on the terminal ``stream`` is; False (nothing written) when it is not a terminal."""
    if not stream.isatty():
        return False
    try:
        columns, rows = os.get_terminal_size(stream.fileno())
    except OSError:
        return False
    stream.write(for_terminal(ENTER + "\r\n".join(first_frame_lines(snapshot, columns, rows))))
    stream.flush()
    return True
