"""Stable columns (issue 26, point 9; issue 34, point 8): a column with nothing to show gives its width to
COMMAND, and one that appears (IDLE when one is idle) never pushes another off screen; GROWTH never
appears or vanishes with the data: it shows wherever it fits, empty or not."""

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


def test_idle_is_empty_until_a_row_has_it_and_growth_is_never_empty() -> None:
    assert empty_columns([row(1), row(2)]) == {"idle", "job", "container"}
    assert empty_columns([row(1), row(2, idle=True)]) == {"job", "container"}
    assert empty_columns([row(1, growing=True), row(2)]) == {"idle", "job", "container"}


BASE = ["gpu", "pid", "user", "type", "gpu_memory", "share", "sm", "cpu", "host_memory", "time", "command"]


def test_a_column_that_appears_never_pushes_one_shown_off_and_an_empty_one_takes_no_room() -> None:
    nothing = frozenset({"idle", "job", "container"})
    # At 100 columns: every base column shows, no empty IDLE cells; GROWTH (14 cells) does not fit
    # beside them and gives way first: HOST-MEM and TIME stay.
    assert names(100, nothing) == BASE
    # At 120 GROWTH fits, after GPU-MEM's share, whether a process grows or not.
    assert names(120, nothing) == [*BASE[:6], "growth", *BASE[6:]]
    # IDLE appearing at 120 does not fit as well; nothing else goes.
    assert names(120, nothing - {"idle"}) == [*BASE[:6], "growth", *BASE[6:]]
    # At 80, the columns dropped are the base ones by priority, as before; none is added.
    at_80 = names(80, nothing)
    assert names(80, nothing - {"idle"}) == at_80
    assert "host_memory" not in at_80 and "time" in at_80
