"""The cluster view: a row per host with a line per GPU; Enter opens a host's GPUs and processes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Input, Static

from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.model import ClusterHost, ClusterOptions, ClusterState
from gputop.core.cluster.reader import ClusterReader
from gputop.core.format import safe_text
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.render import HOST_COLUMNS, SORT_ORDERS, host_cells, parse_filter, sort_hosts


class ClusterFetcher(Protocol):
    """What the app reads the cluster through (a ClusterReader; a fake in tests)."""

    def fetch(self, processes_for: str | None = None) -> ClusterState: ...


@dataclass
class Fetched(Message):
    """One refresh arrived from the worker thread."""

    state: ClusterState


@dataclass
class FetchFailed(Message):
    """Prometheus could not be read; ``unreachable`` when it did not answer at all."""

    reason: str
    unreachable: bool


class ClusterApp(App[int]):
    """Many machines' GPUs, from Prometheus."""

    CSS_PATH = "cluster.tcss"
    TITLE = "gputop cluster"

    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("M", "sort('memory')", "Memory"),
        Binding("T", "sort('temperature')", "Temp"),
        Binding("less_than_sign", "sort_step(-1)", "Sort <"),
        Binding("greater_than_sign", "sort_step(1)", "Sort >"),
        Binding("I", "invert", "Invert"),
        Binding("enter", "open_host", "Host", show=True),
    ]

    def __init__(self, options: ClusterOptions, reader: ClusterFetcher | None = None) -> None:
        super().__init__()
        self.options = options
        self.reader: ClusterFetcher = reader or ClusterReader(options)
        self.state: ClusterState | None = None
        self.error: str | None = None
        self.sort_index = 0
        self.inverted = False
        self.host_filter: re.Pattern[str] | None = None
        self.filter_text = ""
        self._shown_keys: list[tuple[str, int]] = []
        self._timer: Timer | None = None
        self._fetching = False
        self._fetch_again = False

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Input(placeholder="filter hostnames: text, or re:REGEX", id="filter")
        yield Static(id="filter-error")
        table: DataTable[Text] = DataTable(id="hosts", cursor_type="row", zebra_stripes=True)
        yield table
        yield Footer()

    def on_mount(self) -> None:
        table = self.hosts_table
        for column in HOST_COLUMNS:
            table.add_column(column, key=column)
        table.focus()
        self._show_status()
        self.refresh_now()

    @property
    def hosts_table(self) -> DataTable[Text]:
        return self.query_one("#hosts", DataTable)

    # Fetching: one worker at a time; the next is armed when the last one is done, so a slow
    # Prometheus never piles requests up.

    def refresh_now(self) -> None:
        """Fetch at once (or as soon as the fetch in flight is done)."""
        if self._fetching:
            self._fetch_again = True
            return
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._fetching = True
        self._fetch(self._detail_host())

    @work(thread=True, exit_on_error=False)
    def _fetch(self, processes_for: str | None) -> None:
        try:
            state = self.reader.fetch(processes_for)
        except PrometheusError as error:
            self.post_message(FetchFailed(str(error), error.unreachable))
        except Exception as error:  # noqa: BLE001 - shown in the UI; the view keeps retrying
            self.post_message(FetchFailed(f"{type(error).__name__}: {error}", False))
        else:
            self.post_message(Fetched(state))

    def _fetch_done(self) -> None:
        self._fetching = False
        if self._fetch_again:
            self._fetch_again = False
            self.refresh_now()
        else:
            self._timer = self.set_timer(self.options.interval_s, self.refresh_now)

    def on_fetched(self, message: Fetched) -> None:
        self.state = message.state
        self.error = None
        self._show_hosts()
        self._show_status()
        if isinstance(screen := self._top_screen(), HostScreen):
            screen.show(message.state)
        self._fetch_done()

    def on_fetch_failed(self, message: FetchFailed) -> None:
        reason = safe_text(message.reason, 300)
        if message.unreachable:
            self.error = f"Prometheus unreachable at {safe_text(self.options.url)}: {reason} — retrying"
        else:
            self.error = f"Prometheus at {safe_text(self.options.url)} refused a query: {reason} — retrying"
        self._show_status()
        if isinstance(screen := self._top_screen(), HostScreen):
            screen.show_error(self.error)
        self._fetch_done()

    def _top_screen(self) -> Screen[object] | None:
        # While the app shuts down a late fetch may land with no screen left.
        return self.screen_stack[-1] if self.screen_stack else None

    def _detail_host(self) -> str | None:
        screen = self._top_screen()
        return screen.hostname if isinstance(screen, HostScreen) else None

    # Showing.

    def visible_hosts(self) -> list[ClusterHost]:
        """The hosts on screen, filtered and sorted."""
        if self.state is None:
            return []
        hosts = list(self.state.hosts)
        if self.host_filter is not None:
            pattern = self.host_filter
            hosts = [h for h in hosts if pattern.search(h.hostname)]
        return sort_hosts(hosts, SORT_ORDERS[self.sort_index], self.inverted)

    def _show_hosts(self) -> None:
        table = self.hosts_table
        hosts = self.visible_hosts()
        keys = [(h.hostname, max(1, len(h.gpus))) for h in hosts]
        if keys == self._shown_keys:
            # Same rows in the same order: update the cells in place, the cursor stays put.
            for host in hosts:
                for column, cell in zip(HOST_COLUMNS, host_cells(host), strict=True):
                    table.update_cell(host.hostname, column, cell, update_width=True)
            return
        selected = self.selected_hostname()
        table.clear()
        for host in hosts:
            table.add_row(*host_cells(host), key=host.hostname, height=max(1, len(host.gpus)))
        self._shown_keys = keys
        if selected is not None and any(h.hostname == selected for h in hosts):
            table.move_cursor(row=table.get_row_index(selected))

    def _show_status(self) -> None:
        status = self.query_one("#status", Static)
        order = SORT_ORDERS[self.sort_index]
        arrow = "↓" if order.descending != self.inverted else "↑"
        line = Text.assemble(("gputop cluster ", "bold"), safe_text(self.options.url))
        if self.state is not None:
            hosts = self.visible_hosts()
            gpus = sum(len(h.gpus) for h in hosts)
            stale = sum(1 for h in hosts if h.stale)
            line.append(f"  {len(hosts)} hosts, {gpus} GPUs")
            if stale:
                line.append(f", {stale} stale", style="bold red")
            line.append(" ")
        line.append(f" sort: {order.name} {arrow}")
        if self.filter_text:
            line.append(f"  filter: {safe_text(self.filter_text, 40)}")
        if self.error is not None:
            line.append("\n")
            line.append(self.error, style="bold white on red")
        elif self.state is not None and not self.state.hosts:
            line.append("\n")
            line.append("No GPU metrics found (looked for gputop_gpu_* and DCGM_FI_DEV_*)", style="yellow")
        status.update(line)

    # Actions.

    def action_sort(self, name: str) -> None:
        self.sort_index = next(i for i, order in enumerate(SORT_ORDERS) if order.name == name)
        self.inverted = False
        self._resort()

    def action_sort_step(self, step: int) -> None:
        self.sort_index = (self.sort_index + step) % len(SORT_ORDERS)
        self.inverted = False
        self._resort()

    def action_invert(self) -> None:
        self.inverted = not self.inverted
        self._resort()

    def _resort(self) -> None:
        self._show_hosts()
        self._show_status()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.display = True
        box.focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.value = ""
        box.display = False
        self._set_filter_error(None)
        self.host_filter = None
        self.filter_text = ""
        self.hosts_table.focus()
        self._resort()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        try:
            pattern = parse_filter(event.value)
        except re.error as error:
            # Keep the last good filter while the regex is being typed.
            self._set_filter_error(f"invalid regex: {error}")
            return
        self._set_filter_error(None)
        self.host_filter = pattern
        self.filter_text = event.value
        self._resort()

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.hosts_table.focus()

    def _set_filter_error(self, message: str | None) -> None:
        error = self.query_one("#filter-error", Static)
        error.display = message is not None
        error.update(Text(message or "", style="bold red"))

    def selected_hostname(self) -> str | None:
        table = self.hosts_table
        if table.row_count == 0:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return None if row_key.value is None else str(row_key.value)

    @on(DataTable.RowSelected, "#hosts")
    def _row_selected(self) -> None:
        self.action_open_host()

    def action_open_host(self) -> None:
        hostname = self.selected_hostname()
        if hostname is None or isinstance(self.screen, HostScreen):
            return
        screen = HostScreen(hostname)
        self.push_screen(screen)
        if self.state is not None:
            screen.show(self.state)
        self.refresh_now()


def run_cluster(options: ClusterOptions) -> int:
    """Run the cluster view until the user quits; the exit status."""
    ClusterApp(options).run()
    return 0
