"""One process's whole environment (`e` on the process screen): every variable, sorted by name.

Read afresh when it opens and with `r` (through the sampler: /proc/PID/environ, or what a simulated
source says). Values whose names say they are likely secrets are masked until `v`; `/` filters by
name or value (a masked value is not searched, so a filter cannot probe a secret).
"""

from __future__ import annotations

from collections.abc import Callable

from rich.table import Table
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from gputop.core.format import safe_text
from gputop.core.host.procdetail import ProcessDetail, is_secret, masked, variable_name
from gputop.core.model import ProcessIdentity

# What the screen reads a process with: the sampler's process_detail (the source, or /proc).
DetailReader = Callable[[ProcessIdentity], ProcessDetail]


def shown_variables(variables: tuple[str, ...], query: str, revealed: bool) -> list[str]:
    """The ``NAME=value`` lines to show: masked unless ``revealed``, those matching ``query`` (any case)."""
    needle = query.casefold()
    shown = [variable if revealed else masked(variable) for variable in variables]
    return [variable for variable in shown if needle in variable.casefold()]


# A name longer than this wraps rather than squeezing every value.
_NAME_WIDTH_MAX = 40


def unreadable_text(reason: str | None) -> str:
    """``environment not readable (owned by bob; ...)``, ``environment not readable: the process has exited``."""
    reason = safe_text(reason or "not readable")
    return f"environment {reason}" if reason.startswith("not readable") else f"environment not readable: {reason}"


def variables_table(variables: list[str], name_width: int) -> Table:
    """Name and value side by side, the names ``name_width`` wide (the same whatever the filter leaves);
    a long value (PATH) wraps, never cut."""
    width = min(name_width, _NAME_WIDTH_MAX)
    table = Table.grid(padding=(0, 1))
    table.add_column(style="bold cyan", overflow="fold", min_width=width, max_width=width)
    table.add_column(overflow="fold")
    for variable in variables:
        name, _equals, value = variable.partition("=")
        table.add_row(safe_text(name), Text(safe_text(value)))
    return table


class EnvironmentScreen(ModalScreen[None]):
    """Every variable of one process's environment; Esc goes back to its process screen.

    Modal, so that the main screen's keys (k, space...) do not reach past it to the process panel.
    """

    DEFAULT_CSS = """
    EnvironmentScreen { background: $background; }
    EnvironmentScreen #environment-title { height: 1; background: $boost; }
    EnvironmentScreen #environment-filter { display: none; height: 3; }
    EnvironmentScreen #environment-filter.shown { display: block; }
    EnvironmentScreen #environment-list { height: 1fr; padding: 0 1; }
    """

    BINDINGS = [
        Binding("escape,q,backspace,e", "back", "Back", key_display="Esc"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("v", "reveal", "Show secrets", key_display="v"),
        Binding("v", "conceal", "Hide secrets", key_display="v"),
        Binding("r", "reload", "Read again", key_display="r"),
    ]

    def __init__(
        self, identity: ProcessIdentity, name: str | None, read: DetailReader, unseen: str | None = None
    ) -> None:
        """``unseen``: why the process cannot be seen from here at all (its panel words); nothing is read."""
        super().__init__(id="environment-screen")
        self.identity = identity
        self.process_name = name
        self.read = read
        self.unseen = unseen
        self.detail: ProcessDetail | None = None
        self.revealed = False
        self.query_text = ""

    def compose(self) -> ComposeResult:
        yield Static(id="environment-title")
        yield Input(placeholder="filter: part of a name or value (Enter keeps it, Esc clears it)",
                    id="environment-filter")
        with VerticalScroll(id="environment-list"):
            yield Static(id="environment-variables")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#environment-list").focus()
        self.action_reload()

    @work(thread=True, exclusive=True, group="environment")
    def _read(self) -> None:
        detail = self.read(self.identity)
        self.app.call_from_thread(self._show_detail, detail)

    def _show_detail(self, detail: ProcessDetail) -> None:
        self.detail = detail
        self._show()

    def _show(self) -> None:
        title = Text.assemble((f" PID {self.identity[0]} ", "bold reverse"), " environment")
        if self.process_name:
            title.append(f"  {safe_text(self.process_name, 40)}", style="bold")
        body: Text | Table
        detail = self.detail
        if self.unseen is not None:
            body = Text(f"environment not readable {self.unseen}", style="italic yellow")
        elif detail is None:
            body = Text("reading /proc…", style="italic")
        elif detail.gone is not None:
            body = Text(safe_text(detail.gone), style="italic yellow")
        elif detail.environment.value is None:
            body = Text(unreadable_text(detail.environment.reason), style="italic yellow")
        else:
            variables = detail.environment.value
            shown = shown_variables(variables, self.query_text, self.revealed)
            title.append(f"  {len(variables)} variables")
            if self.query_text:
                title.append(f", {len(shown)} shown")
            secrets = sum(1 for variable in variables if is_secret(variable_name(variable)))
            if secrets:
                plural = "s" if secrets != 1 else ""
                title.append(f"  {secrets} secret{plural} {'shown' if self.revealed else 'masked'}", style="yellow")
            if not variables:
                body = Text("the environment is empty", style="italic")
            elif not shown:
                body = Text(f"no variable matches “{safe_text(self.query_text)}”", style="italic")
            else:
                body = variables_table(shown, max(len(variable_name(variable)) for variable in variables))
        self.query_one("#environment-title", Static).update(title)
        self.query_one("#environment-variables", Static).update(body)

    # -- actions ---------------------------------------------------------------------

    def action_reload(self) -> None:
        """Read the environment again (the process may have exited meanwhile)."""
        self.detail = None
        self._show()
        if self.unseen is None:
            self._read()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # The footer offers what v does now: show the secrets, or hide them again.
        if action == "reveal":
            return not self.revealed
        if action == "conceal":
            return self.revealed
        return True

    def action_reveal(self) -> None:
        self._reveal(True)

    def action_conceal(self) -> None:
        self._reveal(False)

    def _reveal(self, revealed: bool) -> None:
        self.revealed = revealed
        self.refresh_bindings()
        self._show()

    def action_filter(self) -> None:
        box = self.query_one("#environment-filter", Input)
        box.add_class("shown")
        box.focus()

    @on(Input.Changed, "#environment-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self._show()

    @on(Input.Submitted, "#environment-filter")
    def _filter_kept(self) -> None:
        self.query_one("#environment-list").focus()

    def action_back(self) -> None:
        box = self.query_one("#environment-filter", Input)
        if box.has_focus:  # Esc in the filter clears it, and stays
            box.value = ""
            box.remove_class("shown")
            self.query_one("#environment-list").focus()
            return
        self.dismiss(None)
