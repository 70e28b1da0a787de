"""A tick whose processes did not change costs the panel little (issue 36, item 5), and stays exact: the rows of
an unchanged tick are the last tick's, the ``(no process)`` rows too, kept in their order without a sort; a
figure that changed is sorted into place on the tick it changed, whatever ticks went before."""

from __future__ import annotations

from dataclasses import replace
from random import Random

from gputop.core.model import Snapshot
from gputop.ui.widgets.row_order import sort_rows, sorted_again
from gputop.ui.widgets.rows import COLUMN_BY_NAME, ProcessRow, SortOrder
from gputop.ui.widgets.snapshot_rows import snapshot_rows

from .factory import GIB, NOW, gpu, make_app, proc, snapshot
from .test_diagnosis_ui import machine


def labels(rows: list[ProcessRow]) -> list[str]:
    """Each row as the panel's order shows it: a PID, or ``-`` for the ``(no process)`` row."""
    return ["-" if row.unattributed else str(row.process.pid) for row in rows]


def later(shot: Snapshot, seconds: float) -> Snapshot:
    """The same machine ``seconds`` later, every GPU and process the same object (as the sampler keeps them)."""
    return replace(shot, timestamp=shot.timestamp + seconds)


def with_memory(shot: Snapshot, gpu_index: int, pid: int, memory_gib: float, used_gib: float) -> Snapshot:
    """``shot`` with process ``pid`` holding ``memory_gib`` and its GPU ``used_gib`` in all."""
    gpus = []
    for card in shot.gpus:
        if card.index == gpu_index:
            processes = tuple(
                replace(p, gpu_memory=int(memory_gib * GIB)) if p.pid == pid else p for p in card.processes
            )
            card = replace(card, processes=processes, memory_used=int(used_gib * GIB))
        gpus.append(card)
    return replace(shot, gpus=tuple(gpus))


async def test_an_unchanged_tick_keeps_the_no_process_row_and_one_whose_memory_moved_is_made_with_it() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)):
        first = machine(0)
        app.apply_snapshot(first)
        rows = {row.key: row for row in app.processes.rows}
        (unattributed,) = (row for row in rows.values() if row.unattributed)
        assert unattributed.process.gpu_memory == round(38.6 * GIB)
        # A second on, nothing moved: GPU 0's 38.6 GiB nobody holds is the same row, on the new clock.
        again = later(first, 1)
        foresight = app.apply_snapshot(again)
        kept = snapshot_rows(again, foresight.forecasts.processes, foresight.diagnoses, rows)
        assert [row for row in kept if row.unattributed] == [unattributed]
        assert next(row for row in kept if row.unattributed) is unattributed and unattributed.now == NOW + 1
        # Busy 102 lets 20 GiB go (GPU 0 now 58.6 GiB used): the row is made again, with the 18.6 GiB.
        moved = later(with_memory(first, 0, 102, 10, 40 + 18.6), 2)
        foresight = app.apply_snapshot(moved)
        made = snapshot_rows(moved, foresight.forecasts.processes, foresight.diagnoses, rows)
        (now_unattributed,) = (row for row in made if row.unattributed)
        assert now_unattributed is not unattributed
        assert now_unattributed.process.gpu_memory == round(18.6 * GIB)


def with_quiet_ones(shot: Snapshot) -> Snapshot:
    """``shot`` with 24 more processes on GPU 1, 0.5 GiB each (PIDs 300 to 323): a tick changes a few rows of many."""
    first, second = shot.gpus
    quiet = tuple(proc(300 + n, 1, 0.5, "dave", "python serve.py") for n in range(24))
    used = (second.memory_used or 0) + 12 * GIB
    return replace(shot, gpus=(first, replace(second, processes=(*second.processes, *quiet), memory_used=used)))


async def test_after_unchanged_ticks_a_memory_that_changed_is_sorted_into_place_on_its_tick() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:

        async def order_at(shot: Snapshot, seconds: float) -> list[str]:
            """The panel's order once the machine ``shot`` is shown ``seconds`` after the first tick."""
            app.apply_snapshot(later(shot, seconds))
            await pilot.pause()
            return labels(app.processes.rows)

        first = with_quiet_ones(machine(0))
        quiet = [str(300 + n) for n in range(24)]
        # GPU-MEM, largest first: GPU 0's 38.6 GiB nobody holds, the 30 GiB hog, carol's 20, bob's 10, the rest;
        # then ticks where nothing moved: the same order.
        for second in (0, 1, 2):
            assert await order_at(first, second) == ["-", "101", "201", "102", *quiet]
        # Carol's job grows to 35 GiB: above the hog at once, and there it stays.
        grown = with_memory(first, 1, 201, 35, 35.5 + 12)
        for second in (3, 4):
            assert await order_at(grown, second) == ["-", "201", "101", "102", *quiet]
        # On GPU 0 only 12 GiB are nobody's now: the (no process) row goes down to its place, above bob's 10.
        shrunk = with_memory(grown, 0, 102, 10, 40 + 12)
        assert await order_at(shrunk, 5) == ["201", "101", "-", "102", *quiet]
        memory = [row.process.gpu_memory for row in app.processes.rows[:4]]
        assert memory == [35 * GIB, 30 * GIB, round(12 * GIB), 10 * GIB]
        # Bob's job lets go of all but 0.25 GiB: below every quiet one (ties of 0.5 GiB in PID order).
        let_go = with_memory(shrunk, 0, 102, 0.25, 40 + 12 + 0.25)
        assert await order_at(let_go, 6) == ["201", "101", "-", *quiet, "102"]


async def test_sorted_by_time_the_order_follows_the_clock_even_when_no_process_changed() -> None:
    # 301 reports a start 5 s after the first tick (a clock set back): its TIME is 0 until the clock passes it.
    # At 0 s both show 0s, in PID order; 10 s on, 302 has run 10 s and 301 only 5 s: 302 first.
    early = proc(301, 0, 1, started=NOW + 5)
    late = proc(302, 0, 1, started=NOW)
    first = snapshot(gpu(0, [early, late]))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(first)
        await pilot.pause()
        await pilot.press("T")  # TIME, longest first
        await pilot.pause()
        table = app.processes
        assert table.sort.column == "time" and table.pids() == [301, 302]
        app.apply_snapshot(later(first, 10))
        await pilot.pause()
        assert table.pids() == [302, 301]


def test_rows_placed_again_land_where_a_whole_sort_puts_them_for_every_column_and_direction() -> None:
    # Forty processes on two GPUs (a MIG device among them), with ties, unknowns and text columns; each round
    # five rows are made again with other figures and placed: the order is a whole sort's, exactly.
    random = Random(36)
    users = ["alice", "Bob", "carol", None]

    def made(pid: int, gpu_index: int, mig: int | None) -> ProcessRow:
        process = replace(
            proc(pid, gpu_index, random.choice([1.0, 2.0, 2.0, 8.5]), random.choice(users), mig=mig),
            cpu_percent=random.choice([None, 0.0, 12.5, 12.5, 99.0]),
            sm_utilization=random.choice([None, 10.0, 10.0, 80.0]),
        )
        return ProcessRow(process, 80 * GIB, NOW)

    places = [(pid, pid % 2, 1 if pid % 5 == 0 else None) for pid in range(100, 140)]
    for column in ("gpu_memory", "cpu", "sm", "user", "pid", "gpu", "share", "command"):
        for descending in (True, False):
            order = SortOrder(column, descending)
            sort_key = COLUMN_BY_NAME[column].sort_key
            rows = [made(*place) for place in places]
            ordered = sort_rows(rows, order)
            for round_number in range(6):
                replacing = {}
                for place in random.sample(range(len(rows)), 5):
                    replacing[id(rows[place])] = rows[place] = made(*places[place])
                # Every other round with the values the rows were sorted by: a row made again with the same
                # value then takes its old place; the others are placed by bisection.
                values = {row.key: sort_key(row) for row in ordered} if round_number % 2 else None
                ordered = sorted_again(ordered, replacing, order, values)
                assert list(map(id, ordered)) == list(map(id, sort_rows(rows, order))), (column, descending)
