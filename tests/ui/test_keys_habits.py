"""htop's habits (issue 26 item 8): in the tree, - folds the subtree under the selected line and + unfolds it
(the folded line says how many processes it hides); ] and [ set the refresh rate in a live run (a replay keeps
them for its speed) and the palette still has it; help says what gputop's p and s do. Typed as a user does,
at 80x24 and 120x40."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot

from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.help import HelpScreen

from .factory import NOW, demo_snapshots, notices, screen_text

SIZES = [(80, 24), (120, 40)]


def demo_app() -> GpuTopApp:
    source = DemoSource(gpu_count=4, seed=7, clock=lambda: NOW)
    source.open()
    return GpuTopApp(Sampler(source), RunConfig(interval_s=1.0), start_sampler=False)


def panel_lines(app: GpuTopApp) -> list[str]:
    table = app.processes
    return ["".join(s.text for s in table.render_line(y)).rstrip() for y in range(1, len(table.rows) + 1)]


async def fed(app: GpuTopApp, pilot: Pilot[int]) -> None:
    for one in demo_snapshots(4, 3):
        app.apply_snapshot(one)
    await pilot.pause()


@pytest.mark.parametrize("size", SIZES)
async def test_minus_folds_the_subtree_under_the_selected_line_and_plus_unfolds_it(size: tuple[int, int]) -> None:
    app = demo_app()
    async with app.run_test(size=size) as pilot:
        await fed(app, pilot)
        await pilot.press("t")
        rows = app.processes.rows
        # The first line with lines drawn deeper under it: a launcher and its workers.
        parent = next(n for n in range(len(rows) - 1) if len(rows[n + 1].guide) > len(rows[n].guide))
        depth = len(rows[parent].guide)
        after = rows[parent + 1 :]
        below = after[: next((n for n, row in enumerate(after) if len(row.guide) <= depth), len(after))]
        workers = len({row.process.identity for row in below if not row.launcher})
        before = len(rows)
        start = app.processes.cursor_index or 0
        # Down goes from process to process: a (no process) line on the way is passed over.
        await pilot.press(*["down"] * sum(not row.unattributed for row in rows[start + 1 : parent + 1]))
        assert app.processes.cursor_index == parent
        await pilot.press("minus")
        lines = panel_lines(app)
        assert len(app.processes.rows) == before - len(below)
        assert f"[+{workers}] " in lines[parent]
        assert not {row.key for row in below} & set(app.processes.keys())  # the workers' lines are gone
        # Still folded on the next tick, re-sorted or not.
        app.apply_snapshot(demo_snapshots(4, 4)[-1])
        await pilot.pause()
        assert f"[+{workers}] " in panel_lines(app)[parent] and len(app.processes.rows) == before - len(below)
        await pilot.press("plus")
        assert len(app.processes.rows) == before
        assert "[+" not in " ".join(panel_lines(app))


@pytest.mark.parametrize("size", SIZES)
async def test_plus_and_minus_outside_the_tree_say_where_they_act_and_change_nothing(size: tuple[int, int]) -> None:
    app = demo_app()
    async with app.run_test(size=size) as pilot:
        await fed(app, pilot)
        pids = app.processes.pids()
        await pilot.press("minus", "plus")
        assert app.processes.pids() == pids and app.sampling.interval_s == 1.0
        assert notices(app) == ["+ and - fold the tree: t shows it"] * 2


@pytest.mark.parametrize("size", SIZES)
async def test_brackets_set_the_refresh_rate_live_and_the_title_says_it(size: tuple[int, int]) -> None:
    app = demo_app()
    async with app.run_test(size=size) as pilot:
        await fed(app, pilot)
        await pilot.press("right_square_bracket")
        assert app.sampling.interval_s == 0.5 and app.sub_title == "every 0.5s"
        await pilot.press("left_square_bracket", "left_square_bracket")
        assert app.sampling.interval_s == 2.0 and "every 2s" in str(app.query_one("#title-bar").content)
        if size[0] >= 120:  # at 80 columns the title bar has no room left for it
            assert "every 2s" in screen_text(app).splitlines()[0]
        titles = {command.title for command in app.get_system_commands(app.screen)}
        assert {"Faster refresh", "Slower refresh"} <= titles


async def test_help_names_the_brackets_the_folding_and_says_p_and_s_are_gputop_s() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await fed(app, pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        entries = dict((description, keys) for keys, description in app.screen.entries)
        assert entries["Faster refresh"] == "]" and entries["Slower refresh"] == "["
        assert entries["Fold the subtree under the line (tree view)"] == "-"
        assert entries["Unfold the subtree under the line (tree view)"] == "+"
        assert entries["Show/hide the process panel (gputop's p; not htop's program path)"] == "p"
        assert entries["Show/hide the host strip (gputop's s; not htop's strace)"] == "s"
