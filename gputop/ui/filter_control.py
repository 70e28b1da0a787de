"""The process panel's filter seen from the keys: the filter box, the next match, one GPU, one user."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gputop.ui.layout import gpu_range
from gputop.ui.state import ProcessFilter, users_with_processes
from gputop.ui.widgets.filter_bar import FilterBar
from gputop.ui.widgets.gpu_grid import GpuGrid

if TYPE_CHECKING:
    from gputop.ui.app import GpuTopApp


def no_such_gpu(index: int, indices: Sequence[int]) -> str | None:
    """Why the panel cannot show only GPU ``index`` of a machine with ``indices``; None when it can."""
    if index in indices:
        return None
    return f"there is no GPU {index}: this machine has {gpu_range(indices)} (# lists them)"


class FilterControl:
    """Opens, applies and clears the filter box; filters to one GPU (0-9, #) or one user (u)."""

    def __init__(self, app: GpuTopApp) -> None:
        self.app = app
        self.bar = FilterBar(app.view.apply_filter_text, self._done)

    def open(self) -> None:
        """/: the filter box, holding the filter's text."""
        self.bar.open(self.app.filter.text)

    def _done(self) -> None:
        """Enter in the filter box: back to the panel, first match selected."""
        app = self.app
        app.processes.select_first()
        app.screen.set_focus(app.processes)

    def clear(self) -> None:
        """Esc: leave the filter box and clear the filter (text, user and GPU)."""
        app = self.app
        self.bar.clear()
        app.view.set_filter(ProcessFilter())
        app.query_one(GpuGrid).mark_filtered(None)
        app.screen.set_focus(app.processes)

    def next_match(self) -> None:
        """n / F3: the next process (after the cursor, wrapping) that the filter's text matches."""
        app = self.app
        if not app.filter.text:
            app.notify("no filter: / types one, then n goes from match to match", severity="warning")
            return
        app.processes.select_next(app.filter.matches)

    def only_gpu(self, index: int) -> None:
        """0-9: only that GPU's processes; a GPU this machine does not have is refused, in words."""
        snapshot = self.app.snapshot
        refusal = no_such_gpu(index, [gpu.index for gpu in snapshot.gpus] if snapshot else [])
        if refusal is not None:
            self.app.notify(refusal, severity="warning")
            return
        self.filter_gpu(index)

    def filter_gpu(self, index: int | None) -> None:
        """Only GPU ``index``'s processes (None: every GPU's), its card marked."""
        app = self.app
        app.view.set_filter(app.filter.with_gpu(index))
        app.query_one(GpuGrid).mark_filtered(index)

    def pick_gpu(self) -> None:
        """#: choose the GPU from a list (GPUs 10 and up too), or all of them."""
        from gputop.ui.screens.gpu_pick import GpuPickScreen

        app = self.app

        def picked(choice: str | None) -> None:
            if choice is not None:
                self.filter_gpu(None if choice == GpuPickScreen.ALL else int(choice))

        app.push_screen(GpuPickScreen(app.snapshot.gpus if app.snapshot else (), app.filter.gpu), picked)

    def only_owner(self, kind: str, name: str) -> None:
        """Only one owner's processes (from the owner screen): a user, or ``job:``, ``pod:``, ``container:``."""
        app = self.app
        owner = ProcessFilter().with_user(name) if kind == "user" else ProcessFilter().with_text(f"{kind}:{name}")
        app.view.set_filter(owner)
        app.query_one(GpuGrid).mark_filtered(None)
        app.screen.set_focus(app.processes)

    def pick_user(self) -> None:
        """u: choose one user among those with GPU processes, or all of them."""
        from gputop.ui.screens.user_pick import UserPickScreen

        app = self.app
        users = users_with_processes(app.snapshot) if app.snapshot else []

        def picked(user: str | None) -> None:
            if user is not None:
                app.view.set_filter(app.filter.with_user(None if user == UserPickScreen.ALL else user))

        app.push_screen(UserPickScreen(users, app.filter.user), picked)
