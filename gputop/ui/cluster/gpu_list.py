"""The GPUs behind one count of the fleet summary (filling, hot, …), the worst first; Enter opens the host."""

from __future__ import annotations

from dataclasses import replace

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.counts import FleetCount
from gputop.core.cluster.model import ClusterState, GpuFinding
from gputop.core.format import fmt_duration, fmt_temperature, safe_text
from gputop.ui.cluster.messages import ClusterFetcher, GpusFetched, LookupFailed
from gputop.ui.cluster.refresh import Refresh
from gputop.ui.cluster.summary import prometheus_line


def finding_value(count: FleetCount, value: float) -> str:
    if count.unit == "seconds":
        return fmt_duration(value)
    if count.unit == "celsius":
        return fmt_temperature(value)
    return f"{value:g}"


def served(count: FleetCount, state: ClusterState | None) -> bool:
    """Whether an exporter serves ``count`` (while the first refresh is still coming in, not known yet: ask)."""
    return state is not None and (
        f"count:{count.key}" in state.pending
        or any(v.key == count.key and v.value is not None for v in state.counts)
    )


class GpuListScreen(Screen[str | None]):
    """One count's GPUs, as Prometheus ranked them; Enter closes it with the GPU's hostname."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, count: FleetCount, reader: ClusterFetcher, refresh: Refresh) -> None:
        """``reader``: what the GPUs are read through when the screen opens; ``refresh``: the newest one."""
        super().__init__()
        self.count = count
        self.gpus: tuple[GpuFinding, ...] = ()
        self.reader = reader
        self.latest = refresh
        self._served = served(count, refresh.state)
        if self._served:
            self._title = Text(f"GPUs {self.count.label}: reading…", style="bold")
        else:
            self._title = Text(f"GPUs {count.label}: N/A — no exporter serves {' or '.join(count.requires)}")

    def compose(self) -> ComposeResult:
        yield Static(self._title, id="gpus-title")
        yield DataTable(id="gpu-list", cursor_type="row", zebra_stripes=True)
        # A line of keys, not a Footer: a Footer of every app key costs this screen most of its first second.
        yield Static("Enter: open the host · Esc back · q quit", classes="keys")

    def on_mount(self) -> None:
        table: DataTable[str] = self.query_one("#gpu-list", DataTable)
        table.add_columns("Host", "GPU", self.count.label.capitalize())
        table.focus()
        if self._served:
            self._fetch_gpus()

    @work(thread=True, exit_on_error=False, group="gpus")
    def _fetch_gpus(self) -> None:
        try:
            gpus = self.reader.gpus(self.count.key)
        except PrometheusError as error:
            self.post_message(LookupFailed(str(error), error.kind))
        else:
            self.post_message(GpusFetched(self.count.key, gpus))

    def on_gpus_fetched(self, message: GpusFetched) -> None:
        if message.key == self.count.key:
            self.show(message.gpus)

    def on_lookup_failed(self, message: LookupFailed) -> None:
        self.show_error(prometheus_line(replace(self.latest, error=(message.reason, message.kind))))

    def show_refresh(self, refresh: Refresh) -> None:
        self.latest = refresh  # for the line that says why the GPUs could not be read

    def show(self, gpus: tuple[GpuFinding, ...]) -> None:
        self.gpus = gpus
        self.query_one("#gpus-title", Static).update(Text(f"GPUs {self.count.label}: {len(gpus)}", style="bold"))
        table: DataTable[str] = self.query_one("#gpu-list", DataTable)
        table.clear()
        for gpu in gpus:
            table.add_row(safe_text(gpu.hostname), str(gpu.index), finding_value(self.count, gpu.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.gpus):
            self.dismiss(self.gpus[event.cursor_row].hostname)

    def show_error(self, message: Text) -> None:
        self._title = message
        if self.is_mounted:
            self.query_one("#gpus-title", Static).update(message)
