"""One GPU in detail: every figure of it, its MIG devices, charts over the session, and its processes.

Imported lazily (plotext is not needed for the first frame).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.widget import Widget
from textual.widgets import Footer, Static

from gputop.core.analysis.diagnosis.states import lost_reason, mig_state
from gputop.core.analysis.forecast import Forecast, Forecasts
from gputop.core.analysis.history import GpuHistory
from gputop.core.analysis.tick_feed import Tick
from gputop.core.format import NA, fmt_bytes, fmt_percent, fmt_rate, fmt_temperature, fmt_watts, safe_text
from gputop.core.model import GpuSample, MigSample, percent
from gputop.ui import layout
from gputop.ui.screens.live import LiveScreen
from gputop.ui.screens.live_data import LiveData
from gputop.ui.widgets.card_text import activity_figures, forecast_text, mig_profile, silence_text
from gputop.ui.widgets.diagnosis_panel import DiagnosisPanel
from gputop.ui.widgets.history_chart import HistoryChart, TimeWindow, window_of
from gputop.ui.widgets.out_of_view import OutOfView, chart_name
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.replay_title import replay_title
from gputop.ui.widgets.rows import SortOrder
from gputop.ui.widgets.snapshot_rows import process_count, snapshot_rows

_GAP = "  "
# The diagnosis box's most lines of text (its stylesheet's max-height, less its borders).
DIAGNOSIS_MOST = 8


def _clock(label: str, now: int | None, most: int | None) -> str:
    """'SM 1410/1980MHz' against the maximum where it is known."""
    if now is None:
        return f"{label} {NA}"
    return f"{label} {now}MHz" if most is None else f"{label} {now}/{most}MHz"


def _mig_field(mig: MigSample, forecast: Forecast | None) -> Text:
    share = percent(mig.memory_used, mig.memory_total)
    text = Text(
        f"MIG {mig.index} {mig_profile(mig)} {fmt_bytes(mig.memory_used)}/{fmt_bytes(mig.memory_total)}"
        f" {fmt_percent(share)}"
    )
    if mig.activity is not None:  # what GPM measured on this MIG device
        text.append(f" SM {fmt_percent(mig.activity.sm_active)} tensor {fmt_percent(mig.activity.tensor_active)}")
    filling = forecast_text(forecast)
    if filling:
        text.append(f" {filling}", style="bold yellow")
    return text


# Below this width the header may say its facts in shorter words, where that saves it a line.
_SHORT_BELOW = 100
# Shorter words for the same facts (in activity_figures' fields).
_SHORT_ACTIVITY = (
    (" (occupancy ", " (occ "),
    (" since the driver loaded", " since driver load"),
    ("NVLink errors CRC 0 replay 0 recovery 0", "NVLink errors 0"),
)


def _short_bus(bus: str) -> str:
    """``00000000:28:00.0`` as lspci writes it, ``0000:28:00.0``: the domain's leading zeros only."""
    return bus[4:] if len(bus) > 12 and bus.startswith("0000") else bus


def header_fields(
    gpu: GpuSample, forecasts: Forecasts | None, now: float | None, *, short: bool = False
) -> list[list[Text]]:
    """What the header says about ``gpu`` (as of ``now``), as groups of fields; each group starts a line.
    ``short``: the same facts in fewer cells (``mem``, ``mem clk``), the activity run on after the rest."""
    identity = [Text.assemble((f" GPU {gpu.index} ", "bold reverse"), (f" {safe_text(gpu.name or NA)}", "bold"))]
    if gpu.lost:
        return [[*identity, Text("LOST", style="bold red"), Text(lost_reason(gpu), style="red")]]
    if not gpu.answering:
        identity.append(Text(silence_text(gpu, now), style="bold red"))
    used, total = fmt_bytes(gpu.memory_used), fmt_bytes(gpu.memory_total)
    if short and used.endswith("GiB") and total.endswith("GiB"):
        used = used.removesuffix("GiB")  # one unit for the pair: 75.1/80.0GiB
    memory = Text(f"{'mem' if short else 'memory'} {used}/{total} {fmt_percent(gpu.memory_percent)}")
    filling = forecast_text(None if forecasts is None else forecasts.gpus.get(gpu.index))
    if filling:
        memory.append(f" {filling}", style="bold yellow")
    pcie = Text(f"PCIe rx {fmt_rate(gpu.pcie_rx)} tx {fmt_rate(gpu.pcie_tx)}")
    if gpu.pcie_replay_errors:  # only when the link has resent packets: worth a look at the slot or riser
        pcie.append(f" replays {gpu.pcie_replay_errors}", style="bold yellow")
    temperature = Text(
        f"temp {fmt_temperature(gpu.temperature)}"
        f" ({'slow' if short else 'slowdown'} {fmt_temperature(gpu.temperature_slowdown)})"
    )
    # HBM's own sensor: shown where the GPU has one (most GDDR boards do not).
    memory_temperature = [] if gpu.memory_temperature is None else [
        Text(f"{'mem' if short else 'memory'} {fmt_temperature(gpu.memory_temperature)}")
    ]
    bus = Text(f"bus {gpu.pci_bus_id or NA}", style="dim")
    identifiers = [Text(gpu.uuid or NA, style="dim"), bus]
    if short:  # fields that read together stay together when short fields fill earlier lines
        temperature = Text("  ").join([temperature, *memory_temperature])
        memory_temperature = []
        identifiers = [Text(f"{gpu.uuid or NA} bus {_short_bus(gpu.pci_bus_id or NA)}", style="dim")]
    figures = [
        memory,
        Text(f"util {fmt_percent(gpu.utilization_gpu)}"),
        temperature,
        *memory_temperature,
        Text(f"power {fmt_watts(gpu.power_draw)}/{fmt_watts(gpu.power_limit)}"),
        Text(f"fan {fmt_percent(gpu.fan_speed)}"),
        Text(_clock("SM", gpu.clock_sm, gpu.clock_sm_max)),
        Text(_clock("mem clk" if short else "memory clock", gpu.clock_memory, gpu.clock_memory_max)),
        pcie,
        Text(f"P{gpu.pstate}" if gpu.pstate is not None else f"P{NA}"),
        *identifiers,
    ]
    migs = forecasts.migs if forecasts is not None else {}
    mig_fields = [_mig_field(mig, migs.get((gpu.index, mig.index))) for mig in gpu.mig_devices]
    # GPM activity, the PCIe link, NVLink and energy on a line of their own, where any is known.
    activity = [Text(_shorter(field) if short else field) for field in activity_figures(gpu)]
    if (mig_words := mig_state(gpu)) is not None:
        mig_fields.append(Text(mig_words, style="bold cyan"))
    if short:
        return [identity + figures + activity] + ([mig_fields] if mig_fields else [])
    return [identity + figures] + ([activity] if activity else []) + ([mig_fields] if mig_fields else [])


def _shorter(field: str) -> str:
    for long, short in _SHORT_ACTIVITY:
        field = field.replace(long, short)
    return field


def _room(line: Text, field: Text, width: int) -> bool:
    """Whether ``field`` goes on ``line`` (an empty line takes any field, cut if it must be)."""
    return not line.cell_len or line.cell_len + len(_GAP) + field.cell_len <= width


def flow(groups: list[list[Text]], width: int, *, backfill: bool = False) -> list[Text]:
    """The fields in lines of at most ``width`` cells, two spaces apart; a field wider than a line is cut.
    ``backfill``: a field goes on the first line of its group with room for it (a short one fills an
    earlier line's end), for the fewest lines where the order matters less than the height."""
    lines: list[Text] = []
    for group in groups:
        start = len(lines)
        lines.append(Text())
        for field in group:
            candidates = lines[start:] if backfill else lines[-1:]
            line = next((one for one in candidates if _room(one, field, width)), None)
            if line is None:
                line = Text()
                lines.append(line)
            if line.cell_len:
                line.append(_GAP)
            line.append_text(field)
    for line in lines:
        line.truncate(max(1, width), overflow="ellipsis")
    return lines


class DetailHeader(Static):
    """The detail screen's header: as many lines as its fields need at this width; on a narrow
    terminal in shorter words where those save a line (docked, each line is one less for the charts).
    Where the screen is short it keeps ``most`` lines; the rest go to ``overflow``, below the charts."""

    def __init__(self, overflow: Static) -> None:
        super().__init__(id="detail-title")
        self._groups: list[list[Text]] = []
        self._short: list[list[Text]] = []
        self.overflow = overflow
        self.most: int | None = None  # None: every line

    def show(self, groups: list[list[Text]], short: list[list[Text]] | None = None) -> None:
        self._groups, self._short = groups, short or groups
        self.fit()

    def on_resize(self) -> None:
        self.fit()

    def lines_at(self, width: int) -> list[Text]:
        """The header's lines ``width`` cells wide."""
        lines = flow(self._groups, width)
        if width < _SHORT_BELOW:
            shorter = flow(self._short, width, backfill=True)
            if len(shorter) < len(lines):
                lines = shorter
        return lines

    def fit(self) -> None:
        """Show the lines at this width: ``most`` of them here, the rest in ``overflow``."""
        lines = self.lines_at(self.size.width or 80)
        most = len(lines) if self.most is None else self.most
        kept, rest = lines[:most], lines[most:]
        self.styles.height = max(1, len(kept))
        self.update(Text("\n").join(kept))
        self.overflow.display = bool(rest)  # the header's last lines, below the charts
        self.overflow.update(Text("\n").join(rest))


class _Body(VerticalScroll, can_focus=False):
    """Everything under the header: it scrolls where the terminal is short (the process table has the keys)."""


class DetailScreen(LiveScreen):
    """Figures, charts and processes of one GPU; Esc goes back."""

    BINDINGS = [
        Binding("escape,q,backspace", "back", "Back"),
    ]

    _CHARTS = (
        ("memory", "Memory used", "cyan"),  # its unit is the chart's: GiB, or MiB below a GiB
        ("temperature", "Temperature (°C)", "magenta"),
        ("utilization", "Utilization (%)", "green"),
        ("power", "Power (W)", "yellow"),
    )
    # What GPM measured: a row of its own, shown only for a GPU with GPM.
    _ACTIVITY_CHARTS = (
        ("sm_active", "SM active (%)", "green"),
        ("tensor_active", "Tensor active (%)", "bright_magenta"),
        ("dram_active", "DRAM bandwidth (%)", "cyan"),
    )

    def __init__(self, index: int, data: LiveData, tick: Tick | None, sort: SortOrder | None = None) -> None:
        """GPU ``index`` as of ``tick`` (the one shown when it opens; None: none yet), its series read from
        ``data``; its processes in the panel's order ``sort`` (its keys change the panel's too)."""
        super().__init__(id="detail-screen")
        self.index = index
        self.data = data
        self.tick = tick
        self._sort = SortOrder() if sort is None else sort
        self._gpu: GpuSample | None = None
        self._now: float | None = None
        self._activity_charts: dict[str, HistoryChart] = {}  # mounted once the GPU shows activity
        self._room: layout.DetailRoom | None = None  # the sizes applied (fit_room)

    def compose(self) -> ComposeResult:
        overflow = Static(id="detail-more-figures")
        yield DetailHeader(overflow)
        with _Body(id="detail-body"):
            yield DiagnosisPanel(id="detail-diagnosis")
            with Grid(id="detail-charts"):
                for name, title, colour in self._CHARTS:
                    chart = HistoryChart(colour, id=f"chart-{name}")
                    chart.border_title = f"{title} (GiB)" if name == "memory" else title
                    yield chart
            yield overflow
            table = ProcessTable(id="detail-processes", allows=self.data.allows)
            table.set_reactive(ProcessTable.sort, self._sort)
            yield table
        yield OutOfView(id="detail-out-of-view")
        yield Footer()

    def on_mount(self) -> None:
        if self.tick is not None:
            self.show(self.tick)
        # The table takes the keys without scrolling to it: on a short terminal the charts stay in view
        # (its cursor keys bring it into view).
        self.query_one(ProcessTable).focus(scroll_visible=False)
        body = self.query_one(_Body)
        # What is out of view changes as the user scrolls, and as the parts are laid out at their sizes.
        self.watch(body, "scroll_y", self.tell_out_of_view, init=False)
        self.watch(body, "virtual_size", self.tell_out_of_view, init=False)
        self.call_after_refresh(self.fit_room, True)

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_room, True)

    def fit_room(self, home: bool = False) -> None:
        """Size the parts for the terminal (``layout.detail_room``): memory and temperature always in
        view under the header; ``home``: scroll back to the top (a new size)."""
        if not self.is_mounted:
            return
        header, panel = self.query_one(DetailHeader), self.query_one(DiagnosisPanel)
        table = self.query_one(ProcessTable)
        width = self.query_one(_Body).size.width
        diagnosis = 0
        if panel.display:  # its lines as wrapped in the box (borders and padding: 4 cells), and the borders
            wrapped = panel.text.wrap(self.app.console, max(1, width - 4))
            diagnosis = min(len(wrapped), DIAGNOSIS_MOST) + 2
        room = layout.detail_room(
            self.size.height, len(header.lines_at(self.size.width)), diagnosis,
            activity=bool(self._activity_charts), process_rows=len(table.rows),
        )
        if room != self._room:
            self._room = room
            header.most = room.header
            header.fit()
            row = room.chart_row
            charts = self.query_one("#detail-charts").styles
            # The stylesheet's heights and least heights where everything fits, else these.
            charts.height = charts.min_height = None if row is None else 2 * row
            if self._activity_charts:
                activity = self.query_one("#detail-activity-charts").styles
                activity.height = activity.min_height = room.activity
            table.styles.height = room.processes
            panel.styles.max_height = room.diagnosis
        if home:
            self.query_one(_Body).scroll_home(animate=False, immediate=True)
        self.call_after_refresh(self.tell_out_of_view)

    def tell_out_of_view(self) -> None:
        """The line under the screen: which parts are scrolled out of view."""
        if not self.is_mounted:
            return
        table = self.query_one(ProcessTable)
        parts: list[tuple[str, Widget]] = [("What is wrong", self.query_one(DiagnosisPanel))]
        for name, _title, _colour in self._CHARTS:
            parts.append((chart_name(_title), self.query_one(f"#chart-{name}")))
        for name, chart in self._activity_charts.items():
            parts.append((chart_name(str(chart.border_title or name)), chart))
        parts.append(("more figures", self.query_one("#detail-more-figures")))
        parts.append((f"Processes {process_count(table.rows)}", table))
        if self.query_one(OutOfView).tell(parts, self.query_one(_Body)):
            self.call_after_refresh(self.tell_out_of_view)

    def show(self, tick: Tick) -> None:
        self.tick, snapshot = tick, tick.snapshot
        self._gpu = next((g for g in snapshot.gpus if g.index == self.index), None)
        self._now = snapshot.timestamp
        self.update_title()
        forecasts, diagnoses = tick.foresight.forecasts, tick.foresight.diagnoses
        alerts = [alert for alert in tick.raised if alert.gpu_index == self.index]
        self.query_one(DiagnosisPanel).show(snapshot, diagnoses, self.index, alerts)
        every = snapshot_rows(snapshot, forecasts.processes, diagnoses)
        rows = [row for row in every if row.process.gpu_index == self.index]
        table = self.query_one(ProcessTable)
        # In its own order: the panel's when it opened, then its keys' (the app follows their Sorted message).
        table.set_rows(rows, table.sort)
        table.border_title = Text.assemble(("Processes", "bold"), f" {process_count(rows)}")
        try:
            history: GpuHistory | None = self.data.history.gpu(self.index)
        except KeyError:  # the GPU is no longer reported
            history = None
        self._draw_charts(history, self._gpu)
        self.call_after_refresh(self.fit_room)  # the header, the diagnosis or the processes may have grown

    def update_title(self) -> None:
        """The header: this GPU's figures, and where a replay is (it moves between snapshots too)."""
        replay = self.data.replay
        position = [replay_title(replay)[2:]] if replay is not None else []
        gpu = self._gpu
        if gpu is None:
            groups = [[Text(f" GPU {self.index}: no longer reported", style="bold red"), *position]]
            self.query_one(DetailHeader).show(groups)
            return
        forecasts = None if self.tick is None else self.tick.foresight.forecasts
        forms = [header_fields(gpu, forecasts, self._now, short=short) for short in (False, True)]
        for groups in forms:
            groups[0][1:1] = position
        self.query_one(DetailHeader).show(*forms)

    def _draw_charts(self, history: GpuHistory | None, gpu: GpuSample | None) -> None:
        # Fixed scales where the GPU has them, so a flat line reads as flat, not as noise.
        limits: dict[str, float | None] = {
            "memory": None if gpu is None else gpu.memory_total,
            "utilization": 100.0,
            "power": None if gpu is None else gpu.power_limit,
            "temperature": None if gpu is None else gpu.temperature_shutdown,
        }
        # One time axis for every chart, ending now: charts stacked under the same labels agree.
        window = None if history is None else window_of(history.timestamps)
        for name, title, _colour in self._CHARTS:
            chart = self.query_one(f"#chart-{name}", HistoryChart)
            if history is None:
                chart.show([], [], None)
            elif name == "memory":  # in the unit that fits it: MiB below a GiB
                chart.show_bytes(title, history.timestamps, history.memory_used, limits[name], window)
            else:
                chart.show(history.timestamps, list(getattr(history, name)), limits[name], window)
        if history is not None and history.has_activity:
            self._draw_activity(history, window)

    def _draw_activity(self, history: GpuHistory, window: TimeWindow | None) -> None:
        """The GPM charts, added the first time the GPU's history has activity (a GPU without GPM has none)."""
        if not self._activity_charts:
            for name, title, colour in self._ACTIVITY_CHARTS:
                chart = self._activity_charts[name] = HistoryChart(colour, id=f"chart-{name}")
                chart.border_title = title
            charts = self._activity_charts.values()
            self.mount(Grid(*charts, id="detail-activity-charts"), after=self.query_one("#detail-charts"))
            self._room = None  # lay the screen out again with them
            self.call_after_refresh(self.fit_room)
        for name, chart in self._activity_charts.items():
            chart.show(history.timestamps, list(getattr(history, name)), 100.0, window)

    def on_process_table_sort_menu_asked(self, message: ProcessTable.SortMenuAsked) -> None:
        from gputop.ui.screens.sort_pick import pick_sort  # the menu is imported when first opened

        message.stop()
        # Opened from the table's own turn, so that the order picked is the table's to tell the app (``Sorted``):
        # a message made in this screen's callback would stop here, Textual's rule for a parent's messages.
        message.table.call_later(pick_sort, message.table)

    def action_back(self) -> None:
        self.dismiss(None)
