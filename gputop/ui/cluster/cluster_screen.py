"""The cluster view's first screen: the fleet in one line, then a line per host, and the keys that act on them.

``ClusterScreen`` composes its widgets and keeps what they show: the newest refresh the app handed it
(``show_refresh``), the sort order, the owner chosen on the owner screen (the filter's text is the filter
bar's, the selected host the list's). Keys are answered from what is already here (sort and filter on the
hosts in memory, the screenful redrawn on the next frame); the screens a key opens (a host, a count's GPUs,
the owners) read what they show through the reader they are given, and so does this screen for an owner's
hosts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Key
from textual.screen import Screen
from textual.widgets import Static

from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.counts import COUNTS
from gputop.core.cluster.model import ClusterHost
from gputop.core.format import safe_text
from gputop.ui.cluster.filter_bar import FilterBar
from gputop.ui.cluster.gpu_list import GpuListScreen
from gputop.ui.cluster.host_list import HostList
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.messages import ClusterFetcher, LookupFailed, OwnerHostsFetched
from gputop.ui.cluster.owner_screen import FleetOwnerScreen
from gputop.ui.cluster.refresh import Refresh
from gputop.ui.cluster.render import SORT_ORDERS, sort_hosts
from gputop.ui.cluster.summary import fleet_line, prometheus_line


def keys_line(*keys: tuple[str, str]) -> Text:
    return Text.assemble(*(part for key, what in keys for part in ((key, "bold"), f" {what}  ")))


KEYS_LINE = keys_line(
    ("Enter", "host"), ("/", "filter"), ("o", "owners"), ("M T P", "sort"), ("< >", "column"), ("I", "invert"),
    ("q", "quit"),
)
FILTER_KEYS_LINE = keys_line(("Enter", "keep the filter"), ("Esc", "clear it"), ("re:", "starts a regex"))


class ClusterScreen(Screen[None]):
    """Many machines' GPUs, a line per host; the app hands it each refresh (``show_refresh``)."""

    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False),  # a filter kept with Enter
        Binding("M", "sort('memory')", "Memory"),
        Binding("T", "sort('temperature')", "Temp"),
        Binding("P", "sort('problems')", "Problems", show=False),
        Binding("less_than_sign", "sort_step(-1)", "Sort <", show=False),
        Binding("greater_than_sign", "sort_step(1)", "Sort >", show=False),
        Binding("I", "invert", "Invert"),
        Binding("o", "owners", "Owners"),
        # Shown on the summary line, next to their counts, rather than in the footer.
        *(Binding(count.key, f"list_gpus('{count.key}')", count.label.capitalize(), show=False) for count in COUNTS),
    ]

    def __init__(self, reader: ClusterFetcher, clock: Callable[[], float], refresh: Refresh) -> None:
        """``reader``: what the screens opened from here read through; ``clock``: what ages are counted against;
        ``refresh``: what the app knows so far (nothing yet but the address it asks)."""
        super().__init__()
        self.reader = reader
        self.clock = clock
        self.latest = refresh  # the newest refresh handed here
        self.sort_index = 0
        self.inverted = False
        # The owner chosen on the owner screen (kind, name) and its hosts: the list shows those alone.
        self.owner_filter: tuple[str, str] | None = None
        self.owner_hosts: frozenset[str] | None = None
        self.owner_error: str | None = None  # why the chosen owner's hosts could not be read
        self.status = Static(id="status")
        self.summary = Static(id="summary")
        self.host_list = HostList(id="hosts")
        self.keys = Static(KEYS_LINE, classes="keys")
        self.filter_bar = FilterBar(id="filter")

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.summary
        yield self.filter_bar
        yield self.host_list
        # A line of keys, not a Footer: a Footer's widget per key is restyled whenever this screen comes back.
        yield self.keys

    def on_mount(self) -> None:
        self.host_list.focus()
        self._show_status()

    # -- what the app hands this screen -----------------------------------------------------

    def show_refresh(self, refresh: Refresh) -> None:
        """A refresh answered (whole, or a part of the first) or failed: the rows, the fleet line, the status."""
        self.latest = refresh
        if refresh.error is not None:
            self.host_list.answering = False
            self.host_list.refresh()
        elif refresh.state is not None:
            self._show_hosts()
            self.summary.update(fleet_line(refresh.state), layout=False)
        self._show_status()

    def tick(self) -> None:
        """Every second: the ages on screen move on."""
        self.host_list.now = self.clock()
        if self.host_list.shows_ages():
            self.host_list.refresh()

    def rows_on_screen(self) -> list[str]:
        """The hostnames of the rows now visible (a refresh reads their memory history)."""
        return self.host_list.on_screen()

    def missing_history(self) -> list[str]:
        """The rows on screen whose memory history is not here yet (scrolled into view since the last refresh)."""
        return [h for h in self.host_list.on_screen() if h not in self.host_list.history]

    def show_history(self, history: Mapping[str, tuple[float | None, ...]]) -> None:
        self.host_list.history = {**self.host_list.history, **history}
        self.host_list.refresh()

    # -- showing ----------------------------------------------------------------------------

    def visible_hosts(self) -> list[ClusterHost]:
        """The hosts listed, filtered and sorted."""
        state = self.latest.state
        if state is None:
            return []
        hosts: list[ClusterHost] = list(state.hosts)
        if self.filter_bar.pattern is not None:
            pattern: re.Pattern[str] = self.filter_bar.pattern
            hosts = [h for h in hosts if pattern.search(h.hostname)]
        if self.owner_hosts is not None:
            hosts = [h for h in hosts if h.hostname in self.owner_hosts]
        return sort_hosts(hosts, SORT_ORDERS[self.sort_index], self.inverted)

    def _show_hosts(self) -> None:
        host_list = self.host_list
        selected = host_list.selected
        state = self.latest.state
        if state is not None:
            host_list.history = state.history
            host_list.now = self.clock()
            host_list.answering = True
            host_list.pending = frozenset(state.pending)
        if state is not None and not state.hosts:
            host_list.empty_message = "No GPU metrics found (looked for gputop_gpu_* and DCGM_FI_DEV_*)"
        host_list.show(self.visible_hosts(), None if selected is None else selected.hostname)

    def _show_status(self) -> None:
        order = SORT_ORDERS[self.sort_index]
        arrow = "↓" if order.descending != self.inverted else "↑"
        line = Text.assemble(("gputop cluster ", "bold"), safe_text(self.latest.url))
        if self.latest.state is not None:
            line.append(f"  {len(self.host_list.hosts)} hosts listed")
        if self.owner_filter is not None:
            kind, name = self.owner_filter
            line.append(f"  {kind} {safe_text(name, 40)}'s hosts (Esc: all)", style="bold")
        elif self.owner_error is not None:
            line.append(f"  {self.owner_error}", style="bold red")
        line.append(f"  sort: {order.name} {arrow}")
        line.append("\n")
        line.append_text(prometheus_line(self.latest))
        # A fixed height: updating the line repaints it alone, not the whole screen.
        self.status.update(line, layout=False)

    def _resort(self) -> None:
        self._show_hosts()
        self._show_status()

    # -- sorting and filtering ----------------------------------------------------------------

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

    def action_filter(self) -> None:
        self.filter_bar.start()
        self.host_list.typing_into = self._filter_key
        self.keys.update(FILTER_KEYS_LINE, layout=False)

    def action_clear_filter(self) -> None:
        if self.filter_bar.text or self.owner_filter is not None:
            self.filter_bar.clear()
            self.owner_filter, self.owner_hosts = None, None
            self._resort()
        elif self.owner_error is not None:
            self.owner_error = None
            self._show_status()

    def _filter_key(self, event: Key) -> bool:
        taken, changed = self.filter_bar.take(event)
        if not self.filter_bar.typing:
            self.host_list.typing_into = None
            self.keys.update(KEYS_LINE, layout=False)
        if changed:
            self._resort()
        elif taken:
            self._show_status()
        return taken

    # -- the screens opened from here -----------------------------------------------------------

    @on(HostList.Opened)
    def _host_opened(self, message: HostList.Opened) -> None:
        self.open_host(message.hostname)

    def open_host(self, hostname: str) -> None:
        """The host's screen, its GPUs and processes read at once."""
        self.app.push_screen(HostScreen(hostname, self.reader, self.clock, self.latest))

    def action_list_gpus(self, key: str) -> None:
        """The GPUs behind one count of the summary line; Enter there opens a GPU's host."""
        count = next(c for c in COUNTS if c.key == key)
        self.app.push_screen(GpuListScreen(count, self.reader, self.latest), self._gpu_chosen)

    def _gpu_chosen(self, hostname: str | None) -> None:
        if hostname is not None:
            self.open_host(hostname)

    # The fleet's owners (o): the owner screen reads them; Enter there lists the chosen owner's hosts alone.

    def action_owners(self) -> None:
        self.app.push_screen(FleetOwnerScreen(self.reader, self.latest, self._owner_chosen))

    def _owner_chosen(self, kind: str, name: str) -> None:
        self.owner_filter, self.owner_hosts, self.owner_error = (kind, name), None, None
        self._fetch_owner_hosts(kind, name)

    @work(thread=True, exit_on_error=False, group="owners")
    def _fetch_owner_hosts(self, kind: str, name: str) -> None:
        try:
            hostnames = self.reader.owner_hosts(kind, name)
        except PrometheusError as error:
            self.post_message(LookupFailed(f"{kind} {name}'s hosts: {error}", error.kind))
        except Exception as error:  # noqa: BLE001 - told on the status line; the view keeps running
            self.post_message(LookupFailed(f"{kind} {name}'s hosts: {type(error).__name__}: {error}", "refused"))
        else:
            self.post_message(OwnerHostsFetched(kind, name, hostnames))

    def on_owner_hosts_fetched(self, message: OwnerHostsFetched) -> None:
        if self.owner_filter == (message.kind, message.name):
            self.owner_hosts = message.hostnames
            self._resort()

    def on_lookup_failed(self, message: LookupFailed) -> None:
        if self.owner_filter is not None and self.owner_hosts is None:
            # An owner's hosts could not be read: every host stays listed, and the status line says why.
            self.owner_filter, self.owner_error = None, safe_text(message.reason, 100)
            self._show_status()
