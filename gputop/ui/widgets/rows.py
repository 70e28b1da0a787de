"""The process panel's rows, columns and sort order: plain logic, no widgets (the rows of a snapshot:
``snapshot_rows``; the filter: ``process_filter``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from gputop.core.format import NA, NOT_YET, fmt_bytes, fmt_duration, fmt_growth, safe_text
from gputop.core.host.visibility import not_visible_words
from gputop.core.model import ProcessSample
from gputop.core.output.command_text import command_text

# A process appears once per GPU (or MIG device) it uses, so a row is keyed by
# the process identity (pid, create_time) plus where it runs.
RowKey = tuple[int, "float | None", int, "int | None"]

# Before the command of a process whose GPU is not answering: the row is as the GPU last listed it.
STALE_MARK = "(as last seen) "


@dataclass(slots=True)
class ProcessRow:
    """One process on one GPU, with what the panel needs to show it.

    Not frozen: one is made for every process every tick, and a frozen dataclass takes four times as
    long to make. Nothing changes one once made but its clock: a row kept for a process that did not
    change (``snapshot_rows``' ``last``) is moved on to the tick's ``now``, which only TIME reads. The main
    panel's rows (``snapshot_rows.LiveRow``) read their clock, growth and idleness from the tick.
    """

    process: ProcessSample
    gpu_memory_total: int | None
    now: float
    # Steady growth of the process's GPU memory (bytes/s, 0.0 when not steady) and
    # whether it is fast enough to flag as a leak (see core.analysis.forecast).
    growth_rate: float = 0.0
    growing: bool = False
    # Seconds since it last used the GPU's SMs (None: unknown) and whether that makes it an idle hog.
    idle_seconds: float | None = None
    idle: bool = False
    # Not a process: the memory of a GPU or MIG device that no listed process accounts for (PID 0).
    unattributed: bool = False
    # In the tree (``t``): the branches before the command, the GPU memory of the process and
    # everything under it (None: nothing under it), and whether it is a launcher not on any GPU.
    guide: str = ""
    subtree_memory: int | None = None
    launcher: bool = False
    # Folded in the tree (``-``): how many processes its hidden subtree holds (0: not folded).
    folded: int = 0
    # Made once: the table reads it several times per row each tick.
    key: RowKey = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        p = self.process
        self.key = (p.pid, None, -1, None) if self.launcher else (p.pid, p.started, p.gpu_index, p.mig_index)

    @property
    def gpu_label(self) -> str:
        p = self.process
        if self.launcher:
            return ""
        return str(p.gpu_index) if p.mig_index is None else f"{p.gpu_index}.{p.mig_index}"

    @property
    def memory_share(self) -> float | None:
        used = self.process.gpu_memory
        if used is None or not self.gpu_memory_total:
            return None
        return 100.0 * used / self.gpu_memory_total

    @property
    def hidden_text(self) -> str:
        """What the row says across the host columns when the host cannot see the process."""
        if self.unattributed:
            return f"(no process) {fmt_bytes(self.process.gpu_memory)} · no listed process holds it"
        return not_visible_words(self.process.not_visible_reason)

    @property
    def run_time(self) -> float | None:
        started = self.process.started
        return None if started is None else max(0.0, self.now - started)


@dataclass(frozen=True, slots=True)
class Column:
    """A process panel column: how to show a row's cell, and how to sort by it."""

    name: str
    title: str
    width: int
    cell: Callable[[ProcessRow], str]
    sort_key: Callable[[ProcessRow], float | str | None]
    right: bool = False
    descending_first: bool = True
    # Columns with a higher number are dropped first when the terminal is narrow.
    drop_priority: int = 0


def _host(row: ProcessRow, text: str) -> str:
    return text if row.process.visible else ""


def _num(value: float | None, fmt: str = "{:.0f}") -> str:
    return NA if value is None else fmt.format(value)


def _command(row: ProcessRow) -> str:
    p = row.process
    if not p.visible:
        return row.guide + not_visible_words(p.not_visible_reason)
    command = safe_text(command_text(p.command, p.name))
    fold = f"[+{row.folded}] " if row.folded else ""
    return row.guide + fold + (STALE_MARK + command if p.stale else command)


def _gpu_memory(row: ProcessRow) -> str:
    """A process's GPU memory; in the tree, a parent's is its subtree's, marked Σ where it fits."""
    if row.subtree_memory is None:
        return fmt_bytes(row.process.gpu_memory)
    total = fmt_bytes(row.subtree_memory)
    return "Σ" + total if len(total) < COLUMN_BY_NAME["gpu_memory"].width else total


def _run_time_text(seconds: float | None) -> str:
    """TIME's text: asked for every row on screen every tick, and the same for a second."""
    return NA if seconds is None else _whole_seconds_text(int(seconds))


@lru_cache(maxsize=4096)
def _whole_seconds_text(seconds: int) -> str:
    return fmt_duration(seconds)


def idle_text(seconds: float | None) -> str:
    """``idle 25m``, ``idle 6h18m``: how long an idle process has not run."""
    if seconds is None:
        return ""
    if seconds < 3600:
        return f"idle {int(seconds // 60)}m"
    return f"idle {fmt_duration(seconds)}"


def gpu_order(row: ProcessRow) -> int:
    """A row's place among its PID's rows: by GPU, then MIG device (the device itself first)."""
    mig = row.process.mig_index
    return row.process.gpu_index * 1000 + (-1 if mig is None else mig)


def _lower(text: str | None) -> str | None:
    return None if text is None else text.lower()


def _job_order(row: ProcessRow) -> str | None:
    """Jobs by number (``99`` before ``1234``), then step."""
    job = row.process.job
    if job is None:
        return None
    return f"{job.id:>20}.{job.step or ''}"


COLUMNS: tuple[Column, ...] = (
    Column(
        name="gpu",
        title="GPU",
        width=4,
        cell=lambda r: r.gpu_label,
        sort_key=lambda r: gpu_order(r),
        right=True,
        descending_first=False,
    ),
    Column(
        name="pid",
        title="PID",
        width=7,
        cell=lambda r: "-" if r.unattributed else str(r.process.pid),
        sort_key=lambda r: r.process.pid,
        right=True,
        descending_first=False,
    ),
    Column(
        name="user",
        title="USER",
        width=9,
        cell=lambda r: _host(r, safe_text(r.process.user, 9)),
        sort_key=lambda r: _lower(r.process.user),
        descending_first=False,
    ),
    Column(
        name="type",
        title="T",
        width=3,
        cell=lambda r: r.process.type,
        sort_key=lambda r: r.process.type,
        descending_first=False,
        drop_priority=3,
    ),
    Column(
        name="gpu_memory",
        title="GPU-MEM",
        width=8,
        cell=_gpu_memory,
        sort_key=lambda r: r.process.gpu_memory,
        right=True,
    ),
    Column(
        name="share",
        title="MEM%",
        width=5,
        cell=lambda r: _num(r.memory_share),
        sort_key=lambda r: r.memory_share,
        right=True,
        drop_priority=2,
    ),
    Column(
        name="growth",
        title="GROWTH",
        width=13,
        cell=lambda r: fmt_growth(r.growth_rate) if r.growing else "",
        sort_key=lambda r: r.growth_rate,
        right=True,
        drop_priority=1,
    ),
    Column(
        name="idle",
        title="IDLE",
        width=10,
        cell=lambda r: idle_text(r.idle_seconds) if r.idle else "",
        sort_key=lambda r: r.idle_seconds,
        right=True,
        drop_priority=1,
    ),
    Column(
        name="sm",
        title="SM%",
        width=4,
        cell=lambda r: "" if r.unattributed else _num(r.process.sm_utilization),
        sort_key=lambda r: r.process.sm_utilization,
        right=True,
    ),
    Column(
        name="cpu",
        title="CPU%",
        width=6,
        cell=lambda r: _host(r, NOT_YET if r.process.cpu_percent is None else f"{r.process.cpu_percent:.1f}"),
        sort_key=lambda r: r.process.cpu_percent,
        right=True,
    ),
    Column(
        name="host_memory",
        title="HOST-MEM",
        width=9,
        cell=lambda r: _host(r, fmt_bytes(r.process.host_memory)),
        sort_key=lambda r: r.process.host_memory,
        right=True,
        drop_priority=4,
    ),
    Column(
        name="time",
        title="TIME",
        width=6,
        cell=lambda r: _host(r, _run_time_text(r.run_time)),
        sort_key=lambda r: r.run_time,
        right=True,
    ),
    Column(
        name="job",
        title="JOB",
        width=10,
        cell=lambda r: _host(r, safe_text(r.process.job.label, 10) if r.process.job else "-"),
        sort_key=_job_order,
        descending_first=False,
        drop_priority=5,
    ),
    Column(
        name="container",
        title="CONTAINER",
        width=14,
        cell=lambda r: _host(r, safe_text(r.process.container, 14) if r.process.container else "-"),
        sort_key=lambda r: _lower(r.process.container),
        descending_first=False,
        drop_priority=5,
    ),
    Column(
        name="command",
        title="COMMAND",
        width=0,
        cell=_command,
        sort_key=lambda r: _lower(r.process.command),
        descending_first=False,
    ),
)
COLUMN_BY_NAME = {column.name: column for column in COLUMNS}
COMMAND_MIN_WIDTH = 24


# Columns whose value moves with the tick while a row is kept (``SnapshotRows``): the clock, the growth, the idleness.
LIVE_COLUMNS = frozenset({"time", "growth", "idle"})

# Columns shown only while some row has something in them (``empty_columns``): when one appears it
# takes room the command can spare, never a column already shown.
CONTENT_COLUMNS = frozenset({"job", "container"})
# A process's passing state: shown where they fit after the others, in this order, whether or not a
# process is in that state now (a column that came when a process began to grow, or turned idle,
# would push SM%, CPU%, HOST-MEM and TIME sideways under the user's eyes).
STATE_COLUMNS = ("growth", "idle")


def visible_columns(
    width: int, names: Collection[str] | None = None, empty: Collection[str] = (), *, first: str | None = None
) -> tuple[Column, ...]:
    """The columns that fit in ``width`` cells, leaving the command at least a little room.

    ``names`` (from the settings) limits the columns to those named; the command always shows.
    ``empty`` columns have nothing to show in any row: they leave their width to the command. The
    CONTENT_COLUMNS that are not empty come after the others, then the STATE_COLUMNS: each shows
    only where it fits beside the columns that show without it; ``first`` (the sort column, the
    user's choice) is tried before the other two kinds.
    """
    wanted = [c for c in COLUMNS if (names is None or c.name in names or c.name == "command") and c.name not in empty]
    later = [*CONTENT_COLUMNS, *STATE_COLUMNS]
    shown = [c for c in wanted if c.name not in later]
    for priority in (5, 4, 3, 2, 1):
        if _fixed_width(shown) + COMMAND_MIN_WIDTH <= width:
            break
        shown = [c for c in shown if c.drop_priority != priority]
    by_name = {c.name: c for c in wanted}
    tried = [*(c.name for c in wanted if c.name in CONTENT_COLUMNS), *STATE_COLUMNS]
    if first in tried:
        tried.remove(first)
        tried.insert(0, first)
    for name in tried:
        column = by_name.get(name)
        if column is not None and _fixed_width([*shown, column]) + COMMAND_MIN_WIDTH <= width:
            shown.append(column)
    order = {c.name: n for n, c in enumerate(COLUMNS)}
    return tuple(sorted(shown, key=lambda c: order[c.name]))


def _fixed_width(columns: Collection[Column]) -> int:
    return sum(c.width + 1 for c in columns if c.width) + 1


@dataclass(frozen=True, slots=True)
class SortOrder:
    column: str = "gpu_memory"
    descending: bool = True

    def moved(self, step: int, shown: Collection[str] | None = None) -> SortOrder:
        """The next (step=1) or previous (step=-1) column on screen (``shown``; None: all), in its
        natural direction."""
        names = [c.name for c in COLUMNS if shown is None or c.name in shown or c.name == self.column]
        name = names[(names.index(self.column) + step) % len(names)]
        return SortOrder(name, COLUMN_BY_NAME[name].descending_first)

    def by(self, name: str) -> SortOrder:
        """Sort by ``name``; choosing the current column again inverts the order."""
        if name == self.column:
            return self.inverted()
        return SortOrder(name, COLUMN_BY_NAME[name].descending_first)

    def inverted(self) -> SortOrder:
        return SortOrder(self.column, not self.descending)


def sort_for_key(column: str) -> SortOrder:
    """The order a sort key (``M``, ``P``, ``T``, ``N``, ``G``, ``D``) picks: largest first, but PIDs ascending."""
    return SortOrder("pid", False) if column == "pid" else SortOrder(column, True)


def picked_order(current: SortOrder, column: str) -> SortOrder:
    """The order after choosing ``column`` in the sort menu: the current column keeps its direction."""
    return current if column == current.column else current.by(column)


def empty_columns(rows: Iterable[ProcessRow]) -> frozenset[str]:
    """The columns with nothing to show in any of ``rows``: no job, no container."""
    empty = {"job", "container"}
    for row in rows:
        if row.process.job is not None:
            empty.discard("job")
        if row.process.container:
            empty.discard("container")
        if not empty:
            break
    return frozenset(empty)
