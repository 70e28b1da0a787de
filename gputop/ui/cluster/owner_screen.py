"""o in the cluster view: who holds the fleet's GPUs, by user, job, pod or container (``o`` again for the next).

The rows come from ``core.cluster.owners`` (one query, summed by Prometheus), read by this screen when
it opens, on ``o`` and at each refresh the app hands it; it lays them out, keeps a cursor and a sort
order, and hands the chosen owner back (Enter) for the host list to show that owner's hosts alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Static

from gputop.core.analysis.owners import OWNER_KINDS
from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.owners import FleetOwner
from gputop.core.format import NA, fmt_bytes, safe_text
from gputop.core.output.owner_table import NAME_MAX_WIDTH, NAME_MIN_WIDTH, OwnerColumn, sort_owners
from gputop.core.text_cut import fit_cells
from gputop.ui.cluster.messages import ClusterFetcher, LookupFailed, OwnersFetched
from gputop.ui.cluster.refresh import Refresh
from gputop.ui.screens.owner_list import OwnerListScreen

FLEET_COLUMNS: tuple[OwnerColumn, ...] = (
    OwnerColumn("name", "OWNER", 0, right=False),
    OwnerColumn("hosts", "HOSTS", 6),
    OwnerColumn("gpus", "GPUS", 6),
    OwnerColumn("gpu_memory", "GPU-MEM", 8),
    OwnerColumn("memory_share", "MEM%", 6),
    OwnerColumn("idle_memory", "IDLE-MEM", 9),  # 9: room for the sort arrow
    OwnerColumn("processes", "PROCS", 6),
)
_HINTS = {
    "user": "no GPU process series in Prometheus",
    "job": "no GPU process is in a Slurm job (the exporters serve a job label with --job-label)",
    "pod": "no GPU process or DCGM device series is in a Kubernetes pod",
    "container": "no GPU process is in a container",
}
KEYS = Text.assemble(
    *(part for key, what in (("Enter", "its hosts"), ("o", "next grouping"), ("< >", "sort"), ("I", "invert"),
                             ("Esc", "back")) for part in ((key, "bold"), f" {what}  "))
)


def fleet_cells(row: FleetOwner) -> dict[str, str]:
    """Each column's text for one owner."""
    return {
        "name": safe_text(row.name),
        "hosts": str(row.hosts),
        "gpus": str(row.gpus),
        "gpu_memory": fmt_bytes(row.gpu_memory),
        "memory_share": NA if row.memory_share is None else f"{100 * row.memory_share:.1f}%",
        "idle_memory": NA if row.idle_memory is None else fmt_bytes(row.idle_memory) if row.idle_memory else "-",
        "processes": NA if row.processes is None else str(row.processes),
    }


class FleetOwnerScreen(OwnerListScreen[FleetOwner]):
    """The fleet's owners, one row each; Enter filters the host list to the chosen owner's hosts."""

    HINTS = _HINTS

    BINDINGS = [
        Binding("escape,q", "back", "Back"),
        Binding("o", "next_kind", "By…"),
        Binding("enter", "choose", "Hosts"),
        Binding("less_than_sign", "sort_move(-1)", "Sort column left", show=False),
        Binding("greater_than_sign", "sort_move(1)", "Sort column right", show=False),
        Binding("I", "sort_invert", "Invert sort order", show=False),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
    ]

    def __init__(
        self, reader: ClusterFetcher, refresh: Refresh, choose: Callable[[str, str], None], kind: str = "user"
    ) -> None:
        """``reader``: what the owners are read through, among ``refresh``'s hosts (the newest refresh);
        ``choose(kind, name)``: called with the owner Enter picks."""
        super().__init__(choose, kind, id="fleet-owners")
        self.error: str | None = None
        self._read: list[FleetOwner] | None = None  # None: the answer for this kind is not in yet
        self.reader = reader
        self.latest = refresh
        self._asked: str | None = None  # the kind of the read in flight: one at a time
        # A refresh came while that read was out (it read the hosts before: the fleet's memory may be missing):
        # once it is back, read again.
        self._again = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="owners-body"):
            yield Static(id="owners-title")
            yield Static(id="owners-table")
        yield Static(KEYS, classes="keys")

    def on_mount(self) -> None:
        self._draw()
        self._ask(self.kind)

    def show_refresh(self, refresh: Refresh) -> None:
        """The owners follow the refresh: one more query while this screen is open."""
        self.latest = refresh
        if refresh.answered:
            self._ask(self.kind)

    def _ask(self, kind: str) -> None:
        """Read the owners by ``kind``, unless a read of that kind is still out (a slow Prometheus is not piled on)."""
        if self._asked != kind:
            self._asked = kind
            self._fetch_owners(kind)
        else:
            self._again = True

    @work(thread=True, exit_on_error=False, group="owners")
    def _fetch_owners(self, kind: str) -> None:
        hosts = () if self.latest.state is None else self.latest.state.hosts
        try:
            owners = self.reader.owners(kind, hosts)
        except PrometheusError as error:
            self._asked = None
            self.post_message(LookupFailed(str(error), error.kind))
        except Exception as error:  # noqa: BLE001 - shown on the screen; the next refresh asks again
            self._asked = None
            self.post_message(LookupFailed(f"{type(error).__name__}: {error}", "refused"))
        else:
            self._asked = None  # before the answer is posted: a refresh after it may ask again
            self.post_message(OwnersFetched(kind, owners))

    def on_owners_fetched(self, message: OwnersFetched) -> None:
        self.show(message.kind, message.owners)
        self._ask_again()

    def on_lookup_failed(self, message: LookupFailed) -> None:
        self.show_error(safe_text(message.reason, 200))
        self._ask_again()

    def _ask_again(self) -> None:
        if self._again:
            self._again = False
            self._ask(self.kind)

    def on_resize(self) -> None:
        self._draw()

    def show(self, kind: str, rows: Sequence[FleetOwner]) -> None:
        """The owners by ``kind`` as Prometheus summed them (an answer for another kind is dropped)."""
        if kind == self.kind:
            self._read, self.error = list(rows), None
            self._draw()

    def show_error(self, message: str) -> None:
        self.error = message
        self._draw()

    def _columns(self) -> tuple[dict[str, int], tuple[OwnerColumn, ...]]:
        room = max(40, self.size.width - 1) - sum(c.width + 1 for c in FLEET_COLUMNS if c.width)
        name_width = max(NAME_MIN_WIDTH, min(NAME_MAX_WIDTH, room))
        return {c.name: c.width or name_width for c in FLEET_COLUMNS}, FLEET_COLUMNS

    def _draw(self) -> None:
        self.rows = sort_owners(self._read or [], self.sort_column, self.descending)
        cursor = self.cursor
        self._cursor_name = None if cursor is None else self.rows[cursor].name
        title = Text("Fleet owners by ", style="bold")
        for kind in OWNER_KINDS:
            title.append(f" {kind} ", style="bold reverse" if kind == self.kind else "dim")
        title.append(f"   {len(self.rows)}", style="bold")
        if self.error is not None:
            title.append(f"   {self.error}", style="bold red")
        self.query_one("#owners-title", Static).update(title)
        widths, columns = self._columns()
        table = self.header(columns, widths)
        if not self.rows:
            table.append("\n  " + ("reading…" if self._read is None else self.HINTS[self.kind]), style="dim italic")
        for index, row in enumerate(self.rows):
            cells = fleet_cells(row)
            table.append("\n")
            line = " ".join(fit_cells(cells[c.name], widths[c.name], c.right) for c in columns)
            table.append(line, style="reverse" if index == cursor else "")
        self.query_one("#owners-table", Static).update(table)

    def action_next_kind(self) -> None:
        self.kind = OWNER_KINDS[(OWNER_KINDS.index(self.kind) + 1) % len(OWNER_KINDS)]
        self._read, self._cursor_name, self.error = None, None, None
        self._draw()
        self._ask(self.kind)

    def action_sort_move(self, step: int) -> None:
        self.sort_among([c.name for c in FLEET_COLUMNS], step)
