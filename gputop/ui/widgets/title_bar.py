"""The title bar: host, GPU count, driver, refresh interval (or replay position), REC, FROZEN."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gputop.core.format import fmt_age
from gputop.core.model import Snapshot
from gputop.ui.widgets.still_frame import StillFrame


def title_text(
    snapshot: Snapshot | None,
    mode: Text,
    *,
    recording: str | None = None,
    readonly: bool = False,
    frozen: bool = False,
    late_s: float | None = None,
    alerts: int = 0,
) -> Text:
    """One line about what is on screen; ``mode`` says how it moves (every N s, or the replay).

    ``late_s``: the age of the newest sample, when sampling is late (it is shown); with no snapshot
    yet, how long the first one has been waited for. ``alerts``: how many are raised now (``⚠ 3``;
    ``!`` lists them), shown first after the name so that a narrow terminal keeps it.
    """
    bar = Text(no_wrap=True, overflow="ellipsis")
    bar.append(" gputop ", style="bold reverse")
    if alerts:
        bar.append(f" ⚠ {alerts} ", style="bold reverse yellow")
    if snapshot is not None:
        bar.append(f" {snapshot.hostname}", style="bold")
        bar.append(f"  {len(snapshot.gpus)} GPU{'s' if len(snapshot.gpus) != 1 else ''}")
        if snapshot.driver_version:
            bar.append(f"  driver {snapshot.driver_version}")
        if snapshot.cuda_driver_version:
            bar.append(f"  CUDA {snapshot.cuda_driver_version}")
        if snapshot.source != "nvml":
            bar.append(f"  [{snapshot.source}]", style="italic")
    bar.append_text(mode)
    if late_s is not None:
        waited = f"no sample yet after {fmt_age(late_s)}" if snapshot is None else f"last sample {fmt_age(late_s)} ago"
        bar.append(f"  {waited} ", style="bold reverse yellow")
    if recording is not None:
        bar.append(f"  ● REC {recording}", style="bold red")
    if readonly:
        bar.append("  read-only", style="bold cyan")
    if frozen:
        bar.append("  FROZEN ", style="bold reverse red")
    return bar


def interval_text(interval_s: float) -> Text:
    """The title's mode while live: how often it samples."""
    return Text().append(f"  every {interval_s:g}s", style="bold")


class TitleBar(Static, StillFrame):
    """The title line; an unchanged title is not redrawn, and while nothing refreshed it, it gives the
    compositor the line it drew (a frame's box of changed lines often takes it in)."""

    _text: Text | None = None

    def show(self, text: Text) -> None:
        """Show ``text``; an unchanged title is not redrawn, and one line needs no layout."""
        if text != self._text:
            self._text = text
            self.update(text, layout=False)
