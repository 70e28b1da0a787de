"""One GPU in detail: memory, temperature, utilisation and power over the session, and its processes.

Imported lazily (plotext is not needed for the first frame).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.screen import Screen
from textual.widgets import Footer, Static
from textual_plotext import PlotextPlot

from gputop.core.diagnosis import Diagnoses
from gputop.core.forecast import Forecasts
from gputop.core.format import NA, fmt_bytes, fmt_percent, fmt_temperature, fmt_watts
from gputop.core.history import GpuHistory, History
from gputop.core.model import GpuSample, Snapshot
from gputop.ui.state import snapshot_rows
from gputop.ui.widgets.diagnosis_panel import DiagnosisPanel
from gputop.ui.widgets.gpu_card import silence_text
from gputop.ui.widgets.process_table import ProcessTable

_GIB = 1024**3


def _time_ticks(timestamps: Sequence[float], count: int = 4) -> tuple[list[float], list[str]]:
    if not timestamps:
        return [], []
    first, last = timestamps[0], timestamps[-1]
    if last <= first:
        return [first], [time.strftime("%H:%M:%S", time.localtime(first))]
    positions = [first + (last - first) * n / (count - 1) for n in range(count)]
    return positions, [time.strftime("%H:%M:%S", time.localtime(p)) for p in positions]


class DetailScreen(Screen[None]):
    """Charts and processes of one GPU; Esc goes back."""

    BINDINGS = [
        Binding("escape,q,backspace", "back", "Back"),
    ]

    _CHARTS = (
        ("memory", "Memory used (GiB)", "cyan"),
        ("temperature", "Temperature (°C)", "magenta"),
        ("utilization", "Utilization (%)", "green"),
        ("power", "Power (W)", "yellow"),
    )

    def __init__(self, index: int) -> None:
        super().__init__(id="detail-screen")
        self.index = index

    def compose(self) -> ComposeResult:
        yield Static(id="detail-title")
        yield DiagnosisPanel(id="detail-diagnosis")
        with Grid(id="detail-charts"):
            for name, _title, _colour in self._CHARTS:
                yield PlotextPlot(id=f"chart-{name}")
        yield ProcessTable(id="detail-processes")
        yield Footer()

    def on_mount(self) -> None:
        snapshot = getattr(self.app, "snapshot", None)
        if isinstance(snapshot, Snapshot):
            self.show_snapshot(snapshot)
        self.query_one(ProcessTable).focus()

    def show_snapshot(self, snapshot: Snapshot) -> None:
        gpu = next((g for g in snapshot.gpus if g.index == self.index), None)
        self.query_one("#detail-title", Static).update(self._title(gpu, snapshot.timestamp))
        forecasts = getattr(self.app, "forecasts", None)
        growth = forecasts.processes if isinstance(forecasts, Forecasts) else None
        diagnoses = getattr(self.app, "diagnoses", None)
        diagnoses = diagnoses if isinstance(diagnoses, Diagnoses) else None
        self.query_one(DiagnosisPanel).show(snapshot, diagnoses, self.index)
        rows = [row for row in snapshot_rows(snapshot, growth, diagnoses) if row.process.gpu_index == self.index]
        table = self.query_one(ProcessTable)
        table.set_rows(rows, getattr(self.app, "sort", table.sort))
        table.border_title = Text.assemble(("Processes", "bold"), f" {len(rows)}")
        history = getattr(self.app, "history", None)
        gpu_history: GpuHistory | None = None
        if isinstance(history, History):
            try:
                gpu_history = history.gpu(self.index)
            except KeyError:  # the GPU is no longer reported
                gpu_history = None
        self._draw_charts(gpu_history, gpu)

    def _title(self, gpu: GpuSample | None, now: float) -> Text:
        if gpu is None:
            return Text(f" GPU {self.index}: no longer reported", style="bold red")
        text = Text.assemble((f" GPU {gpu.index} ", "bold reverse"), (f" {gpu.name or NA}", "bold"))
        if gpu.lost:
            return text.append("  LOST", style="bold red")
        if not gpu.answering:
            text.append(f"  {silence_text(gpu, now)}", style="bold red")
        text.append(f"  {gpu.uuid or ''}  bus {gpu.pci_bus_id or NA}\n", style="dim")
        text.append(
            f" memory {fmt_bytes(gpu.memory_used)}/{fmt_bytes(gpu.memory_total)} ({fmt_percent(gpu.memory_percent)})"
            f"  util {fmt_percent(gpu.utilization_gpu)}"
            f"  temp {fmt_temperature(gpu.temperature)} (slowdown {fmt_temperature(gpu.temperature_slowdown)})"
            f"  power {fmt_watts(gpu.power_draw)}/{fmt_watts(gpu.power_limit)}"
        )
        return text

    def _draw_charts(self, history: GpuHistory | None, gpu: GpuSample | None) -> None:
        # Fixed scales where the card has them, so a flat line reads as flat, not as noise.
        limits: dict[str, float | None] = {
            "memory": None if gpu is None or gpu.memory_total is None else gpu.memory_total / _GIB,
            "utilization": 100.0,
            "power": None if gpu is None else gpu.power_limit,
            "temperature": None if gpu is None else gpu.temperature_shutdown,
        }
        for name, title, colour in self._CHARTS:
            plot = self.query_one(f"#chart-{name}", PlotextPlot)
            plt = plot.plt
            plt.clear_data()
            plt.clear_figure()
            plt.title(title)
            if history is None:
                plt.title(f"{title}: no history")
                plot.refresh()
                continue
            times = list(history.timestamps)
            values: list[float | None] = list(getattr(history, "memory_used" if name == "memory" else name))
            if name == "memory":
                values = [None if v is None else v / _GIB for v in values]
            points = [(t, v) for t, v in zip(times, values, strict=False) if v is not None]
            if points:
                # One line per run of readings: a time the GPU did not answer stays a gap.
                for run in _runs(times, values):
                    plt.plot([t for t, _ in run], [v for _, v in run], color=colour, marker="braille")
                # Time labels are 8 wide: as many as fit side by side (plotext overlaps them otherwise).
                count = max(2, min(4, (plot.size.width - 8) // 10))
                positions, labels = _time_ticks([t for t, _ in points], count)
                plt.xticks(positions, labels)
                high = limits[name]
                if high is not None:
                    plt.ylim(0, max(high, max(v for _, v in points)))
            plot.refresh()

    def action_back(self) -> None:
        self.dismiss(None)


def _runs(times: list[float], values: list[float | None]) -> list[list[tuple[float, float]]]:
    """The (time, value) points split where a value is missing."""
    runs: list[list[tuple[float, float]]] = [[]]
    for time_, value in zip(times, values, strict=False):
        if value is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append((time_, value))
    return [run for run in runs if run]
