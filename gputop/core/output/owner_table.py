"""The owner table's cells, shared by ``gputop --once --by`` and the owner screen (``o``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from gputop.core.analysis.owners import OwnerRow
from gputop.core.format import NA, fmt_bytes, fmt_duration, fmt_watts, safe_text
from gputop.core.text_cut import fit_cells


class Named(Protocol):
    """An owner's row: one machine's (``core.analysis.owners.OwnerRow``) or a fleet's
    (``core.cluster.owners.FleetOwner``)."""

    @property
    def name(self) -> str: ...


Row = TypeVar("Row", bound=Named)


@dataclass(frozen=True, slots=True)
class OwnerColumn:
    """A column: its title, width (0: the rest of the line), and whether it is right-aligned."""

    name: str
    title: str
    width: int
    right: bool = True
    drop_priority: int = 0  # dropped first (highest) when the line is narrow


OWNER_TITLES = {"user": "USER", "job": "JOB", "pod": "POD", "container": "CONTAINER"}
OWNER_COLUMNS: tuple[OwnerColumn, ...] = (
    OwnerColumn("name", "OWNER", 0, right=False),
    OwnerColumn("gpus", "GPUS", 7, right=False),
    OwnerColumn("gpu_memory", "GPU-MEM", 8),
    OwnerColumn("memory_share", "MEM%", 5),
    OwnerColumn("sm_share", "SM", 5),
    OwnerColumn("power_share_w", "POWER", 6),
    OwnerColumn("energy_since_start_j", "ENERGY", 7, drop_priority=1),
    OwnerColumn("idle_memory", "IDLE-MEM", 8),
    OwnerColumn("processes", "PROCS", 5),
    OwnerColumn("longest", "LONGEST", 15, right=False, drop_priority=2),
)
NAME_MIN_WIDTH = 24  # "runtime:id12" is 23
NAME_MAX_WIDTH = 40  # wider, the figures drift away from whose they are


def fitted_columns(width: int) -> tuple[tuple[OwnerColumn, ...], int]:
    """The columns that fit in ``width`` (the name given at least NAME_MIN_WIDTH), and the name's width."""
    columns = OWNER_COLUMNS
    for priority in (2, 1):
        if sum(c.width + 1 for c in columns if c.width) + NAME_MIN_WIDTH <= width:
            break
        columns = tuple(c for c in columns if c.drop_priority != priority)
    room = width - sum(c.width + 1 for c in columns if c.width)
    return columns, max(NAME_MIN_WIDTH, min(NAME_MAX_WIDTH, room))


def fmt_energy(joules: float | None) -> str:
    """``850J``, ``12.3kJ``, ``4.1MJ``; N/A when unknown."""
    if joules is None:
        return NA
    for unit, scale in (("MJ", 1e6), ("kJ", 1e3)):
        if joules >= scale:
            return f"{joules / scale:.1f}{unit}"
    return f"{joules:.0f}J"


def owner_cells(row: OwnerRow, now: float) -> dict[str, str]:
    """Each column's text for one owner (``now``: the snapshot's time, for the longest run)."""
    longest = ""
    if row.longest_pid is not None and row.longest_started is not None:
        longest = f"{row.longest_pid} {fmt_duration(max(0.0, now - row.longest_started))}"
    return {
        "name": safe_text(row.name),
        "gpus": ",".join(str(index) for index in row.gpus) or "-",
        "gpu_memory": fmt_bytes(row.gpu_memory),
        "memory_share": NA if row.memory_share is None else f"{100 * row.memory_share:.0f}%",
        # In percent of one GPU, as top counts CPU: 642% is six and a half GPUs' worth of SM time.
        "sm_share": NA if row.sm_share is None else f"{100 * row.sm_share:.0f}%",
        "power_share_w": fmt_watts(row.power_share_w),
        "energy_since_start_j": fmt_energy(row.energy_since_start_j),
        "idle_memory": fmt_bytes(row.idle_memory) if row.idle_memory else "-",
        "processes": str(row.processes),
        "longest": longest,
    }


def render_owners(rows: Sequence[OwnerRow], by: str, now: float, width: int = 80) -> str:
    """``--once --by``: one line per owner, the owner's name given what the fixed columns leave."""
    columns, name_width = fitted_columns(width)
    widths = {column.name: column.width or name_width for column in columns}

    def line(cells: dict[str, str]) -> str:
        return " ".join(fit_cells(cells[c.name], widths[c.name], c.right) for c in columns).rstrip()

    titles = {column.name: column.title for column in columns}
    titles["name"] = OWNER_TITLES[by]
    lines = [line(titles)]
    lines.extend(line(owner_cells(row, now)) for row in rows)
    if not rows:
        lines.append(f"No GPU process is in a {by}." if by != "user" else "No GPU processes.")
    return "\n".join(lines) + "\n"


def _sort_value(row: Named, column: str, now: float) -> object:
    if column == "name":
        return row.name.lower()
    if column == "gpus" and isinstance(row, OwnerRow):
        return (len(row.gpus), row.gpus)
    if column == "longest" and isinstance(row, OwnerRow):
        return None if row.longest_started is None else now - row.longest_started
    value: object = getattr(row, column)
    return value


def sort_owners(rows: Sequence[Row], column: str, descending: bool, now: float = 0.0) -> list[Row]:
    """``rows`` by ``column`` (a run time for ``longest``); unknown values last, ties by name."""
    by_name = sorted(rows, key=lambda row: row.name)
    known = [row for row in by_name if _sort_value(row, column, now) is not None]
    unknown = [row for row in by_name if _sort_value(row, column, now) is None]
    known.sort(key=lambda row: _sort_value(row, column, now), reverse=descending)  # type: ignore[arg-type,return-value]
    return known + unknown
