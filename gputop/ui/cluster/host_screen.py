"""One host of the cluster: its GPUs and their processes."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from gputop.core.cluster.model import ClusterState
from gputop.core.format import NA, fmt_bytes, fmt_duration, fmt_percent, fmt_temperature, fmt_watts, safe_text
from gputop.ui.cluster.render import host_status, memory_bar, sparkline

GPU_COLUMNS = ("GPU", "Model", "UUID", "Memory", "Used/Total", "Util", "Temp", "Power", "Full in", "Memory history")
PROCESS_COLUMNS = ("GPU", "PID", "User", "Command", "Container", "GPU memory")


class HostScreen(Screen[None]):
    """The GPUs and processes of one host, refreshed with the cluster."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, hostname: str) -> None:
        super().__init__()
        self.hostname = hostname
        self._pending: ClusterState | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="host-title")
        yield DataTable(id="gpus", cursor_type="row")
        yield Static("Processes", id="processes-title")
        yield DataTable(id="processes", cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#gpus", DataTable).add_columns(*GPU_COLUMNS)
        self.query_one("#processes", DataTable).add_columns(*PROCESS_COLUMNS)
        self.query_one("#processes", DataTable).focus()
        if self._pending is not None:
            self.show(self._pending)

    def show(self, state: ClusterState) -> None:
        if not self.is_mounted:
            self._pending = state
            return
        host = state.host(self.hostname)
        title = Text.assemble(("Host ", "bold"), (safe_text(self.hostname), "bold"), "  ")
        if host is None:
            title.append("not in Prometheus any more", style="bold red")
        else:
            title.append_text(host_status(host))
            if host.stale and host.down:
                title.append(" (scrape target down)", style="red")
        self.query_one("#host-title", Static).update(title)

        gpus: DataTable[Text | str] = self.query_one("#gpus", DataTable)
        gpus.clear()
        for gpu in host.gpus if host is not None else ():
            gpus.add_row(
                Text(f"{gpu.index} LOST", style="bold red") if gpu.lost else str(gpu.index),
                safe_text(gpu.name),
                safe_text(gpu.uuid),
                memory_bar(gpu),
                f"{fmt_bytes(gpu.memory_used)}/{fmt_bytes(gpu.memory_total)}",
                fmt_percent(gpu.utilization_gpu),
                fmt_temperature(gpu.temperature),
                fmt_watts(gpu.power_draw) + ("" if gpu.power_limit is None else f"/{fmt_watts(gpu.power_limit)}"),
                NA if gpu.seconds_to_full is None else fmt_duration(gpu.seconds_to_full),
                Text(sparkline(gpu.memory_history, gpu.memory_total, 30), style="cyan"),
            )

        processes: DataTable[str] = self.query_one("#processes", DataTable)
        processes.clear()
        heading = self.query_one("#processes-title", Static)
        if state.processes_host != self.hostname:
            heading.update("Processes (loading)")
            return
        if host is not None and host.stale:
            heading.update("Processes: none live (the host is stale)")
        else:
            heading.update(f"Processes ({len(state.processes)})")
        for process in state.processes:
            processes.add_row(
                str(process.gpu_index),
                str(process.pid),
                safe_text(process.user, 16),
                safe_text(process.command, 40),
                safe_text(process.container, 24),
                fmt_bytes(process.gpu_memory),
                key=f"{process.gpu_index}:{process.pid}",
            )

    def show_error(self, message: str) -> None:
        if self.is_mounted:
            self.query_one("#host-title", Static).update(Text(message, style="bold white on red"))
