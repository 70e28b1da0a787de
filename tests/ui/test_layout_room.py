"""Room for processes, as the user sees it: gputop folds the cards to one line by itself when full
ones would leave fewer than 15 process rows, and ``c`` holds the other form until pressed again. The panel
has no line under it (the footer is there), so 8 full cards at 120x40 leave 15 rows (issue 34, point 7)."""

from __future__ import annotations

import pytest

from gputop.core.model import Snapshot
from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import gpu, make_app, proc, snapshot


def machine(gpus: int, per_gpu: int) -> Snapshot:
    """``gpus`` GPUs with ``per_gpu`` training ranks each (every rank a row of the panel)."""
    return snapshot(
        *(
            gpu(index, [proc(1000 + 10 * index + rank, index, 4, command=f"python train.py --rank {rank}")
                        for rank in range(per_gpu)])
            for index in range(gpus)
        )
    )


def ranks(gpus: int, count: int) -> Snapshot:
    """``gpus`` GPUs and ``count`` processes in all, on the first GPUs, one each and round again."""
    per_gpu: list[list[int]] = [[] for _ in range(gpus)]
    for n in range(count):
        per_gpu[n % gpus].append(n)
    return snapshot(
        *(gpu(index, [proc(1000 + n, index, 2, command=f"python train.py --rank {n}") for n in numbers])
          for index, numbers in enumerate(per_gpu))
    )


def form(app: GpuTopApp) -> str:
    compact = {card.compact for card in app.query(GpuCard)}
    assert len(compact) == 1  # every card in one form
    return "compact" if compact.pop() else "full"


def rows_on_screen(app: GpuTopApp) -> int:
    table = app.processes
    return min(len(table.rows), table.size.height - 1)  # the header takes a line


# GPUs, processes per GPU, and at 120x40 then 80x24: the form gputop picks and the process rows shown.
CASES = [
    # 4 GPUs at 120x40: two columns of full cards (10 lines) leave the panel 25 rows: all 20 show.
    # At 80x24 full cards would leave 5 rows; compact ones 15.
    (4, 5, ("full", 20), ("compact", 15)),
    # 8 GPUs at 120x40: full cards leave 15 rows, the rows wanted: they stay full.
    # At 80x24: 11 rows under 8 one-line cards, against 5 under full cards that scroll.
    (8, 3, ("full", 15), ("compact", 11)),
]


@pytest.mark.parametrize(("gpus", "per_gpu", "at_120x40", "at_80x24"), CASES)
async def test_gputop_picks_the_form_that_leaves_the_panel_room(
    gpus: int, per_gpu: int, at_120x40: tuple[str, int], at_80x24: tuple[str, int]
) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(machine(gpus, per_gpu))
        await pilot.pause()
        assert len(app.processes.rows) == gpus * per_gpu
        assert (form(app), rows_on_screen(app)) == at_120x40
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == at_80x24


async def test_c_holds_compact_cards_through_a_resize_and_c_again_gives_the_choice_back() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(machine(8, 3))
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("full", 15)
        await pilot.press("c")
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("compact", 24)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("compact", 11)
        await pilot.press("c")  # full: held where gputop would fold them
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("full", 5)
        await pilot.press("c")  # compact: what gputop picks here, so it picks again from now on
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("compact", 11)
        await pilot.resize_terminal(200, 60)
        await pilot.pause()
        assert (form(app), rows_on_screen(app)) == ("full", 24)


async def test_a_process_count_wavering_at_the_threshold_does_not_fold_and_unfold_the_cards() -> None:
    app = make_app()
    async with app.run_test(size=(120, 39)) as pilot:
        # 8 GPUs at 39 lines: full cards leave 14 rows. 14 processes fit under them; a 15th folds them.
        forms = []
        for count in (14, 15, 14, 15, 14, 12):
            app.apply_snapshot(ranks(8, count))
            await pilot.pause()
            forms.append(form(app))
        # Back at 14 they stay folded; at 12 full cards leave two rows to spare, and unfold.
        assert forms == ["full", "compact", "compact", "compact", "compact", "full"]
