"""The cluster view: the fleet in one line, then a line per host; Enter opens a host's GPUs and processes.

Keys are answered from what is already here (sort and filter on the hosts in memory, the
screenful redrawn on the next frame); only Enter and a count's key ask Prometheus.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.events import Key
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static

from gputop.core.cluster.client import ErrorKind, PrometheusError
from gputop.core.cluster.counts import COUNTS
from gputop.core.cluster.first import FirstRefresh
from gputop.core.cluster.model import ClusterHost, ClusterOptions, ClusterState
from gputop.core.cluster.pacing import Pacer
from gputop.core.cluster.reader import ClusterReader
from gputop.core.format import safe_text
from gputop.ui.cluster.filter_bar import FilterBar
from gputop.ui.cluster.gpu_list import GpuListScreen
from gputop.ui.cluster.host_list import HostList
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.messages import (
    ClusterFetcher,
    DetailFetched,
    Fetched,
    FetchFailed,
    GpusFetched,
    HistoryFetched,
    LookupFailed,
    OwnerHostsFetched,
    OwnersFetched,
    PartFetched,
)
from gputop.ui.cluster.owner_screen import FleetOwnerScreen
from gputop.ui.cluster.render import SORT_ORDERS, sort_hosts
from gputop.ui.cluster.summary import fleet_line, prometheus_line
from gputop.ui.terminal.plain_terminal import PlainTerminalApp


def keys_line(*keys: tuple[str, str]) -> Text:
    return Text.assemble(*(part for key, what in keys for part in ((key, "bold"), f" {what}  ")))


KEYS_LINE = keys_line(
    ("Enter", "host"), ("/", "filter"), ("o", "owners"), ("M T P", "sort"), ("< >", "column"), ("I", "invert"),
    ("q", "quit"),
)
FILTER_KEYS_LINE = keys_line(("Enter", "keep the filter"), ("Esc", "clear it"), ("re:", "starts a regex"))


class ClusterApp(PlainTerminalApp[int]):
    """Many machines' GPUs, from Prometheus."""

    CSS_PATH = "cluster.tcss"
    TITLE = "gputop cluster"

    BINDINGS = [
        Binding("q", "quit", "Quit"),
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

    def __init__(
        self,
        options: ClusterOptions,
        reader: ClusterFetcher | None = None,
        clock: Callable[[], float] = time.time,
        first: FirstRefresh | None = None,
    ) -> None:
        """``first``: the first refresh, already asked (by ``run_cluster``, before Textual was loaded)."""
        super().__init__()
        self.options = options
        self.clock = clock  # what the ages of figures are counted against
        self.reader: ClusterFetcher = reader or ClusterReader(options)
        self.state: ClusterState | None = None
        self.error: tuple[str, ErrorKind] | None = None
        self.sort_index = 0
        self.inverted = False
        self.pacer = Pacer(options.interval_s, options.timeout_s)
        self.next_delay_s = options.interval_s
        self._timer: Timer | None = None
        self._first = first
        self._fetching = False
        self._fetch_again = False
        self._history_wanted = False
        # Held, not looked up: a worker's answer may land while another screen is on top, or at exit.
        self._status = Static(id="status")
        self._summary = Static(id="summary")
        self._hosts = HostList(id="hosts")
        self._keys = Static(KEYS_LINE, classes="keys")
        self._filter = FilterBar(id="filter")
        # The owner chosen on the owner screen (kind, name) and its hosts: the list shows those alone.
        self.owner_filter: tuple[str, str] | None = None
        self.owner_hosts: frozenset[str] | None = None
        self.owner_error: str | None = None  # why the chosen owner's hosts could not be read
        self._owners_asked: str | None = None  # the kind of the owners' read in flight: one at a time

    def compose(self) -> ComposeResult:
        yield self._status
        yield self._summary
        yield self._filter
        yield self._hosts
        # A line of keys, not a Footer: a Footer's widget per key is restyled whenever this screen comes back.
        yield self._keys

    def on_mount(self) -> None:
        self.host_list.focus()
        self._show_status()
        self.set_interval(1.0, self._tick)
        self.refresh_now()

    @property
    def host_list(self) -> HostList:
        return self._hosts

    # Fetching: one refresh at a time; the next is armed when the last one is done, and later
    # when Prometheus is slow or failing, so it is never piled on.

    def refresh_now(self) -> None:
        """Fetch at once (or as soon as the fetch in flight is done)."""
        if self._fetching:
            self._fetch_again = True
            return
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self._fetching = True
        first, self._first = self._first, None
        self._fetch(self.host_list.on_screen(), self._detail_host(), self.pacer.timeout_s, first)

    @work(thread=True, exit_on_error=False, group="fetch")
    def _fetch(
        self, history_for: list[str], detail_for: str | None, timeout_s: float, first: FirstRefresh | None
    ) -> None:
        def show_part(state: ClusterState) -> None:
            self.post_message(PartFetched(state))

        # Until the first refresh is in, each of its parts is shown as it comes.
        partial = show_part if self.state is None else None
        try:
            if first is not None and partial is not None:
                state = first.result(partial)
            else:
                state = self.reader.fetch(history_for, detail_for, timeout_s, partial)
        except PrometheusError as error:
            self.post_message(FetchFailed(str(error), error.kind))
        except Exception as error:  # noqa: BLE001 - shown in the UI; the view keeps retrying
            self.post_message(FetchFailed(f"{type(error).__name__}: {error}", "refused"))
        else:
            self.post_message(Fetched(state))

    def _fetch_done(self, delay_s: float) -> None:
        self._fetching = False
        self.next_delay_s = delay_s
        if self._fetch_again:
            self._fetch_again = False
            self.refresh_now()
        else:
            self._timer = self.set_timer(delay_s, self.refresh_now)

    def on_fetched(self, message: Fetched) -> None:
        self.state = message.state
        self.error = None
        delay = self.pacer.answered(message.state.duration_s)
        self._show_hosts()
        self.call_after_refresh(self._fill_history)
        detail = message.state.detail
        screen = self._top_screen()
        if isinstance(screen, HostScreen) and detail is not None and detail.hostname == screen.hostname:
            screen.show(detail, message.state.host(screen.hostname), self.clock())
        self._fetch_done(delay)
        self._show_status()
        self._summary.update(fleet_line(message.state), layout=False)
        if isinstance(screen, FleetOwnerScreen):
            self._ask_owners(screen.kind)  # the owners follow the refresh: one more query while shown

    def on_part_fetched(self, message: PartFetched) -> None:
        if self.state is not None and not self.state.pending:
            return  # the whole refresh overtook its part
        self.state = message.state
        self._show_hosts()
        self._show_status()
        self._summary.update(fleet_line(message.state), layout=False)

    def on_fetch_failed(self, message: FetchFailed) -> None:
        self.error = (safe_text(message.reason, 300), message.kind)
        self._fetch_done(self.pacer.failed(message.kind == "slow"))
        self._show_status()
        self.host_list.answering = False
        self.host_list.refresh()
        if isinstance(screen := self._top_screen(), HostScreen):
            screen.show_error(prometheus_line(self.options.url, self.pacer, self.error, self.next_delay_s))

    def _top_screen(self) -> Screen[object] | None:
        # While the app shuts down a late fetch may land with no screen left.
        return self.screen_stack[-1] if self.screen_stack else None

    def _detail_host(self) -> str | None:
        screen = self._top_screen()
        return screen.hostname if isinstance(screen, HostScreen) else None

    def _tick(self) -> None:
        """Every second: ages move on, and rows scrolled into view get their history."""
        host_list = self.host_list
        host_list.now = self.clock()
        if host_list.shows_ages():
            host_list.refresh()
        self._fill_history()

    def _fill_history(self) -> None:
        if self.state is None or self._history_wanted:
            return
        missing = [h for h in self.host_list.on_screen() if h not in self.host_list.history]
        if missing and not self._fetching:
            self._history_wanted = True
            self._fetch_history(missing)

    @work(thread=True, exit_on_error=False, group="history")
    def _fetch_history(self, hostnames: list[str]) -> None:
        try:
            history = self.reader.history(hostnames)
        except Exception:  # noqa: BLE001 - the next refresh brings it, or reports why not
            history = {}
        self.post_message(HistoryFetched(history))

    def on_history_fetched(self, message: HistoryFetched) -> None:
        self._history_wanted = False
        self.host_list.history = {**self.host_list.history, **message.history}
        self.host_list.refresh()

    # Showing.

    def visible_hosts(self) -> list[ClusterHost]:
        """The hosts listed, filtered and sorted."""
        if self.state is None:
            return []
        hosts: list[ClusterHost] = list(self.state.hosts)
        if self.host_filter is not None:
            pattern = self.host_filter
            hosts = [h for h in hosts if pattern.search(h.hostname)]
        if self.owner_hosts is not None:
            hosts = [h for h in hosts if h.hostname in self.owner_hosts]
        return sort_hosts(hosts, SORT_ORDERS[self.sort_index], self.inverted)

    def _show_hosts(self) -> None:
        host_list = self.host_list
        selected = host_list.selected
        if self.state is not None:
            host_list.history = self.state.history
            host_list.now = self.clock()
            host_list.answering = True
            host_list.pending = frozenset(self.state.pending)
        if self.state is not None and not self.state.hosts:
            host_list.empty_message = "No GPU metrics found (looked for gputop_gpu_* and DCGM_FI_DEV_*)"
        host_list.show(self.visible_hosts(), None if selected is None else selected.hostname)

    def _show_status(self) -> None:
        order = SORT_ORDERS[self.sort_index]
        arrow = "↓" if order.descending != self.inverted else "↑"
        line = Text.assemble(("gputop cluster ", "bold"), safe_text(self.options.url))
        if self.state is not None:
            line.append(f"  {len(self.host_list.hosts)} hosts listed")
        if self.owner_filter is not None:
            kind, name = self.owner_filter
            line.append(f"  {kind} {safe_text(name, 40)}'s hosts (Esc: all)", style="bold")
        elif self.owner_error is not None:
            line.append(f"  {self.owner_error}", style="bold red")
        line.append(f"  sort: {order.name} {arrow}")
        line.append("\n")
        line.append_text(prometheus_line(self.options.url, self.pacer, self.error, self.next_delay_s))
        # A fixed height: updating the line repaints it alone, not the whole screen.
        self._status.update(line, layout=False)

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

    @property
    def host_filter(self) -> re.Pattern[str] | None:
        return self._filter.pattern

    @property
    def filter_text(self) -> str:
        return self._filter.text

    def action_filter(self) -> None:
        self._filter.start()
        self.host_list.typing_into = self._filter_key
        self._keys.update(FILTER_KEYS_LINE, layout=False)

    def action_clear_filter(self) -> None:
        if self._filter.text or self.owner_filter is not None:
            self._filter.clear()
            self.owner_filter, self.owner_hosts = None, None
            self._resort()
        elif self.owner_error is not None:
            self.owner_error = None
            self._show_status()

    # The fleet's owners (o): read when the screen opens, at each refresh while it shows, and on o.

    def action_owners(self) -> None:
        if isinstance(self.screen, FleetOwnerScreen):
            return
        self.push_screen(FleetOwnerScreen(self._ask_owners, self._owner_chosen))

    def _ask_owners(self, kind: str) -> None:
        """Read the owners by ``kind``, unless a read of that kind is still out (a slow Prometheus is not piled on)."""
        if self._owners_asked != kind:
            self._owners_asked = kind
            self._fetch_owners(kind)

    @work(thread=True, exit_on_error=False, group="owners")
    def _fetch_owners(self, kind: str) -> None:
        hosts = () if self.state is None else self.state.hosts
        try:
            owners = self.reader.owners(kind, hosts)
        except PrometheusError as error:
            self._owners_asked = None
            self.post_message(LookupFailed(str(error), error.kind))
        except Exception as error:  # noqa: BLE001 - shown on the screen; the next refresh asks again
            self._owners_asked = None
            self.post_message(LookupFailed(f"{type(error).__name__}: {error}", "refused"))
        else:
            self._owners_asked = None  # before the answer is posted: a refresh after it may ask again
            self.post_message(OwnersFetched(kind, owners))

    def on_owners_fetched(self, message: OwnersFetched) -> None:
        screen = self._top_screen()
        if isinstance(screen, FleetOwnerScreen):
            screen.show(message.kind, message.owners)

    def _owner_chosen(self, kind: str, name: str) -> None:
        self.owner_filter, self.owner_hosts, self.owner_error = (kind, name), None, None
        self._fetch_owner_hosts(kind, name)

    @work(thread=True, exit_on_error=False, group="owners")
    def _fetch_owner_hosts(self, kind: str, name: str) -> None:
        try:
            hostnames = self.reader.owner_hosts(kind, name)
        except PrometheusError as error:
            self.post_message(LookupFailed(f"{kind} {name}'s hosts: {error}", error.kind))
        except Exception as error:  # noqa: BLE001 - told in a notification; the view keeps running
            self.post_message(LookupFailed(f"{kind} {name}'s hosts: {type(error).__name__}: {error}", "refused"))
        else:
            self.post_message(OwnerHostsFetched(kind, name, hostnames))

    def on_owner_hosts_fetched(self, message: OwnerHostsFetched) -> None:
        if self.owner_filter == (message.kind, message.name):
            self.owner_hosts = message.hostnames
            self._resort()

    def _filter_key(self, event: Key) -> bool:
        taken, changed = self._filter.take(event)
        if not self._filter.typing:
            self.host_list.typing_into = None
            self._keys.update(KEYS_LINE, layout=False)
        if changed:
            self._resort()
        elif taken:
            self._show_status()
        return taken

    @on(HostList.Opened)
    def _host_opened(self, message: HostList.Opened) -> None:
        self.open_host(message.hostname)

    def open_host(self, hostname: str) -> None:
        """The host's screen, its GPUs and processes read at once."""
        if isinstance(self.screen, HostScreen):
            return
        self.push_screen(HostScreen(hostname))
        self._fetch_detail(hostname)

    @work(thread=True, exit_on_error=False, group="detail")
    def _fetch_detail(self, hostname: str) -> None:
        try:
            detail = self.reader.detail(hostname)
        except PrometheusError as error:
            self.post_message(LookupFailed(str(error), error.kind))
        else:
            self.post_message(DetailFetched(detail))

    def on_detail_fetched(self, message: DetailFetched) -> None:
        screen = self._top_screen()
        if isinstance(screen, HostScreen) and screen.hostname == message.detail.hostname:
            host = self.state.host(screen.hostname) if self.state is not None else None
            screen.show(message.detail, host, self.clock())

    def action_list_gpus(self, key: str) -> None:
        """The GPUs behind one count of the summary line."""
        count = next(c for c in COUNTS if c.key == key)
        screen = GpuListScreen(count)
        self.push_screen(screen)
        state = self.state
        # While the first refresh is still coming in, whether any exporter serves it is not known yet: ask.
        known = state is not None and (
            f"count:{key}" in state.pending or any(v.key == key and v.value is not None for v in state.counts)
        )
        if known:
            self._fetch_gpus(key)
        else:
            screen.show_error(Text(f"GPUs {count.label}: N/A — no exporter serves {' or '.join(count.requires)}"))

    @work(thread=True, exit_on_error=False, group="gpus")
    def _fetch_gpus(self, key: str) -> None:
        try:
            gpus = self.reader.gpus(key)
        except PrometheusError as error:
            self.post_message(LookupFailed(str(error), error.kind))
        else:
            self.post_message(GpusFetched(key, gpus))

    def on_lookup_failed(self, message: LookupFailed) -> None:
        screen = self._top_screen()
        if isinstance(screen, FleetOwnerScreen):
            screen.show_error(safe_text(message.reason, 200))
        elif self.owner_filter is not None and self.owner_hosts is None:
            # An owner's hosts could not be read: every host stays listed, and the status line says why.
            self.owner_filter, self.owner_error = None, safe_text(message.reason, 100)
            self._show_status()
        elif isinstance(screen, (HostScreen, GpuListScreen)):
            line = prometheus_line(self.options.url, self.pacer, (message.reason, message.kind), self.next_delay_s)
            screen.show_error(line)

    def on_gpus_fetched(self, message: GpusFetched) -> None:
        screen = self._top_screen()
        if isinstance(screen, GpuListScreen) and screen.count.key == message.key:
            screen.show(message.gpus)


