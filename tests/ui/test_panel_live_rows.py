"""The main panel keeps a process's row from tick to tick while its sample is the same object (issue 36, item 5):
the row reads its tick's clock, growth and idleness, so it says exactly what a row made afresh would say, and
what moves in it (TIME, GROWTH, IDLE) is drawn on the tick it moved."""

from __future__ import annotations

from dataclasses import replace
from random import Random
from types import MappingProxyType

from gputop.core.analysis.diagnosis import Diagnoses, ProcessDiagnosis
from gputop.core.analysis.forecast import ProcessGrowth
from gputop.core.model import ProcessSample, Snapshot
from gputop.ui.widgets.row_order import KeptOrder, sort_rows
from gputop.ui.widgets.rows import ProcessRow, SortOrder
from gputop.ui.widgets.snapshot_rows import SnapshotRows, snapshot_rows

from .factory import GIB, NOW, gpu, make_app, proc, screen_text, snapshot
from .test_diagnosis_ui import SIZE, machine


def shown(row: ProcessRow) -> tuple[object, ...]:
    """Everything a row tells the table: what its cells, its order and the filter read."""
    return (
        row.key, row.process, row.gpu_memory_total, row.now, row.run_time, row.growth_rate, row.growing,
        row.idle_seconds, row.idle, row.unattributed,
    )


def test_rows_kept_tick_after_tick_say_what_rows_made_afresh_say_and_are_kept_while_their_process_is() -> None:
    # Three GPUs of eight processes; each tick a list is kept whole (the sampler's habit), or a few of its
    # processes are sampled again with other figures, or a process comes or goes, or a GPU's total changes; the
    # growth and idleness of random processes change, some to "unknown" (absent).
    random = Random(41)
    lists = {index: tuple(proc(100 * index + n, index, 1.0 + n) for n in range(8)) for index in range(3)}
    totals = dict.fromkeys(lists, 80.0)
    growth: dict[tuple[int, float | None], ProcessGrowth] = {}
    idle: dict[tuple[int, float | None], ProcessDiagnosis] = {}
    live = SnapshotRows()
    last: dict[object, ProcessRow] = {}
    last_samples: dict[object, tuple[ProcessSample, int | None]] = {}
    for tick in range(60):
        for index in lists:
            change = random.choice(["keep", "keep", "resample", "come", "go", "total"])
            processes = list(lists[index])
            if change == "resample":
                for place in random.sample(range(len(processes)), 2):
                    processes[place] = replace(processes[place], gpu_memory=random.choice([1, 2, 3]) * GIB)
            elif change == "come":
                processes.insert(random.randrange(len(processes) + 1), proc(1000 + tick * 10 + index, index, 0.5))
            elif change == "go" and len(processes) > 1:
                processes.pop(random.randrange(len(processes)))
            elif change == "total":
                totals[index] = random.choice([40.0, 80.0])
            if change != "keep":
                lists[index] = tuple(processes)
        identities = [(p.pid, p.started) for processes in lists.values() for p in processes]
        for identity in random.sample(identities, 4):
            growth[identity] = ProcessGrowth(random.choice([None, 0.0, 5e6]), random.choice([False, True]))
            seconds = random.choice([None, 30.0 * tick, 900.0])
            idle[identity] = ProcessDiagnosis(seconds, seconds == 900.0, GIB)
            if random.random() < 0.2:
                del idle[identity]
        cards = (replace(gpu(index, listed), memory_total=int(totals[index] * GIB)) for index, listed in lists.items())
        shot = snapshot(*cards, timestamp=NOW + tick)
        diagnoses = Diagnoses(MappingProxyType({}), MappingProxyType({}), MappingProxyType(dict(idle)))
        rows = live.rows(shot, MappingProxyType(dict(growth)), diagnoses)
        made = snapshot_rows(shot, MappingProxyType(dict(growth)), diagnoses)
        assert [shown(row) for row in rows] == [shown(row) for row in made], tick
        assert live.processes == len(made)
        # The row of a process whose sample is the object it was, on a GPU whose total held, is last tick's.
        for row in rows:
            before = last_samples.get(row.key)
            kept = before is not None and before[0] is row.process and before[1] == row.gpu_memory_total
            assert (row is last.get(row.key)) == kept, (tick, row.key)
        last = {row.key: row for row in rows}
        last_samples = {row.key: (row.process, row.gpu_memory_total) for row in rows}


def test_the_order_kept_from_tick_to_tick_is_a_whole_sort_s_for_every_column_the_moving_ones_too() -> None:
    # Two GPUs of twelve processes, a tick a second: every other tick one process is sampled again with other
    # figures, and each tick the growth and idleness of others move while their samples (and rows) are kept.
    # Whatever the column, the order KeptOrder keeps is the one a whole sort gives, tick after tick.
    random = Random(36)
    for column in ("gpu_memory", "cpu", "idle", "growth", "time", "pid", "user"):
        for descending in (True, False):
            order = SortOrder(column, descending)
            lists = {
                index: tuple(proc(100 * index + n, index, 1.0, random.choice(["ann", "bo"]), age_s=60.0 * n)
                for n in range(12))
                for index in range(2)
            }
            growth: dict[tuple[int, float | None], ProcessGrowth] = {}
            idle: dict[tuple[int, float | None], ProcessDiagnosis] = {}
            live, kept = SnapshotRows(), KeptOrder()
            for tick in range(25):
                if random.random() < 0.5:  # one process of 24 sampled again (the others' lists kept whole)
                    index = random.choice(list(lists))
                    changed = list(lists[index])
                    place = random.randrange(len(changed))
                    memory, cpu = random.choice([1, 2, 4]) * GIB, random.choice([None, 5.0, 50.0])
                    changed[place] = replace(changed[place], gpu_memory=memory, cpu_percent=cpu)
                    lists[index] = tuple(changed)
                for identity in random.sample([(p.pid, p.started) for ps in lists.values() for p in ps], 5):
                    growth[identity] = ProcessGrowth(random.choice([0.0, 1e6, 2e6]), random.choice([False, True]))
                    idle[identity] = ProcessDiagnosis(random.choice([None, 10.0, 700.0]), random.random() < 0.5, GIB)
                shot = snapshot(*(gpu(index, processes) for index, processes in lists.items()), timestamp=NOW + tick)
                diagnoses = Diagnoses(MappingProxyType({}), MappingProxyType({}), MappingProxyType(dict(idle)))
                rows = live.rows(shot, MappingProxyType(dict(growth)), diagnoses)
                kept.place(rows, order)
                assert list(map(id, kept.rows)) == list(map(id, sort_rows(rows, order))), (column, descending, tick)


def still(shot: Snapshot, seconds: float) -> Snapshot:
    """The same machine ``seconds`` later, every GPU and process the same object (as the sampler keeps them)."""
    return replace(shot, timestamp=shot.timestamp + seconds)


def panel_line(app: object, pid: int) -> str:
    """The panel's line of process ``pid`` as the screen shows it."""
    return next(line for line in screen_text(app).splitlines() if f" {pid} " in line)  # type: ignore[arg-type]


async def test_a_kept_row_shows_its_idle_time_grow_and_its_time_move_on_each_tick() -> None:
    # The hog (PID 101) never runs on its GPU; its sample, the same object every tick, is kept with its row.
    first = machine(0)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:  # wide enough for the IDLE column
        for minute in range(12):
            app.apply_snapshot(still(first, 60 * minute))
        await pilot.pause()
        hog = app.processes.rows[[row.process.pid for row in app.processes.rows].index(101)]
        assert "idle 11m" in panel_line(app, 101) and "12m00s" in panel_line(app, 101)
        app.apply_snapshot(still(first, 60 * 13))
        await pilot.pause()
        assert app.processes.rows[[row.process.pid for row in app.processes.rows].index(101)] is hog
        assert "idle 13m" in panel_line(app, 101) and "14m00s" in panel_line(app, 101)
        assert "idle" not in panel_line(app, 102)  # the busy job ran every tick
