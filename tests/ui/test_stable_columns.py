"""Stable columns (issue 26, point 9; issue 34, point 8): GROWTH and IDLE never appear or vanish as a
process grows or turns idle: each shows wherever it fits, empty or not (IDLE after GROWTH); a column that
comes with the processes' owners (JOB, CONTAINER) takes only the room COMMAND can spare, before them,
never pushing another off screen."""

from __future__ import annotations

from gputop.ui.widgets.rows import ProcessRow, empty_columns, visible_columns

from .factory import NOW, proc

GIB = 1024**3


def row(pid: int, *, growing: bool = False, idle: bool = False) -> ProcessRow:
    return ProcessRow(
        process=proc(pid, 0, 10.0), gpu_memory_total=80 * GIB, now=NOW, growing=growing,
        growth_rate=2**20 if growing else 0.0, idle=idle, idle_seconds=700.0 if idle else None,
    )


def names(width: int, empty: frozenset[str]) -> list[str]:
    return [column.name for column in visible_columns(width, empty=empty)]


def test_growth_and_idle_are_never_empty_columns() -> None:
    assert empty_columns([row(1), row(2)]) == {"job", "container"}
    assert empty_columns([row(1), row(2, idle=True)]) == {"job", "container"}
    assert empty_columns([row(1, growing=True), row(2)]) == {"job", "container"}


BASE = ["gpu", "pid", "user", "type", "gpu_memory", "share", "sm", "cpu", "host_memory", "time", "command"]


def test_a_column_that_appears_never_pushes_one_shown_off_and_an_empty_one_takes_no_room() -> None:
    nothing = frozenset({"job", "container"})
    # At 100 columns: every base column shows; GROWTH (14 cells) and IDLE (11) do not fit beside them
    # and give way first: HOST-MEM and TIME stay.
    assert names(100, nothing) == BASE
    # At 120 GROWTH fits, after GPU-MEM's share, whether a process grows or not; IDLE from 121.
    assert names(120, nothing) == [*BASE[:6], "growth", *BASE[6:]]
    assert names(121, nothing) == [*BASE[:6], "growth", "idle", *BASE[6:]]
    # A machine with containers at 120: CONTAINER comes with them, GROWTH and IDLE after it, where
    # they fit (a process's passing state never decides the columns; its owner may).
    assert names(120, nothing - {"container"}) == [*BASE[:-1], "container", "command"]
    assert names(125, nothing - {"container"}) == [*BASE[:6], "growth", *BASE[6:-1], "container", "command"]
    # At 80, the columns dropped are the base ones by priority, as before; none is added.
    at_80 = names(80, nothing)
    assert names(80, frozenset()) == at_80
    assert "host_memory" not in at_80 and "time" in at_80
