"""One process in full: its whole command line, user, container, directory, parents and children,
GPU variables and device files, and charts of its GPU memory, SM %, CPU % and host memory; `e` opens
its whole environment (screens/environment.py).

The host facts are read once when the screen opens (on a worker thread, through the sampler,
which asks the source or /proc), and again with `r`; the figures and charts follow each tick.
Imported lazily (plotext is not needed for the first frame).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.widget import Widget
from textual.widgets import Footer, Static

from gputop.core.analysis.history import ProcessHistory
from gputop.core.analysis.tick_feed import Tick
from gputop.core.format import NA, NOT_YET, fmt_bytes, fmt_duration, fmt_percent, safe_text
from gputop.core.host.procdetail import ProcessDetail, Readable, Relative, masked
from gputop.core.host.visibility import not_visible_words
from gputop.core.model import Job, ProcessIdentity
from gputop.ui.screens.live import LiveScreen
from gputop.ui.screens.live_data import LiveData
from gputop.ui.widgets.history_chart import HistoryChart
from gputop.ui.widgets.out_of_view import FactsBox, OutOfView, chart_name
from gputop.ui.widgets.rows import ProcessRow
from gputop.ui.widgets.snapshot_rows import snapshot_rows


def _relative(relative: Relative) -> str:
    command = relative.command or relative.name or NA
    user = f" ({relative.user})" if relative.user else ""
    return f"{relative.pid}{user} {safe_text(command)}"


def job_text(job: Job) -> str:
    """``slurm job 1234.0 · train-llm · user alice · partition gpu · account proj42`` (what is known)."""
    parts = [f"{job.scheduler} job {job.label}"]
    if job.name:
        parts.append(job.name)
    parts.extend(f"{what} {value}" for what, value in
                 (("user", job.user), ("partition", job.partition), ("account", job.account)) if value)
    return safe_text(" · ".join(parts))


def _readable(readable: Readable, empty: str) -> Text:
    if readable.value is None:
        return Text(readable.reason or NA, style="italic yellow")
    return Text("\n".join(safe_text(item) for item in readable.value) or empty)


def _gpu_environment(detail: ProcessDetail) -> Text:
    """The GPU variables, then how many there are in all (``e`` shows them)."""
    gpu_environment = detail.gpu_environment
    if gpu_environment.value is None:
        return _readable(gpu_environment, NA)
    # A secret's value stays masked here too (an NVIDIA_API_KEY is an NVIDIA_ variable).
    shown = Readable(tuple(masked(variable) for variable in gpu_environment.value))
    text = _readable(shown, "no CUDA or NCCL variables")
    total = len(detail.environment.value or ())
    text.append(f"\n(e: all {total} variable{'s' if total != 1 else ''})", style="dim")
    return text


def facts_table(rows: list[ProcessRow], detail: ProcessDetail | None, now: float) -> Table:
    """The facts as label / value lines; values wrap (a command line is never cut)."""
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")
    process = rows[0].process if rows else None
    command = None
    if detail is not None and detail.arguments:
        command = detail.command
    elif process is not None:
        command = process.command or process.name
    table.add_row("Command", Text(safe_text(command)))
    user = detail.user if detail is not None and detail.user else (process.user if process else None)
    table.add_row("User", Text(safe_text(user)))
    for row in rows:
        p = row.process
        table.add_row(
            f"GPU {row.gpu_label}",
            Text(
                f"{fmt_bytes(p.gpu_memory)} of {fmt_bytes(row.gpu_memory_total)} ({fmt_percent(row.memory_share)})"
                f" · SM {fmt_percent(p.sm_utilization)} · type {p.type}"
            ),
        )
    if process is not None:
        host = Text(
            f"CPU {NOT_YET if process.cpu_percent is None else f'{process.cpu_percent:.1f}%'}"
            f" · memory {fmt_bytes(process.host_memory)}"
        )
        if process.started is not None:
            started = time.strftime("%H:%M:%S", time.localtime(process.started))
            host.append(f" · started {started} ({fmt_duration(now - process.started)} ago)")
        table.add_row("Host", host)
        container = Text(safe_text(process.container or "none"))
        if process.container_name:
            container.append(f" · {safe_text(process.container_name)}")
        elif process.container:
            # Read with the sample, from Docker's socket or the kubelet's pod folders.
            container.append(" · its name is not known here (Docker's socket or the kubelet's pods unreadable)",
                             style="italic yellow")
        table.add_row("Container", container)
        if process.job is not None:
            table.add_row("Job", Text(job_text(process.job)))
    if process is not None and not process.visible:
        # /proc has nothing on it: why, in the panel's words (the detail reader cannot tell).
        table.add_row("", Text(not_visible_words(process.not_visible_reason), style="italic yellow"))
        return table
    if detail is None:
        table.add_row("", Text("reading /proc…", style="italic"))
        return table
    if detail.gone is not None:
        table.add_row("", Text(detail.gone, style="italic yellow"))
        return table
    table.add_row("Directory", _readable(detail.cwd, NA))
    table.add_row("Parents", Text("\n".join(_relative(r) for r in detail.ancestors) or "none"))
    table.add_row("Children", Text("\n".join(_relative(r) for r in detail.children) or "none"))
    table.add_row("Environment", _gpu_environment(detail))
    table.add_row("Devices", _readable(detail.devices, "no /dev/nvidia* open"))
    return table


class ProcessKillParts(Protocol):
    """What the screen's k calls (the panel's KillControl): the launcher's choice, a signal, the refusal."""

    refusal: str | None  # why no signal is sent in this mode (read-only, a replay); None where they are

    def ask_launcher(self, launcher: ProcessRow, below: list[ProcessRow]) -> None: ...

    def send(self, identities: list[ProcessIdentity], signal_number: int) -> None: ...

    def refuse(self) -> None: ...


class ProcessScreen(LiveScreen):
    """One process in full; Esc goes back."""

    BINDINGS = [
        Binding("escape,q,backspace", "back", "Back", key_display="Esc"),
        Binding("k,f9", "kill", "Kill", key_display="k"),
        Binding("k,f9", "kill_refused", "Kill", show=False),
        Binding("g", "gpu_detail", "GPU", key_display="g", tooltip="The detail screen of its GPU"),
        Binding("r", "reload", "Read again", key_display="r", show=False),  # in help: the footer must fit 80 columns
        Binding("e", "environment", "Environment", key_display="e"),
    ]

    _CHARTS = (
        ("gpu_memory", "GPU memory", "cyan"),  # charts of bytes: the unit is the chart's (MiB below a GiB)
        ("sm", "SM (%)", "green"),
        ("cpu", "CPU (%)", "yellow"),
        ("host_memory", "Host memory", "magenta"),
    )
    _BYTES = frozenset({"gpu_memory", "host_memory"})

    def __init__(
        self,
        identity: ProcessIdentity,
        *,
        data: LiveData,
        tick: Tick | None,
        kill: ProcessKillParts,
        gpu_detail: Callable[[int], None],
        launcher: ProcessRow | None = None,
        below: list[ProcessRow] | None = None,
    ) -> None:
        """``data``: what the screen reads besides the ticks; ``tick``: the one shown when it opens (None: none
        yet), the app hands it the next ones; ``kill``: what k calls; ``gpu_detail``: opens a GPU's detail (g).
        ``launcher``: a process not on any GPU, from the tree (``below``: the lines under it there)."""
        super().__init__(id="process-screen")
        self.identity = identity
        self.data = data
        self.tick = tick
        self.kill = kill
        self.gpu_detail = gpu_detail
        self.launcher = launcher
        self.below = below or []
        self.rows: list[ProcessRow] = []
        self.detail: ProcessDetail | None = None
        self.exited = False
        self._history: ProcessHistory | None = None
        self._now = 0.0

    def compose(self) -> ComposeResult:
        yield Static(id="process-title")
        with VerticalScroll(id="process-body", can_focus=False):
            yield FactsBox(id="process-facts", content_id="process-info")
            with Grid(id="process-charts"):
                for name, title, colour in self._CHARTS:
                    chart = HistoryChart(colour, id=f"process-chart-{name}")
                    chart.border_title = f"{title} (GiB)" if name in self._BYTES else title
                    yield chart
        yield OutOfView(id="process-out-of-view")
        yield Footer()

    def on_mount(self) -> None:
        if self.tick is not None:
            self.show(self.tick)
        self.query_one("#process-facts").focus()
        self.action_reload()
        body = self.query_one("#process-body")
        # What is out of view changes as the user scrolls, and as the parts are laid out at their sizes.
        self.watch(body, "scroll_y", self._tell_out_of_view, init=False)
        self.watch(body, "virtual_size", self._tell_out_of_view, init=False)

    def on_resize(self) -> None:
        self.call_after_refresh(self._tell_out_of_view)

    def _tell_out_of_view(self) -> None:
        """Under a short terminal's scrolled screen: which charts (or the facts) are out of view."""
        parts: list[tuple[str, Widget]] = [("facts", self.query_one(FactsBox))]
        parts += [(chart_name(title), self.query_one(f"#process-chart-{name}")) for name, title, _ in self._CHARTS]
        if self.query_one(OutOfView).tell(parts, self.query_one("#process-body")):
            self.call_after_refresh(self._tell_out_of_view)

    @work(thread=True, exclusive=True, group="process-detail")
    def _read_detail(self) -> None:
        detail = self.data.process_detail(self.identity)
        self.app.call_from_thread(self._show_detail, detail)

    def _show_detail(self, detail: ProcessDetail) -> None:
        self.detail = detail
        self._show_facts()

    def action_reload(self) -> None:
        """Read the host facts again (they are read once, not every tick)."""
        self.detail = None
        self._show_facts()
        self._read_detail()

    def show(self, tick: Tick) -> None:
        """A new tick: the process's figures now, and its history so far."""
        self.tick, snapshot = tick, tick.snapshot
        growth = tick.foresight.forecasts.processes
        rows = [row for row in snapshot_rows(snapshot, growth) if row.process.identity == self.identity]
        self._now = snapshot.timestamp
        if rows:
            self.rows, self.exited = rows, False
            self._history = self.data.history.processes.get(self.identity, self._history)
        elif self.launcher is not None:
            pass  # on no GPU list: whether it still runs, /proc says (the facts)
        else:
            self.exited = True  # the last figures and history stay on screen
        self._show_title()
        self._show_facts()
        self._draw_charts()

    def _show_title(self) -> None:
        pid = self.identity[0]
        title = Text.assemble((f" PID {pid} ", "bold reverse"))
        process = self.rows[0].process if self.rows else None
        if process is not None:
            title.append(f" {safe_text(process.name or process.command, 40)}", style="bold")
            title.append(f"  {safe_text(process.user)}")
            title.append("  GPU " + ", ".join(row.gpu_label for row in self.rows))
        elif self.launcher is not None:
            launcher = self.launcher.process
            workers = len({row.process.identity for row in self.below if not row.launcher})
            title.append(f" {safe_text(launcher.name, 40)}", style="bold")
            title.append(f"  {safe_text(launcher.user)}  no GPU: launcher of {workers} GPU process")
            title.append("" if workers == 1 else "es")
        if self.exited:
            title.append("  exited: gone from the GPU lists", style="bold red")
        self.query_one("#process-title", Static).update(title)

    def _show_facts(self) -> None:
        if not self.is_mounted:
            return
        self.query_one(FactsBox).show(Group(facts_table(self.rows, self.detail, self._now)))

    def _draw_charts(self) -> None:
        history = self._history
        if history is None:
            return
        times = list(history.timestamps)
        # GPU memory on its own scale: a process's growth shows, however small beside the GPU.
        series: dict[str, tuple[Sequence[float | None], float | None]] = {
            "gpu_memory": (history.gpu_memory, None),
            "sm": (history.sm_utilization, 100.0),
            "cpu": (history.cpu_percent, 100.0),
            "host_memory": (history.host_memory, None),
        }
        for name, title, _colour in self._CHARTS:
            values, limit = series[name]
            chart = self.query_one(f"#process-chart-{name}", HistoryChart)
            if name in self._BYTES:
                chart.show_bytes(title, times, values, limit)
            else:
                chart.show(times, values, limit)

    # -- actions ---------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        cannot_signal = self.kill.refusal is not None  # read-only, or a replay
        if action == "kill":
            return not cannot_signal
        if action == "kill_refused":
            return cannot_signal
        return True

    def action_kill(self) -> None:
        from gputop.ui.screens.kill import KillScreen

        if self.launcher is not None:
            self.kill.ask_launcher(self.launcher, self.below)
            return
        if self.exited or not self.rows:
            self.notify(f"PID {self.identity[0]} has exited: nothing to signal", severity="warning")
            return
        identity = self.identity

        def chosen(signal_number: int | None) -> None:
            if signal_number is not None:
                self.kill.send([identity], signal_number)

        self.app.push_screen(KillScreen(self.rows[:1]), chosen)

    def action_kill_refused(self) -> None:
        self.kill.refuse()

    def action_environment(self) -> None:
        """e: every variable of the process's environment, read afresh (nvitop's key)."""
        from gputop.ui.screens.environment import EnvironmentScreen

        shown = self.rows[0] if self.rows else self.launcher
        process = None if shown is None else shown.process
        name = None if process is None else process.name
        # Not visible from here: /proc has nothing on it, and the panel's words say why.
        unseen = None if process is None or process.visible else not_visible_words(process.not_visible_reason)
        self.app.push_screen(EnvironmentScreen(self.identity, name, self.data.process_detail, unseen))

    def action_gpu_detail(self) -> None:
        if self.rows:
            self.gpu_detail(self.rows[0].process.gpu_index)

    def action_back(self) -> None:
        self.dismiss(None)
