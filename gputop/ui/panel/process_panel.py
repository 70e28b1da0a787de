"""The main screen's process panel: a process table with the keys that filter it, show it as a tree and
open its GPU's detail (``keymap.PANEL_BINDINGS``), besides those of every process table."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from gputop.ui.keymap import PANEL_ACTIONS, PANEL_BINDINGS
from gputop.ui.widgets.process_table import ProcessTable

if TYPE_CHECKING:
    from textual.binding import BindingType

    from gputop.ui.panel.panel_keys import PanelKeys
    from gputop.ui.panel.process_view import ProcessView
    from gputop.ui.widgets.process_filter import ProcessFilter


class ProcessPanel(ProcessTable):
    """The process table of the main screen; its keys call ``parts`` (set by the app once they exist)."""

    BINDINGS: ClassVar[list[BindingType]] = PANEL_BINDINGS
    panel_parts: PanelKeys | None = None

    def connect(self, parts: PanelKeys) -> None:
        """The parts its keys call, those of every table's keys among them."""
        self.panel_parts = self.parts = parts

    @property
    def filter(self) -> ProcessFilter:
        """What the panel shows (its view's: the parts are connected when the app is made); ``sort``, the
        order it shows its rows in, is every process table's."""
        return self._view().filter

    def _view(self) -> ProcessView:
        if self.panel_parts is None:
            raise LookupError("the process panel's parts are not connected yet")
        return self.panel_parts.view

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in PANEL_ACTIONS:
            return super().check_action(action, parameters)
        parts = self.panel_parts
        return parts is not None and parts.allows(action)

    def action_filter(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.filters.open()

    def action_next_match(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.filters.next_match()

    def action_only_gpu(self, index: int) -> None:
        if (keys := self.panel_parts) is not None:
            keys.filters.only_gpu(index)

    def action_all_gpus(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.filters.filter_gpu(None)

    def action_pick_gpu(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.filters.pick_gpu()

    def action_pick_user(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.filters.pick_user()

    def action_toggle_tree(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.view.set_tree(not keys.view.tree)

    def action_fold(self) -> None:
        """-: in the tree, hide the subtree under the selected line (htop's habit)."""
        self._fold(True)

    def action_unfold(self) -> None:
        """+: in the tree, show the folded subtree under the selected line again."""
        self._fold(False)

    def _fold(self, folded: bool) -> None:
        keys = self.panel_parts
        if keys is not None and not keys.view.fold(self.cursor_key, folded) and not keys.view.tree:
            self.notify("+ and - fold the tree: t shows it", severity="warning")

    def action_detail_selected(self) -> None:
        if (keys := self.panel_parts) is not None:
            keys.navigation.detail_of_selected(self, keys.view.filter.gpu)
