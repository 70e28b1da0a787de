"""Stable columns (issue 26, point 9): a column with nothing to show gives its width to COMMAND, and one
that appears (GROWTH when a process grows, IDLE when one is idle) never pushes another off screen."""

from __future__ import annotations

from gputop.ui.panel.rows import ProcessRow, empty_columns, visible_columns

from .factory import NOW, proc

GIB = 1024**3


def row(pid: int, *, growing: bool = False, idle: bool = False) -> ProcessRow:
    return ProcessRow(
        process=proc(pid, 0, 10.0), gpu_memory_total=80 * GIB, now=NOW, growing=growing,
        growth_rate=2**20 if growing else 0.0, idle=idle, idle_seconds=700.0 if idle else None,
    )


def names(width: int, empty: frozenset[str]) -> list[str]:
    return [column.name for column in visible_columns(width, empty=empty)]


def test_idle_and_growth_are_empty_until_a_row_has_them() -> None:
    assert empty_columns([row(1), row(2)]) == {"growth", "idle", "job", "container"}
    assert empty_columns([row(1), row(2, idle=True)]) == {"growth", "job", "container"}
    assert empty_columns([row(1, growing=True), row(2)]) == {"idle", "job", "container"}


BASE = ["gpu", "pid", "user", "type", "gpu_memory", "share", "sm", "cpu", "host_memory", "time", "command"]


def test_a_column_that_appears_never_pushes_one_shown_off_and_an_empty_one_takes_no_room() -> None:
    nothing = frozenset({"growth", "idle", "job", "container"})
    # At 100 columns, nothing growing: every base column shows, no empty IDLE cells.
    assert names(100, nothing) == BASE
    # A process starts growing: GROWTH (14 cells) does not fit beside them: HOST-MEM and TIME stay.
    assert names(100, nothing - {"growth"}) == BASE
    # At 120 it fits, after GPU-MEM's share, and takes the command's spare room, not a column.
    assert names(120, nothing - {"growth"}) == [*BASE[:6], "growth", *BASE[6:]]
    # GROWTH and IDLE both appearing at 120: IDLE does not fit as well; nothing else goes.
    assert names(120, nothing - {"growth", "idle"}) == [*BASE[:6], "growth", *BASE[6:]]
    # At 80, the columns dropped are the base ones by priority, as before; none is added.
    at_80 = names(80, nothing)
    assert names(80, nothing - {"growth", "idle"}) == at_80
    assert "host_memory" not in at_80 and "time" in at_80
