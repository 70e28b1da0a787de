"""The screen never shows a shortened value as if it were whole: a property over random process sets.

Random sets of processes (long commands, siblings that differ in one token, wide characters, numbers at
the end) at random sizes from 40x10 to 240x70, with and without a scrollbar, on every screen that shows
a command: the main panel, the tree, the GPU detail's process list, the process screen and the kill
dialog. Every cell read back from the terminal is the whole value, or pieces of it joined by "…", each
found in the value in order, the first its true start unless "…" opens the cell, the last its true end
unless "…" closes it.

A seeded loop, a few seconds long: ``GPUTOP_PROPERTY_SEED=N`` for another run, ``GPUTOP_PROPERTY_CASES=N`` for
a longer one.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

from rich.cells import get_character_cell_size
from textual.widget import Widget
from textual.widgets import Footer

from gputop.core.model import ProcessSample, Snapshot
from gputop.core.output.command_text import command_text
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.rows import ProcessRow

from .factory import gpu, make_app, proc, snapshot

SEED = int(os.environ.get("GPUTOP_PROPERTY_SEED", "34"))
CASES = int(os.environ.get("GPUTOP_PROPERTY_CASES", "8"))
# The first cases at the ends of the range: the tree at 240x70, the kill dialog at 40x10, the process
# screen at 40x70, the GPU detail at 240x10 (each case shows the main panel and one other screen, in turn).
CORNERS = [(240, 70), (40, 10), (40, 70), (240, 10)]
PYENV = "/home/alice/.pyenv/versions/3.11.7/bin/python3"
CJK = "训练数据集模型检查点日本語テスト"
USERS = ["alice", "bob", "a-very-long-user-name", "山田太郎さん", "x"]


def honest(shown: str, value: str) -> bool:
    """Whether ``shown`` is ``value`` whole, or pieces of it in order joined by "…" (its true start unless
    "…" opens it, its true end unless "…" closes it)."""
    if shown == value:
        return True
    parts = shown.split("…")
    if len(parts) == 1:
        return False  # shortened, or another value, with no mark
    if parts[0] and not value.startswith(parts[0]):
        return False
    at = 0
    for part in parts[:-1]:
        found = value.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    last = parts[-1]
    return not last or (value.endswith(last) and len(value) - len(last) >= at)


def test_honest_tells_a_cut_from_a_wrong_value() -> None:
    assert honest("python train.py …--bs 16", "python train.py --model x --bs 16")
    assert honest("sweep.py --tri…", "sweep.py --trial 17")
    assert not honest("python train.py …b --bs 1", "python train.py --model x --bs 16")  # the demo at 80x18
    assert not honest("sweep.py --trial 1", "sweep.py --trial 17")
    assert not honest("…--trial 71…", "sweep.py --trial 17")


def random_command(rng: random.Random, family: str, number: int) -> str:
    if family == "ranks":
        return f"{PYENV} train_llama_pretrain_with_fsdp.py --local-rank {number} --config llama70b-fsdp-ac"
    if family == "trials":
        return f"python sweep.py --lr 0.00{rng.randint(1, 9)} --trial {rng.randint(1, 99)}"
    if family == "ports":
        return f"jupyter-lab --no-browser --port {8000 + rng.randint(0, 999)}"
    if family == "wide":
        word = "".join(rng.choice(CJK) for _ in range(rng.randint(2, 12)))
        return f"python {word}.py --名前 {word}{number}"
    letters = "abcdefghij"
    words = ["--" + "".join(rng.choice(letters) for _ in range(rng.randint(2, 9))) for _ in range(rng.randint(1, 30))]
    return " ".join(["python", f"job_{rng.randint(1, 9)}.py", *words, str(rng.randint(0, 99999))])


def random_snapshot(rng: random.Random, count: int) -> Snapshot:
    families = rng.sample(["ranks", "trials", "ports", "wide", "long"], rng.randint(1, 3))
    gpus: dict[int, list[ProcessSample]] = {index: [] for index in range(rng.randint(1, 3))}
    for number in range(count):
        family = rng.choice(families)
        index = rng.randrange(len(gpus))
        sample = proc(1000 + number, index, rng.uniform(0.1, 20), rng.choice(USERS),
                      random_command(rng, family, number), container=rng.choice([None, "k8s:pod-" + "ab" * 9]))
        if family in ("ranks", "trials"):  # the workers of one launcher
            sample = replace(sample, parent_pid=400 if family == "ranks" else 500,
                             parent_command=f"{PYENV} /home/alice/bin/torchrun --nproc-per-node 8 x.py")
        gpus[index].append(sample)
    return snapshot(*(gpu(index, processes) for index, processes in gpus.items()))


def screen_cells(app: GpuTopApp) -> list[list[str]]:
    """The terminal as cells: a wide character, then "" for the cell it covers."""
    lines = []
    for strip in app.screen._compositor.render_strips():
        cells: list[str] = []
        for segment in strip:
            for char in segment.text:
                width = get_character_cell_size(char)
                if width:
                    cells.append(char)
                    cells.extend([""] * (width - 1))
        lines.append(cells)
    return lines


def on_screen(app: GpuTopApp, widget: Widget) -> tuple[int, int]:
    """The lines of the screen where ``widget`` shows (from, to): a screen that scrolls (the GPU detail, the
    process screen, a dialog) can put part of it out of view, past an edge or under the footer."""
    visible = app.screen.find_widget(widget).visible_region
    footers = [footer.region.y for footer in app.screen.query(Footer)]
    return max(0, visible.y), min([visible.bottom, *footers])


def read(cells: list[list[str]], y: int, left: int, right: int) -> str:
    return "".join(cells[y][left:right]).rstrip()


def row_value(row: ProcessRow) -> str:
    """The row's whole command as the lists show it (program base name, script, arguments), its tree first."""
    p = row.process
    folded = f"[+{row.folded}] " if row.folded else ""
    return row.guide + folded + command_text(p.command, p.name)


def check_table(app: GpuTopApp, table: ProcessTable, where: str) -> int:
    """Every command and user cell of ``table`` on screen is honest; how many commands were read."""
    cells = screen_cells(app)
    top, bottom = on_screen(app, table)
    region = table.scrollable_content_region
    if top >= bottom or top > region.y:
        return 0  # below the fold, or its header out of view: nothing to read the columns by
    header = "".join(cells[region.y][region.x : region.right])
    # Too narrow for the command beside the fixed columns (40 cells): the column has no room at all.
    command_x = region.x + header.index("COMMAND") if "COMMAND" in header else None
    user_x = region.x + header.index("USER") if "USER" in header else None
    read_rows = 0
    for y in range(region.y + 1, min(region.bottom, bottom, len(cells))):
        index = y - region.y - 1 + table.scroll_offset.y
        if index >= len(table.rows):
            break
        row = table.rows[index]
        if row.unattributed or not row.process.visible:
            continue
        if command_x is not None:
            shown = read(cells, y, command_x, region.right)
            value = row_value(row)
            assert honest(shown, value), f"{where}: {shown!r} shown for {value!r}"
        if user_x is not None and row.process.user is not None:
            user = read(cells, y, user_x, user_x + 9)
            assert honest(user, row.process.user), f"{where}: user {user!r} shown for {row.process.user!r}"
        read_rows += 1
    return read_rows


def check_wrapped(
    cells: list[list[str]], widget: Widget, starts: list[tuple[int, str]], screen_bottom: int, where: str
) -> None:
    """Lines of ``widget`` on screen (down to ``screen_bottom``), from each of ``starts`` (a line and the value
    that starts there) to the next: the value wrapped, pieces of it in order, whole where all of it shows."""
    region = widget.content_region
    for number, (y, value) in enumerate(starts):
        end = starts[number + 1][0] if number + 1 < len(starts) else screen_bottom
        pieces = [read(cells, line, region.x, region.right).strip() for line in range(y, end)]
        assert "…" not in "".join(pieces), f"{where}: {pieces!r} cut, for {value!r}"
        joined = "".join(pieces).replace(" ", "")
        flat = value.replace(" ", "")
        assert flat.startswith(joined) if end == screen_bottom else joined == flat, f"{where}: {pieces!r} for {value!r}"


def check_kill_dialog(app: GpuTopApp, rows: list[ProcessRow]) -> None:
    assert isinstance(app.screen, KillScreen)
    targets = app.screen.query_one("#kill-targets")
    cells = screen_cells(app)
    region = targets.content_region
    top, bottom = on_screen(app, targets)
    starts = []
    for y in range(top, bottom):
        line = read(cells, y, region.x, region.right)
        if line.startswith("PID "):
            pid = int(line.split()[1])
            row = next(row for row in rows if row.process.pid == pid)
            value = command_text(row.process.command, row.process.name)
            user = read(cells, y, region.x + 12, region.x + 24)
            assert row.process.user is not None and honest(user, row.process.user), f"kill dialog: user {user!r}"
            # The command starts after the figures: the line's cells from column 45 (or on the next lines).
            blank = [" "] * (region.width)
            cells[y][region.x : region.x + 45] = blank[:45]
            starts.append((y, value))
    check_wrapped(cells, targets, starts, bottom, "kill dialog")


async def test_every_command_shown_on_any_screen_at_any_size_is_whole_or_visibly_cut() -> None:
    rng = random.Random(SEED)
    app = make_app()
    read_rows = 0
    scrollbars: set[bool] = set()
    async with app.run_test(size=(120, 40)) as pilot:
        for case in range(CASES):
            width, height = rng.randint(40, 240), rng.randint(10, 70)
            if case < len(CORNERS):
                width, height = CORNERS[case]
            count = rng.choice([rng.randint(1, 4), rng.randint(height // 2, height + 12)])  # a scrollbar or not
            await pilot.resize_terminal(width, height)
            app.apply_snapshot(random_snapshot(rng, count))
            await pilot.pause()
            where = f"case {case} ({width}x{height}, {count} processes, seed {SEED})"
            table = app.processes
            read_rows += check_table(app, table, f"main panel, {where}")
            scrollbars.add(table.virtual_size.height > table.scrollable_size.height)
            rows = [row for row in table.rows if not row.unattributed]
            # One other screen a case, in turn: each is tried at several sizes, the run stays short.
            other = case % 4
            if other == 0:
                await pilot.press("t")
                await pilot.pause()
                read_rows += check_table(app, table, f"tree, {where}")
                await pilot.press("t")
            elif other == 1:
                table.cursor_key = rows[0].key
                await pilot.press("k")
                await pilot.pause()
                check_kill_dialog(app, rows)
                await pilot.press("escape")
            elif other == 2:
                table.cursor_key = rows[0].key
                await pilot.press("enter")
                await pilot.pause()
                assert isinstance(app.screen, ProcessScreen)
                check_process_screen(app, rows[0], where)
                await pilot.press("escape")
            else:
                app.navigation.detail(rows[0].process.gpu_index)
                await pilot.pause()
                assert isinstance(app.screen, DetailScreen)
                detail_table = app.screen.query_one("#detail-processes", ProcessTable)
                read_rows += check_table(app, detail_table, f"GPU detail, {where}")
                await pilot.press("escape")
    assert read_rows > 100 and scrollbars == {True, False}  # the property was tried, with and without a scrollbar


def check_process_screen(app: GpuTopApp, row: ProcessRow, where: str) -> None:
    """The Command line of the process screen: the command line as it is, wrapped, never cut."""
    cells = screen_cells(app)
    info = app.screen.query_one("#process-info")
    region = info.content_region
    top, bottom = on_screen(app, info)
    for y in range(top, bottom):
        line = read(cells, y, region.x, region.right)
        if line.startswith("Command"):
            value = row.process.command or ""
            x = region.x + len("Command")
            while x < region.right and not cells[y][x].strip():
                x += 1  # to where the value column starts
            labels = [y2 for y2 in range(y + 1, bottom) if cells[y2][region.x].strip()]
            end = labels[0] if labels else bottom
            pieces = [read(cells, line_y, x, region.right).strip() for line_y in range(y, end)]
            joined, flat = "".join(pieces).replace(" ", ""), value.replace(" ", "")
            assert "…" not in joined and (joined == flat if labels else flat.startswith(joined)), (
                f"process screen, {where}: {pieces!r} for {value!r}")
            return
