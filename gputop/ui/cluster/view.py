"""The cluster view's app: it reads Prometheus on its clock and hands each refresh to the screens that show it.

``ClusterApp`` is the composition root: it makes the first screen (``cluster_screen.ClusterScreen``, which
composes the host list and owns the keys that act on it), reads a refresh at a time (and the memory history
of rows scrolled into view), and hands each answer or failure, as one ``Refresh``, to every screen open that
shows the fleet (``show_refresh``). Its only key is the one that works everywhere: ``q``. The screens a key
opens read what they alone show (a host's detail, a count's GPUs, the owners) through the same reader.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual import work
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from gputop.core.cluster.client import ErrorKind, PrometheusError
from gputop.core.cluster.first import FirstRefresh
from gputop.core.cluster.model import ClusterOptions, ClusterState
from gputop.core.cluster.pacing import Pacer
from gputop.core.cluster.reader import ClusterReader
from gputop.core.format import safe_text
from gputop.ui.cluster.cluster_screen import ClusterScreen
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.messages import ClusterFetcher, Fetched, FetchFailed, HistoryFetched, PartFetched
from gputop.ui.cluster.refresh import Refresh, ShowsRefreshes
from gputop.ui.terminal.plain_terminal import PlainTerminalApp


class ClusterApp(PlainTerminalApp[int]):
    """Many machines' GPUs, from Prometheus."""

    CSS_PATH = "cluster.tcss"
    TITLE = "gputop cluster"

    # Ctrl+Z as in the main view: the terminal back to the shell until fg.
    BINDINGS = [Binding("q", "quit", "Quit"), Binding("ctrl+z", "suspend_process", "Suspend", show=False)]

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
        self.state: ClusterState | None = None  # the newest refresh (or part of the first)
        self.error: tuple[str, ErrorKind] | None = None
        self.pacer = Pacer(options.interval_s, options.timeout_s)
        self.next_delay_s = options.interval_s
        self._timer: Timer | None = None
        self._first = first
        self._fetching = False
        self._fetch_again = False
        self._history_wanted = False
        self.fleet = ClusterScreen(self.reader, clock, self._refresh())

    def get_default_screen(self) -> Screen[None]:
        return self.fleet

    def on_mount(self) -> None:
        self.set_interval(1.0, self._tick)
        self.refresh_now()

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
        self._fetch(self.fleet.rows_on_screen(), self._detail_host(), self.pacer.timeout_s, first)

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
        """The refresh in flight answered or failed: every screen open is shown it, and the next one is armed."""
        self._fetching = False
        self.next_delay_s = delay_s
        self._hand(self._refresh())
        if self._fetch_again:
            self._fetch_again = False
            self.refresh_now()
        else:
            self._timer = self.set_timer(delay_s, self.refresh_now)

    def on_fetched(self, message: Fetched) -> None:
        self.state = message.state
        self.error = None
        self._fetch_done(self.pacer.answered(message.state.duration_s))
        self.call_after_refresh(self._fill_history)

    def on_part_fetched(self, message: PartFetched) -> None:
        if self.state is not None and not self.state.pending:
            return  # the whole refresh overtook its part
        self.state = message.state
        self._hand(self._refresh(part=True))

    def on_fetch_failed(self, message: FetchFailed) -> None:
        self.error = (safe_text(message.reason, 300), message.kind)
        self._fetch_done(self.pacer.failed(message.kind == "slow"))

    def _refresh(self, part: bool = False) -> Refresh:
        pacer = self.pacer
        return Refresh(self.options.url, self.state, part, self.error, pacer.last_duration_s, pacer.slow,
                       self.next_delay_s)

    def _hand(self, refresh: Refresh) -> None:
        """One refresh to each screen open that shows the fleet (none while the app shuts down)."""
        for screen in list(self.screen_stack):
            if isinstance(screen, ShowsRefreshes):
                screen.show_refresh(refresh)

    def _detail_host(self) -> str | None:
        # While the app shuts down a late fetch may land with no screen left.
        screen = self.screen_stack[-1] if self.screen_stack else None
        return screen.hostname if isinstance(screen, HostScreen) else None

    # The memory history of the rows on screen: with each refresh, and for rows scrolled into view since.

    def _tick(self) -> None:
        """Every second: ages move on, and rows scrolled into view get their history."""
        self.fleet.tick()
        self._fill_history()

    def _fill_history(self) -> None:
        if self.state is None or self._history_wanted:
            return
        missing = self.fleet.missing_history()
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
        self.fleet.show_history(message.history)
