"""The process panel's sort order seen from the keys and the mouse: < >, I, M P T N G D, F6, a header click."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gputop.ui.panel.process_view import sort_for_key
from gputop.ui.panel.rows import SortOrder

if TYPE_CHECKING:
    from gputop.ui.app import GpuTopApp


def picked_order(current: SortOrder, column: str) -> SortOrder:
    """The order after choosing ``column`` in the sort menu: the current column keeps its direction."""
    return current if column == current.column else current.by(column)


class SortControl:
    """Changes the panel's sort order the way each key or click asks."""

    def __init__(self, app: GpuTopApp) -> None:
        self.app = app

    def move(self, step: int) -> None:
        """< and >: the column left or right of the current one, among those on screen."""
        app = self.app
        app.view.set_sort(app.sort.moved(step, app.processes.shown_columns))

    def invert(self) -> None:
        self.app.view.set_sort(self.app.sort.inverted())

    def by_key(self, column: str) -> None:
        """M, P, T, N, G, D: that column, largest first (PIDs ascending)."""
        self.app.view.set_sort(sort_for_key(column))

    def by_header(self, column: str) -> None:
        """A click on a column's header: that column; on the current one, the other direction."""
        self.app.view.set_sort(self.app.sort.by(column))

    def menu(self) -> None:
        """F6: choose the column from a list, the columns not on screen too."""
        from gputop.ui.screens.sort_pick import SortPickScreen

        app = self.app

        def picked(column: str | None) -> None:
            if column is not None:
                app.view.set_sort(picked_order(app.sort, column))

        app.push_screen(SortPickScreen(app.sort, app.processes.shown_columns), picked)
