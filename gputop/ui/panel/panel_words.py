"""What the process panel says: its title (processes shown, of how many, the tree, a sort column not on
screen, the filter, the tags) and why it cannot show one GPU's processes alone."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from gputop.ui.layout import gpu_range
from gputop.ui.widgets.process_filter import ProcessFilter
from gputop.ui.widgets.rows import COLUMN_BY_NAME, SortOrder


def panel_title(
    shown: int,
    total: int,
    process_filter: ProcessFilter,
    tagged: int,
    *,
    tree: bool = False,
    hidden_sort: SortOrder | None = None,
) -> Text:
    """The panel's border title: how many processes are shown (of how many), the tree, the sort
    when its column is not on screen, the filter, the tags."""
    title = Text.assemble(("Processes", "bold"), f" {shown}")
    if tree:
        title.append("  tree", style="bold cyan")
    if hidden_sort is not None:
        arrow = "▼" if hidden_sort.descending else "▲"
        title.append(f"  sort: {COLUMN_BY_NAME[hidden_sort.column].title}{arrow}", style="bold")
    if process_filter.active:
        title.append(f" of {total}")
        title.append(f"  filter: {process_filter.describe()}", style="bold yellow")
    if tagged:
        title.append(f"  tagged: {tagged}", style="bold")
    return title


def no_such_gpu(index: int, indices: Sequence[int]) -> str | None:
    """Why the panel cannot show only GPU ``index`` of a machine with ``indices``; None when it can."""
    if index in indices:
        return None
    return f"there is no GPU {index}: this machine has {gpu_range(indices)} (# lists them)"
