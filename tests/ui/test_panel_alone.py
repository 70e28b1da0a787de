"""The process panel holds its own state (issue 36): in a small app that composes only a ProcessPanel and its
filter box (no GpuTopApp, no main screen, no part behind it), its keys sort, filter, show the tree and fold
it; setting its state redraws its rows; what is someone else's (a card to mark, a GPU's detail) leaves it in
a message."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from textual.app import App, ComposeResult

from gputop.core.model import Snapshot
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.screens.sort_pick import SortPickScreen
from gputop.ui.screens.user_pick import UserPickScreen
from gputop.ui.widgets.process_filter import ProcessFilter
from gputop.ui.widgets.rows import SortOrder

from .factory import gpu, proc, snapshot


def machine() -> Snapshot:
    """GPU 0: alice's 101 (40 GiB) and torchrun 400's worker 401 (10 GiB); GPU 1: its worker 402 (12 GiB),
    bob's 501 (6 GiB) and its helper 502 (2 GiB). 101 and 501 were started from a shell."""

    def child(pid: int, index: int, gib: float, parent: int, user: str = "alice") -> Any:
        parent_command = {400: "torchrun --nproc-per-node 2 pretrain.py", 501: "python serve.py"}.get(parent, "-bash")
        return replace(proc(pid, index, gib, user, f"python job{pid}.py"), parent_pid=parent,
                       parent_command=parent_command)

    return snapshot(
        gpu(0, [child(101, 0, 40, 1), child(401, 0, 10, 400)]),
        gpu(1, [child(402, 1, 12, 400), child(501, 1, 6, 1, "bob"), child(502, 1, 2, 501, "bob")]),
    )


class PanelApp(App[None]):
    """A process panel and its filter box, nothing else; it records what the panel tells and asks for."""

    def __init__(self) -> None:
        super().__init__()
        self.panel = ProcessPanel(id="processes")
        self.notes: list[str] = []
        self.marked: list[int | None] = []
        self.details: list[int] = []

    def compose(self) -> ComposeResult:
        yield self.panel
        yield self.panel.filter_bar

    def on_mount(self) -> None:
        self.panel.show(machine(), None)
        self.panel.focus()

    def notify(self, message: str, **_: Any) -> None:  # type: ignore[override]
        self.notes.append(message)

    def on_process_panel_gpu_filtered(self, message: ProcessPanel.GpuFiltered) -> None:
        self.marked.append(message.index)

    def on_process_panel_open_gpu_detail(self, message: ProcessPanel.OpenGpuDetail) -> None:
        self.details.append(message.index)


def header(panel: ProcessPanel) -> str:
    return "".join(segment.text for segment in panel.render_line(0))


async def test_the_sort_keys_and_the_menu_sort_the_panel_alone_and_its_header_says_so() -> None:
    app = PanelApp()
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.panel
        assert panel.pids() == [101, 402, 401, 501, 502] and panel.sort == SortOrder()
        await pilot.press("N")
        assert panel.sort == SortOrder("pid", False)
        assert panel.pids() == [101, 401, 402, 501, 502] and "PID▲" in header(panel)
        await pilot.press("I")
        assert panel.pids() == [502, 501, 402, 401, 101] and "PID▼" in header(panel)
        await pilot.press("f6")
        assert isinstance(app.screen, SortPickScreen)
        app.screen.dismiss("gpu_memory")
        await pilot.pause()
        assert panel.sort == SortOrder("gpu_memory", True) and panel.pids() == [101, 402, 401, 501, 502]
        # The state set from outside (as the settings file does) redraws the rows too.
        panel.sort = SortOrder("user", False)
        await pilot.pause()
        assert panel.pids() == [101, 401, 402, 501, 502]


async def test_the_filter_keys_filter_the_panel_alone_and_a_gpu_filter_leaves_it_as_a_message() -> None:
    app = PanelApp()
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.panel
        await pilot.press("slash", "b", "o", "b", "enter")
        assert panel.filter.text == "bob" and panel.pids() == [501, 502]
        assert app.focused is panel and "filter: /bob" in str(panel.border_title)
        await pilot.press("7")
        assert app.notes == ["there is no GPU 7: this machine has GPUs 0-1 (# lists them)"]
        assert panel.filter.gpu is None and app.marked == []
        panel.clear_filter()
        await pilot.press("0")
        assert panel.pids() == [101, 401] and app.marked == [0]
        await pilot.press("a")
        assert panel.pids() == [101, 402, 401, 501, 502] and app.marked == [0, None]
        await pilot.press("u")
        assert isinstance(app.screen, UserPickScreen)
        app.screen.dismiss("bob")
        await pilot.pause()
        assert panel.filter == ProcessFilter().with_user("bob") and panel.pids() == [501, 502]
        await pilot.press("n")
        assert app.notes[-1] == "no filter: / types one, then n goes from match to match"


async def test_t_shows_the_tree_minus_folds_it_plus_unfolds_it_and_g_asks_for_the_gpu() -> None:
    app = PanelApp()
    async with app.run_test(size=(120, 30)) as pilot:
        panel = app.panel
        await pilot.press("minus")
        assert app.notes == ["+ and - fold the tree: t shows it"]
        await pilot.press("t")
        assert panel.tree_view and panel.pids() == [101, 400, 402, 401, 501, 502]
        assert "tree" in str(panel.border_title)
        await pilot.press("down", "minus")
        assert panel.pids() == [101, 400, 501, 502] and [key[0] for key in panel.folded] == [400]
        await pilot.press("plus")
        assert panel.pids() == [101, 400, 402, 401, 501, 502] and panel.folded == frozenset()
        await pilot.press("down", "g")
        assert app.details == [1]  # 402's GPU
        await pilot.press("t")
        assert not panel.tree_view and panel.pids() == [101, 402, 401, 501, 502]
