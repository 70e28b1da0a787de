"""The process panel's filter seen from the keys: the filter box, the next match, one GPU, one user."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from gputop.core.model import Snapshot
from gputop.ui.layout import gpu_range
from gputop.ui.panel.process_view import ProcessView
from gputop.ui.widgets.filter_bar import FilterBar
from gputop.ui.widgets.process_filter import ProcessFilter
from gputop.ui.widgets.rows import users_with_processes

if TYPE_CHECKING:
    from textual.screen import Screen

# Tells the user something (the app's notify: message, then severity and the like as keywords).
Notify = Callable[..., object]
# Opens a screen over this one and calls back with what it was dismissed with.
PushScreen = Callable[["Screen[Any]", Callable[[Any], None]], object]


def no_such_gpu(index: int, indices: Sequence[int]) -> str | None:
    """Why the panel cannot show only GPU ``index`` of a machine with ``indices``; None when it can."""
    if index in indices:
        return None
    return f"there is no GPU {index}: this machine has {gpu_range(indices)} (# lists them)"


class FilterControl:
    """Opens, applies and clears the filter box; filters to one GPU (0-9, #) or one user (u).

    ``view``: the panel's rows (and its table); ``mark_card``: marks the card of the GPU filtered to (None:
    none); ``current``: the snapshot shown; ``notify`` and ``push_screen``: the app's.
    """

    def __init__(
        self,
        view: ProcessView,
        *,
        mark_card: Callable[[int | None], None],
        current: Callable[[], Snapshot | None],
        notify: Notify,
        push_screen: PushScreen,
    ) -> None:
        self.view = view
        self.mark_card = mark_card
        self.current = current
        self.notify = notify
        self.push_screen = push_screen
        self.bar = FilterBar(view.apply_filter_text, self._done)

    @property
    def shown(self) -> bool:
        """Whether a filter is applied or its box open: Esc then has something to clear."""
        return self.view.filter.active or bool(self.bar.display)

    def _focus_panel(self) -> None:
        table = self.view.table
        table.screen.set_focus(table)

    def open(self) -> None:
        """/: the filter box, holding the filter's text."""
        self.bar.open(self.view.filter.text)

    def _done(self) -> None:
        """Enter in the filter box: back to the panel, first match selected."""
        self.view.table.select_first()
        self._focus_panel()

    def clear(self) -> None:
        """Esc: leave the filter box and clear the filter (text, user and GPU)."""
        self.bar.clear()
        self.view.set_filter(ProcessFilter())
        self.mark_card(None)
        self._focus_panel()

    def next_match(self) -> None:
        """n / F3: the next process (after the cursor, wrapping) that the filter's text matches."""
        process_filter = self.view.filter
        if not process_filter.text:
            self.notify("no filter: / types one, then n goes from match to match", severity="warning")
            return
        self.view.table.select_next(process_filter.matches)

    def only_gpu(self, index: int) -> None:
        """0-9: only that GPU's processes; a GPU this machine does not have is refused, in words."""
        snapshot = self.current()
        refusal = no_such_gpu(index, [gpu.index for gpu in snapshot.gpus] if snapshot else [])
        if refusal is not None:
            self.notify(refusal, severity="warning")
            return
        self.filter_gpu(index)

    def filter_gpu(self, index: int | None) -> None:
        """Only GPU ``index``'s processes (None: every GPU's), its card marked."""
        self.view.set_filter(self.view.filter.with_gpu(index))
        self.mark_card(index)

    def pick_gpu(self) -> None:
        """#: choose the GPU from a list (GPUs 10 and up too), or all of them."""
        from gputop.ui.screens.gpu_pick import GpuPickScreen

        snapshot = self.current()

        def picked(choice: str | None) -> None:
            if choice is not None:
                self.filter_gpu(None if choice == GpuPickScreen.ALL else int(choice))

        self.push_screen(GpuPickScreen(snapshot.gpus if snapshot else (), self.view.filter.gpu), picked)

    def only_owner(self, kind: str, name: str) -> None:
        """Only one owner's processes (from the owner screen): a user, or ``job:``, ``pod:``, ``container:``."""
        owner = ProcessFilter().with_user(name) if kind == "user" else ProcessFilter().with_text(f"{kind}:{name}")
        self.view.set_filter(owner)
        self.mark_card(None)
        self._focus_panel()

    def pick_user(self) -> None:
        """u: choose one user among those with GPU processes, or all of them."""
        from gputop.ui.screens.user_pick import UserPickScreen, user_usage

        snapshot = self.current()
        users = users_with_processes(snapshot) if snapshot else []
        view = self.view

        def picked(user: str | None) -> None:
            if user is not None:
                view.set_filter(view.filter.with_user(None if user == UserPickScreen.ALL else user))

        self.push_screen(UserPickScreen(users, view.filter.user, user_usage(snapshot)), picked)
