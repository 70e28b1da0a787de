"""The COMMAND column as a user reads it: ranks told apart, the filter's match in view, ← → Ctrl+A Ctrl+E
to scroll it (in a GPU's detail too), and no cut without "…" in the demo at 80x18 (the panel with a scrollbar)."""

from __future__ import annotations

from dataclasses import replace

from rich.cells import cell_len

from gputop.ui.app import GpuTopApp
from gputop.ui.widgets.process_table import ProcessTable

from .factory import demo_snapshots, gpu, make_app, proc, screen_text, snapshot
from .test_cut_property import check_table, read, screen_cells

PYENV = "/home/alice/.pyenv/versions/3.11.7/bin/python3"
TRAIN = "python train.py --data /datasets/imagenet --epochs 90 --batch-size 256 --checkpoint-dir /ckpt/run-17 --seed 3"


def commands_shown(app: GpuTopApp, table: ProcessTable | None = None) -> dict[int, str]:
    """Each process row's COMMAND cell as the terminal shows it, by PID: in ``table``, else the main panel."""
    table = app.processes if table is None else table
    cells = screen_cells(app)
    region = table.scrollable_content_region
    left = region.x + "".join(cells[region.y][region.x : region.right]).index("COMMAND")
    shown = {}
    for y in range(region.y + 1, region.bottom):
        index = y - region.y - 1 + table.scroll_offset.y
        if index < len(table.rows) and not table.rows[index].unattributed:
            shown[table.rows[index].process.pid] = read(cells, y, left, region.right)
    return shown


def marked(app: GpuTopApp) -> dict[int, list[str]]:
    """Each process row's stretches of its COMMAND cell drawn reversed (the filter's mark), by PID."""
    table = app.processes
    region = table.scrollable_content_region
    flags = []  # each screen line's cells: whether each is drawn reversed
    for strip in app.screen._compositor.render_strips():
        flags.append([bool(seg.style and seg.style.reverse) for seg in strip for char in seg.text if cell_len(char)])
    texts = screen_cells(app)
    left = region.x + "".join(texts[region.y][region.x : region.right]).index("COMMAND")
    found: dict[int, list[str]] = {}
    for y in range(region.y + 1, region.bottom):
        index = y - region.y - 1 + table.scroll_offset.y
        if index < len(table.rows) and not table.rows[index].unattributed:
            cells = range(left, region.right)
            runs = [run for run in "".join(texts[y][x] if flags[y][x] else "\0" for x in cells).split("\0") if run]
            found[table.rows[index].process.pid] = runs
    return found


def ranks() -> list:  # type: ignore[type-arg]
    return [
        replace(proc(400 + rank, rank, 10, command=f"{PYENV} train_llama_pretrain_with_fsdp.py --local-rank {rank}"
                     " --config llama70b-fsdp-ac"), parent_pid=399, parent_command="torchrun train.py")
        for rank in range(4)
    ]


async def test_the_demo_at_80x18_with_a_scrollbar_cuts_nothing_without_a_mark() -> None:
    app = make_app()
    async with app.run_test(size=(80, 18)) as pilot:
        for shot in demo_snapshots(4, 3):
            app.apply_snapshot(shot)
        await pilot.pause()
        table = app.processes
        assert table.virtual_size.height > table.scrollable_size.height  # the panel has a scrollbar
        check_table(app, table, "demo 80x18")
        assert commands_shown(app)[41200] == "python train.py … --bs 16"  # was "…b --bs 1", its 6 hidden
        await pilot.press("end")
        assert commands_shown(app)[41502] == "python sweep.py …trial 17"  # was "sweep.py --trial 1"
        check_table(app, table, "demo 80x18, at its end")
        await pilot.press("t")
        check_table(app, table, "demo 80x18, the tree")


async def test_ranks_of_one_job_keep_their_rank_in_view_and_read_apart() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(snapshot(*(gpu(n, [p]) for n, p in enumerate(ranks()))))
        await pilot.pause()
        shown = commands_shown(app)
        # Their start, "…", the one option that differs, "…" (where one of them would have read as the others).
        assert shown == {400 + n: f"python3 tr…--local-rank {n}…" for n in range(4)}
        await pilot.press("t")  # the tree: under their launcher, each still told apart
        shown = commands_shown(app)
        assert [shown[400 + n] for n in range(4)] == [
            "├─ python3…--local-rank 0…", "├─ python3…--local-rank 1…",
            "├─ python3…--local-rank 2…", "└─ python3…--local-rank 3…"]


async def test_the_filters_match_shows_in_each_matching_row() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(101, 0, 10, command=TRAIN)]), gpu(1, ranks())))
        await pilot.pause()
        assert commands_shown(app)[101] == "python train.py … --seed 3"
        await pilot.press("slash", *"epochs 90", "enter")
        assert commands_shown(app) == {101: "python train.py…epochs 90…"}
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"rank 2", "enter")
        assert commands_shown(app) == {402: "python3 train_ll…rank 2 -…"}
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"fsdp-ac", "enter")  # at the end: the end shows
        assert set(commands_shown(app).values()) == {"python3 train_ll…b-fsdp-ac"}


async def test_what_the_filter_matched_is_marked_in_each_command_and_follows_the_filter() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(101, 0, 10, command=TRAIN), proc(102, 0, 5, command="nvtop")]),
                                    gpu(1, ranks())))
        await pilot.pause()
        assert all(runs == [] for runs in marked(app).values())  # no filter: nothing marked
        await pilot.press("slash", *"epochs 90", "enter")
        assert commands_shown(app) == {101: "python train.py…epochs 90…"}
        assert marked(app) == {101: ["epochs 90"]}
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"re:rank [12]", "enter")  # the same lines, another mark
        assert marked(app) == {401: ["rank 1"], 402: ["rank 2"]}
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"re:top\\s*", "enter")  # the command, not the padding
        assert commands_shown(app) == {102: "nvtop"} and marked(app) == {102: ["top"]}
        await pilot.press("slash", "ctrl+a", "ctrl+k", *"PYTHON", "enter")  # any case, as the filter matches
        assert marked(app)[101] == ["python"] and marked(app)[400] == ["python"]  # of "python3"
        await pilot.press("escape")  # the filter cleared: every row back, none marked
        await pilot.pause()
        assert set(marked(app)) == {101, 102, 400, 401, 402, 403}
        assert all(runs == [] for runs in marked(app).values())


async def test_left_right_scroll_the_commands_and_ctrl_a_ctrl_e_go_to_either_end() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(101, 0, 10, command=TRAIN), proc(102, 0, 5, command="nvtop")])))
        await pilot.pause()
        assert commands_shown(app) == {101: "python train.py … --seed 3", 102: "nvtop"}
        await pilot.press("right")  # eight characters on, every row: a short one has nothing to scroll
        assert commands_shown(app) == {101: "…rain.py --data /datasets…", 102: "nvtop"}
        await pilot.press("right", "right")
        assert commands_shown(app)[101] == "…datasets/imagenet --epoc…"
        await pilot.press("left")
        assert commands_shown(app)[101] == "…--data /datasets/imagene…"
        await pilot.press("ctrl+e")
        assert commands_shown(app)[101] == "…dir /ckpt/run-17 --seed 3"
        await pilot.press("right")  # no further than the end
        assert commands_shown(app)[101] == "…dir /ckpt/run-17 --seed 3"
        await pilot.press("ctrl+a")
        assert commands_shown(app)[101] == "python train.py … --seed 3"
        await pilot.press("left")  # no further than the start
        assert commands_shown(app)[101] == "python train.py … --seed 3"


async def test_in_a_gpus_detail_left_right_and_ctrl_e_scroll_its_processes_commands_too() -> None:
    app = make_app()
    async with app.run_test(size=(80, 60)) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(101, 0, 10, command=TRAIN), proc(102, 0, 5, command="nvtop")])))
        await pilot.pause()
        await pilot.press("g")  # the selected process's GPU in detail, its process table focused
        await pilot.pause()
        table = app.screen.query_one(ProcessTable)
        assert table is not app.processes and table.has_focus
        # Its COMMAND column is two cells wider than the panel's (no border).
        assert commands_shown(app, table) == {101: "python train.py …17 --seed 3", 102: "nvtop"}
        await pilot.press("right", "right", "right")
        assert commands_shown(app, table)[101] == "…datasets/imagenet --epochs…"
        await pilot.press("left")
        assert commands_shown(app, table)[101] == "…--data /datasets/imagenet …"
        await pilot.press("ctrl+e")
        assert commands_shown(app, table)[101] == "…t-dir /ckpt/run-17 --seed 3"
        await pilot.press("ctrl+a")
        assert commands_shown(app, table)[101] == "python train.py …17 --seed 3"
        await pilot.press("escape")  # back: the main panel's commands were not scrolled with them
        await pilot.pause()
        assert commands_shown(app)[101] == "python train.py … --seed 3"


async def test_the_kill_dialog_shows_each_whole_command_wrapped_and_pgdn_scrolls_to_the_next() -> None:
    long = "python train.py " + " ".join(f"--option-{n} {n}" for n in range(60))
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(101, 0, 10, command=long), proc(102, 0, 5, command=TRAIN)])))
        await pilot.pause()
        await pilot.press("space", "space", "k")
        targets = str(app.screen.query_one("#kill-targets").content).splitlines()
        first = next(n for n, line in enumerate(targets) if line.startswith("PID 102"))
        # Beside the figures, then under them: every word of the command, none cut.
        assert "".join(line[45:] for line in targets[:first]).replace(" ", "") == long.replace(" ", "")
        assert targets[first] == "PID 102     alice        GPU 0       5.0GiB  python train.py --data "
        assert "PID 102" not in screen_text(app)  # below the first command's lines
        pages = 0
        while "PID 102" not in screen_text(app):
            await pilot.press("pagedown")
            pages += 1
        assert first == 57 and pages == 5  # a page is 11 of the list's 12 lines: the fifth shows line 57
        assert "PID 102     alice        GPU 0       5.0GiB  python train.py --data" in screen_text(app)
        await pilot.press(*["pageup"] * 5)
        assert "PID 101     alice        GPU 0      10.0GiB  python train.py" in screen_text(app)
