"""The process panel's sort order seen from the keys and the mouse: < >, I, M P T N G D, F6, a header click."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gputop.ui.panel.process_view import ProcessView, sort_for_key
from gputop.ui.widgets.rows import SortOrder

if TYPE_CHECKING:  # the menu is imported when first opened: the first frame does not need it
    from gputop.ui.screens.sort_pick import SortPickScreen

    # Opens the sort menu over the screen and calls back with the column picked (None: cancelled).
    PushSortMenu = Callable[[SortPickScreen, Callable[[str | None], None]], object]


def picked_order(current: SortOrder, column: str) -> SortOrder:
    """The order after choosing ``column`` in the sort menu: the current column keeps its direction."""
    return current if column == current.column else current.by(column)


class SortControl:
    """Changes the panel's sort order the way each key or click asks."""

    def __init__(self, view: ProcessView, push_screen: PushSortMenu) -> None:
        self.view = view
        self.push_screen = push_screen

    def move(self, step: int) -> None:
        """< and >: the column left or right of the current one, among those on screen."""
        view = self.view
        view.set_sort(view.sort.moved(step, view.table.shown_columns))

    def invert(self) -> None:
        self.view.set_sort(self.view.sort.inverted())

    def by_key(self, column: str) -> None:
        """M, P, T, N, G, D: that column, largest first (PIDs ascending)."""
        self.view.set_sort(sort_for_key(column))

    def by_header(self, column: str) -> None:
        """A click on a column's header: that column; on the current one, the other direction."""
        self.view.set_sort(self.view.sort.by(column))

    def menu(self) -> None:
        """F6: choose the column from a list, the columns not on screen too."""
        from gputop.ui.screens.sort_pick import SortPickScreen

        view = self.view

        def picked(column: str | None) -> None:
            if column is not None:
                view.set_sort(picked_order(view.sort, column))

        self.push_screen(SortPickScreen(view.sort, view.table.shown_columns), picked)
