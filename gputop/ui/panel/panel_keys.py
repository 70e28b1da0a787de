"""What the process tables' keys do, handed to the tables: the parts behind them and the mode's rule.

A table's key (``widgets/process_table.py``, ``panel/process_panel.py``) reaches it through Textual's
focus chain and calls the part that does the work here; ``allows`` hides what the mode forbids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gputop.ui.controls.navigation import Navigation
    from gputop.ui.panel.filter_control import FilterControl
    from gputop.ui.panel.kill_control import KillControl
    from gputop.ui.panel.process_view import ProcessView
    from gputop.ui.panel.sort_control import SortControl


@dataclass(frozen=True, slots=True, kw_only=True)
class PanelKeys:
    """The parts the process tables' keys call."""

    view: ProcessView
    sort: SortControl
    filters: FilterControl
    kill: KillControl
    navigation: Navigation
    allows: Callable[[str], bool]  # whether an action acts in this mode (read-only, replay)
