"""Confirm before signalling: names every target and offers SIGTERM, SIGKILL or SIGINT."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from gputop.core.format import fmt_bytes, safe_text
from gputop.core.host.signals import SIGNALS
from gputop.core.host.visibility import not_visible_words
from gputop.core.output.command_text import command_text
from gputop.core.text_cut import fit_cells, wrap
from gputop.ui.screens.pick import PickScreen
from gputop.ui.widgets.choice_list import ChoiceList
from gputop.ui.widgets.rows import ProcessRow

_SIGNAL_HELP = {
    "SIGTERM": "ask it to exit",
    "SIGKILL": "stop it at once, no clean-up",
    "SIGINT": "interrupt, like Ctrl+C",
}
_MAX_LISTED = 12
# Beside the figures while a line there holds this much of the command; else on lines of its own.
_COMMAND_MIN = 24


def target_line(row: ProcessRow, width: int | None = None) -> Text:
    """One target as the dialog lists it, in ``width`` cells: its whole command, wrapped under itself (on
    lines of its own where the room beside the figures is narrow); every user-controlled string goes
    through safe_text."""
    p = row.process
    line = Text.assemble(
        (f"PID {p.pid:<8}", "bold"),
        (f"{fit_cells(safe_text(p.user) if p.visible else '?', 12)} ", "yellow"),
        "no GPU    " if row.launcher else f"GPU {row.gpu_label:<5}",
        (f"{fmt_bytes(p.gpu_memory):>9}  ", "cyan"),
    )
    if not p.visible:
        line.append(not_visible_words(p.not_visible_reason))
        return line
    command = safe_text(command_text(p.command, p.name))
    if width is None:
        line.append(command)
        return line
    indent = line.cell_len if width - line.cell_len >= _COMMAND_MIN else 2
    lines = wrap(command, max(1, width - indent))
    if indent != line.cell_len:
        line.append("\n" + " " * indent)
    line.append(("\n" + " " * indent).join(lines))
    return line


class TargetList(Static):
    """The targets, each command wrapped to the room the list has: first the room the dialog would have
    (95 % of the screen), then, once laid out, the room it got (less, where the screen scrolls)."""

    def __init__(self, targets: list[ProcessRow], width: int, id: str) -> None:
        super().__init__(id=id)
        self.targets = targets
        self._width = 0
        self._widest = 0  # the widest line of the list as wrapped
        self.fit(width)

    def fit(self, width: int) -> None:
        """Wrap the commands in ``width`` cells."""
        if width == self._width:
            return
        self._width = width
        lines = Text("\n").join(target_line(row, width) for row in self.targets[:_MAX_LISTED])
        count = len(self.targets)
        if count > _MAX_LISTED:
            lines.append(f"\n… and {count - _MAX_LISTED} more", style="italic")
        self._widest = max(line.cell_len for line in lines.split())
        self.update(lines)

    def on_resize(self, event: Resize) -> None:
        if event.size.width < self._widest:  # narrower than its lines: wrapped again in the room it has
            self.fit(event.size.width)


class KillScreen(ModalScreen[int | None]):
    """Returns the chosen signal number, or None when cancelled."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        # The signal list has three entries and no use for them: PgUp and PgDn scroll the targets' commands.
        Binding("pageup", "scroll_targets(-1)", "Scroll the targets up", show=False, priority=True),
        Binding("pagedown", "scroll_targets(1)", "Scroll the targets down", show=False, priority=True),
    ]

    def __init__(self, targets: list[ProcessRow]) -> None:
        super().__init__(id="kill-screen")
        self.targets = targets

    def compose(self) -> ComposeResult:
        count = len(self.targets)
        with Vertical(id="kill-dialog"):
            yield Static(
                Text(f"Send a signal to {count} process{'es' if count != 1 else ''}?", style="bold"),
                id="kill-title",
            )
            with VerticalScroll(id="kill-targets-box"):  # many long commands, wrapped, scroll within it
                # The dialog is at most 95 % of the screen, less its border and padding (gputop.tcss).
                yield TargetList(self.targets, self.app.size.width * 95 // 100 - 4, id="kill-targets")
            stale = sorted({row.gpu_label for row in self.targets if row.process.stale})
            if stale:
                yield Static(
                    Text(
                        f"⚠ Old data: GPU {', '.join(stale)} is not answering; its rows are as last seen"
                        " and the process may have ended since.",
                        style="bold yellow",
                    ),
                    id="kill-stale",
                )
            yield ChoiceList(
                *(
                    Option(Text.assemble((f"{name:<8}", "bold"), f" ({number:>2})  {_SIGNAL_HELP[name]}"), id=name)
                    for name, number in SIGNALS
                ),
                id="kill-signals",
            )
            yield Static(
                Text("Enter sends · Esc cancels · PgUp PgDn scroll the targets · each PID is re-checked by its start"
                     " time first", style="dim"),
                id="kill-hint",
            )
        yield Footer()

    def on_resize(self, event: Resize) -> None:
        self.query_one(TargetList).fit(event.size.width * 95 // 100 - 4)

    def on_mount(self) -> None:
        signals = self.query_one(OptionList)
        signals.highlighted = 0
        signals.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        numbers = dict(SIGNALS)
        self.dismiss(numbers[event.option.id or "SIGTERM"])

    def action_scroll_targets(self, direction: int) -> None:
        box = self.query_one("#kill-targets-box", VerticalScroll)
        box.scroll_to(y=box.scroll_y + direction * max(1, box.scrollable_size.height - 1), animate=False)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LauncherChoiceScreen(PickScreen):
    """k on a launcher (not on a GPU): signal it alone, or it and its workers. Returns the choice."""

    LAUNCHER = "launcher"
    WITH_WORKERS = "with-workers"

    def __init__(self, launcher: ProcessRow, workers: int) -> None:
        p = launcher.process
        name = safe_text(p.name or command_text(p.command, p.name), 24)
        options = [
            Option(Text.assemble(("the launcher", "bold"), f"  PID {p.pid} {name}"), id=self.LAUNCHER),
            Option(
                Text.assemble((f"the launcher and its {workers} worker{'s' if workers != 1 else ''}", "bold")),
                id=self.WITH_WORKERS,
            ),
        ]
        super().__init__(f"PID {p.pid} ({name}) holds no GPU memory. Signal", options, 0, id="launcher-screen")
