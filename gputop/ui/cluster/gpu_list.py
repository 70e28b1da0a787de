"""The GPUs behind one count of the fleet summary (filling, hot, …), the worst first; Enter opens the host."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from gputop.core.cluster.counts import FleetCount
from gputop.core.cluster.model import GpuFinding
from gputop.core.format import fmt_duration, fmt_temperature, safe_text


def finding_value(count: FleetCount, value: float) -> str:
    if count.unit == "seconds":
        return fmt_duration(value)
    if count.unit == "celsius":
        return fmt_temperature(value)
    return f"{value:g}"


class GpuListScreen(Screen[None]):
    """One count's GPUs, as Prometheus ranked them."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, count: FleetCount) -> None:
        super().__init__()
        self.count = count
        self.gpus: tuple[GpuFinding, ...] = ()
        self._title = Text(f"GPUs {self.count.label}: reading…", style="bold")

    def compose(self) -> ComposeResult:
        yield Static(self._title, id="gpus-title")
        yield DataTable(id="gpu-list", cursor_type="row", zebra_stripes=True)
        # A line of keys, not a Footer: a Footer of every app key costs this screen most of its first second.
        yield Static("Enter: open the host · Esc back · q quit", classes="keys")

    def on_mount(self) -> None:
        table: DataTable[str] = self.query_one("#gpu-list", DataTable)
        table.add_columns("Host", "GPU", self.count.label.capitalize())
        table.focus()

    def show(self, gpus: tuple[GpuFinding, ...]) -> None:
        self.gpus = gpus
        self.query_one("#gpus-title", Static).update(Text(f"GPUs {self.count.label}: {len(gpus)}", style="bold"))
        table: DataTable[str] = self.query_one("#gpu-list", DataTable)
        table.clear()
        for gpu in gpus:
            table.add_row(safe_text(gpu.hostname), str(gpu.index), finding_value(self.count, gpu.value))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if 0 <= event.cursor_row < len(self.gpus):
            hostname = self.gpus[event.cursor_row].hostname
            self.app.pop_screen()
            self.app.open_host(hostname)  # type: ignore[attr-defined]

    def show_error(self, message: Text) -> None:
        self._title = message
        if self.is_mounted:
            self.query_one("#gpus-title", Static).update(message)
