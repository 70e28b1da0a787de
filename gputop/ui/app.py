"""The gputop TUI: GPU cards, a host strip and a process panel, fed one Snapshot per tick."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import ClassVar

from rich.console import RenderableType
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.keys import key_to_character
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from gputop.core.actions import Outcome, SignalResult, send_signal
from gputop.core.alerts import AlertEvent
from gputop.core.config import RunConfig
from gputop.core.forecast import Forecasts
from gputop.core.format import fmt_duration, safe_text
from gputop.core.history import History
from gputop.core.model import GpuSample, ProcessIdentity, Snapshot
from gputop.core.record import Recorder, RecordingError
from gputop.core.replay import Replay, clock_text
from gputop.core.sampler import Sampler, SamplerThread, clamp_interval
from gputop.core.settings import Settings, default_settings_path, save_settings
from gputop.core.watch import Foresight, Watcher
from gputop.ui.state import (
    COLUMN_BY_NAME,
    FilterError,
    ProcessFilter,
    ProcessRow,
    SortOrder,
    snapshot_rows,
    users_with_processes,
)
from gputop.ui.terminal_diff import CompositorUpdate, TerminalDiff
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.host_strip import HostStrip
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.sparkline import GpuTrend

MIN_WIDTH, MIN_HEIGHT = 40, 10
INTERVAL_STEPS_S = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0, 60.0)
# Actions that send signals: gone from keys, footer, help and palette in read-only mode.
SIGNAL_ACTIONS = frozenset({"kill", "tag", "untag_all"})
# Actions that act on the live machine or its sampler: gone in a replay too.
LIVE_ACTIONS = SIGNAL_ACTIONS | {"freeze", "interval"}
# Actions that move a replay: only there.
REPLAY_ACTIONS = frozenset({"replay_pause", "replay_step", "replay_speed", "replay_jump"})
# Alert kinds in the order a card's title names them.
ALERT_ORDER = ("lost", "memory", "forecast", "thermal")
# Snapshots fed (quietly) before the target of a replay jump, so forecasts and sparklines have a past.
REPLAY_REWIND = 300


class SnapshotReady(Message):
    """A new sample from the sampler thread; a newer one replaces one not yet handled."""

    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SnapshotReady)


class SamplerFailed(Message):
    """The sampler thread hit an error; it keeps going."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error


class TitleBar(Static):
    """Host, GPU count, driver, refresh interval, sort, filter, and FROZEN when frozen."""

    _text: Text | None = None

    def show(self, text: Text) -> None:
        """Show ``text``; an unchanged title is not redrawn, and one line needs no layout."""
        if text != self._text:
            self._text = text
            self.update(text, layout=False)


class FilterInput(Input):
    """The filter box. Keys typed ahead over a slow link arrive together: Enter applies the
    filter at once, and keys that were queued here after the focus moved on follow the focus."""

    async def _on_key(self, event: events.Key) -> None:
        app = self.app
        if self.screen.focused is not self:  # has_focus lags: it waits for the Blur event
            event.stop()
            event.prevent_default()
            app.post_message(events.Key(event.key, event.character))
            return
        if event.key == "enter" and isinstance(app, GpuTopApp):
            event.stop()
            event.prevent_default()
            app.filter_submitted(self)
            return
        await super()._on_key(event)


class GpuTopApp(App[int]):
    """Live GPUs and their processes."""

    CSS_PATH = "gputop.tcss"
    TITLE = "gputop"
    ENABLE_COMMAND_PALETTE = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f1,question_mark,h", "help", "Help", key_display="F1"),
        # A priority binding runs as the key arrives, so the keys typed after it reach the box.
        Binding("slash,f4", "filter", "Filter", key_display="/", priority=True),
        Binding("less_than_sign", "sort_move(-1)", "Sort column left", show=False),
        Binding("greater_than_sign", "sort_move(1)", "Sort", key_display="<>", tooltip="Sort column right"),
        Binding("I", "sort_invert", "Invert sort order", show=False),
        Binding("M", "sort_by('gpu_memory')", "Sort by GPU memory", show=False),
        Binding("P", "sort_by('cpu')", "Sort by CPU %", show=False),
        Binding("T", "sort_by('time')", "Sort by run time", show=False),
        Binding("N", "sort_by('pid')", "Sort by PID", show=False),
        Binding("u", "pick_user", "User"),
        *(Binding(str(n), f"only_gpu({n})", f"Only GPU {n}", show=False) for n in range(10)),
        Binding("a", "all_gpus", "All GPUs", show=False),
        Binding("escape", "clear_filter", "Clear filter", key_display="Esc"),
        Binding("space", "tag", "Tag process", show=False),
        Binding("space", "replay_pause", "Pause/play", key_display="Space"),
        Binding("full_stop,right", "replay_step(1)", "Step forward", show=False),
        Binding("comma,left", "replay_step(-1)", "Step back", show=False),
        Binding("right_square_bracket", "replay_speed(1)", "Faster", key_display="[]"),
        Binding("left_square_bracket", "replay_speed(-1)", "Slower", show=False),
        Binding("j", "replay_jump", "Jump to a time"),
        Binding("U", "untag_all", "Untag all", show=False),
        Binding("k,f9", "kill", "Kill", key_display="k"),
        Binding("g", "detail_selected", "GPU detail", show=False),
        Binding("enter", "detail_selected", "GPU detail", show=False),
        Binding("c", "toggle_compact", "Compact", show=False),
        Binding("p", "toggle_processes", "Show/hide processes", show=False),
        Binding("s", "toggle_host", "Show/hide host strip", show=False),
        Binding("f", "freeze", "Freeze", show=False),  # in help and the palette: the footer must fit 80 columns
        Binding("plus", "interval(1)", "Slower refresh", show=False),
        Binding("minus", "interval(-1)", "Faster refresh", show=False),
        Binding("G", "sort_by('growth')", "Sort by memory growth", show=False),
        Binding("exclamation_mark", "alert_log", "Alerts", key_display="!"),
        Binding("S", "save_settings", "Save settings", show=False),
        Binding("q,f10", "quit", "Quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        sampler: Sampler,
        config: RunConfig,
        *,
        start_sampler: bool = True,
        history: History | None = None,
        settings: Settings | None = None,
        settings_path: Path | None = None,
        settings_warnings: Sequence[str] = (),
        recorder: Recorder | None = None,
        replay: Replay | None = None,
    ) -> None:
        """``settings`` set the view (sort, columns, toggles, theme) and the alert thresholds;
        the interval is ``config.interval_s``, which the command line resolves.
        """
        super().__init__()
        self.sampler = sampler
        self.config = config
        self.start_sampler = start_sampler and replay is None
        self.interval_s = clamp_interval(config.interval_s)
        self.readonly = config.readonly
        self.settings = settings if settings is not None else Settings()
        self.settings_path = settings_path
        self.settings_warnings = list(settings_warnings)
        self.recorder = recorder
        self.replay = replay
        self._replay_timer: Timer | None = None
        self.sort = SortOrder()
        self.filter = ProcessFilter()
        self.frozen = False
        self.compact_choice: bool | None = None
        self.snapshot: Snapshot | None = None  # shown on screen
        self.latest: Snapshot | None = None  # newest received (differs while frozen)
        self.trends: dict[int, GpuTrend] = {}
        self.history = history if history is not None else History()
        self.watcher = Watcher(self.settings.thresholds, history=self.history)
        self.forecasts: Forecasts | None = None
        self.signal_results: list[SignalResult] = []
        self._sampler_thread: SamplerThread | None = None
        self._errors_reported: set[str] = set()
        self._card_columns = 1
        self._mounted = False
        self._processes_title: Text | None = None
        self._terminal = TerminalDiff()

    # -- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="main"):
            yield TitleBar(id="title-bar")
            yield HostStrip()
            with VerticalScroll(id="gpu-area"):
                yield Grid(id="gpu-grid")
            yield ProcessTable(id="processes")
            with Horizontal(id="filter-bar"):
                yield FilterInput(placeholder="text, PID, user, container; re:REGEX", id="filter-input")
                yield Static("", id="filter-error")
        yield Static(f"terminal too small (need {MIN_WIDTH}x{MIN_HEIGHT})", id="too-small")
        yield Footer()

    @property
    def processes(self) -> ProcessTable:
        return self.query_one("#processes", ProcessTable)

    def on_mount(self) -> None:
        self._mounted = True
        self._apply_settings()
        # Suspended and resumed (Ctrl+Z, fg), the terminal was used by others: draw it all again.
        self.app_suspend_signal.subscribe(self, lambda _app: self._terminal.forget())
        self.app_resume_signal.subscribe(self, lambda _app: self._redraw())
        self.processes.focus()
        self._update_size_mode(self.size.width, self.size.height)
        for warning in self.settings_warnings:
            self.notify(warning, title="Settings", severity="warning", timeout=15, markup=False)
        if self.latest is not None:
            self._show(self.latest)
        if self.replay is not None:
            self._start_replay(self.replay)
        if self.start_sampler:
            # The first frame already has data: sample once here, then hand over to the thread.
            try:
                self.apply_snapshot(self.sampler.sample())
            except Exception as error:  # noqa: BLE001 - shown, and the thread tries again
                self._report_error(error)
            self._sampler_thread = SamplerThread(
                self.sampler,
                self.interval_s,
                on_snapshot=self._post_snapshot,
                on_error=self._post_error,
            )
            self._sampler_thread.start()
        self._update_title()

    def _post_snapshot(self, snapshot: Snapshot) -> None:
        """Called on the sampler thread: post_message is thread-safe."""
        self.post_message(SnapshotReady(snapshot))

    def _post_error(self, error: BaseException) -> None:
        self.post_message(SamplerFailed(error))

    def _redraw(self) -> None:
        self._terminal.forget()
        self.screen.refresh()

    def _display(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        """Write only the cells that changed (see terminal_diff)."""
        driver = self._driver
        if (
            isinstance(renderable, CompositorUpdate)
            and driver is not None
            and not driver.is_inline
            and self._running
            and not self._closed
            and not self._batch_count
            and not self.is_headless
        ):
            size = screen.outer_size
            renderable = self._terminal.update(renderable, self.console, size.width, size.height)
        super()._display(screen, renderable)

    def on_unmount(self) -> None:
        if self._sampler_thread is not None:
            self._sampler_thread.stop()
        if self.recorder is not None:
            self._stop_recording()

    # -- settings ----------------------------------------------------------------------

    def _apply_settings(self) -> None:
        """Sort, columns, toggles and theme from the settings; what cannot be used is reported."""
        settings = self.settings
        if settings.sort_column in COLUMN_BY_NAME:
            self.sort = SortOrder(settings.sort_column, settings.sort_descending)
        else:
            self.settings_warnings.append(f"unknown sort column '{settings.sort_column}'; sorting by GPU memory")
        unknown = [name for name in settings.columns if name not in COLUMN_BY_NAME]
        if unknown:
            plural = "s" if len(unknown) > 1 else ""
            self.settings_warnings.append(f"unknown column{plural} ignored: {', '.join(unknown)}")
        self.processes.show_columns(settings.columns)
        self.compact_choice = True if settings.compact else None
        self.processes.display = settings.show_processes
        self.query_one("#gpu-area").set_class(not settings.show_processes, "-alone")
        self.query_one(HostStrip).display = settings.show_host
        if settings.theme in self.available_themes:
            if settings.theme != self.theme:  # setting a theme restyles everything: only when it changes
                self.theme = settings.theme
        else:
            self.settings_warnings.append(f"unknown theme '{settings.theme}'; using {self.theme}")

    def current_settings(self) -> Settings:
        """The settings file that would bring back this view."""
        return replace(
            self.settings,
            interval_s=self.interval_s,
            theme=self.theme,
            sort_column=self.sort.column,
            sort_descending=self.sort.descending,
            compact=self.compact_choice is True,
            show_processes=bool(self.processes.display),
            show_host=bool(self.query_one(HostStrip).display),
        )

    def action_save_settings(self) -> None:
        path = self.settings_path or default_settings_path()
        settings = self.current_settings()
        try:
            save_settings(settings, path)
        except OSError as error:
            reason = error.strerror or str(error)
            self.notify(f"cannot save settings to {path}: {reason}", title="Settings not saved",
                        severity="error", markup=False)
            return
        self.settings = settings
        self.notify(f"settings saved to {path}", title="Settings", markup=False)

    def on_resize(self, event: Resize) -> None:
        self._terminal.forget()  # the terminal may have reflowed what it showed
        self._update_size_mode(event.size.width, event.size.height)
        if self.snapshot is not None:
            self._show_gpus(self.snapshot)

    def _update_size_mode(self, width: int, height: int) -> None:
        too_small = width < MIN_WIDTH or height < MIN_HEIGHT
        self.query_one("#main").display = not too_small
        self.query_one(Footer).display = not too_small
        self.query_one("#too-small").display = too_small

    # -- data in -----------------------------------------------------------------------

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self.apply_snapshot(message.snapshot)

    def on_sampler_failed(self, message: SamplerFailed) -> None:
        self._report_error(message.error)

    def _report_error(self, error: BaseException) -> None:
        text = safe_text(f"{type(error).__name__}: {error}")
        if text not in self._errors_reported:
            self._errors_reported.add(text)
            self.notify(text, title="Sampling failed (gputop keeps trying)", severity="error", markup=False)

    def apply_snapshot(self, snapshot: Snapshot, *, quiet: bool = False) -> Foresight:
        """Take one tick's snapshot: history, forecasts, alerts, recording; show it unless frozen.

        ``quiet`` (a replay catching up after a jump) neither announces alerts nor draws.
        """
        self.latest = snapshot
        points = max(self.size.width, 40)
        for gpu in snapshot.gpus:
            trend = self.trends.get(gpu.index)
            if trend is None:
                trend = self.trends[gpu.index] = GpuTrend(points)
            elif trend.points < points:
                trend = self.trends[gpu.index] = trend.resized(points)
            trend.add(gpu)
        foresight = self.watcher.update(snapshot)
        self.forecasts = foresight.forecasts
        if self.recorder is not None:
            self._record(snapshot, foresight)
        if quiet:
            return foresight
        self._announce(foresight.events)
        if not self.frozen and self._mounted:
            self._show(snapshot)
        return foresight

    def _record(self, snapshot: Snapshot, foresight: Foresight) -> None:
        assert self.recorder is not None
        try:
            self.recorder.write(snapshot, forecasts=foresight.forecasts, alerts=foresight.events)
        except RecordingError as error:
            self.notify(f"{error}; gputop goes on without recording", title="Recording stopped",
                        severity="error", timeout=15, markup=False)
            self._stop_recording()

    def _stop_recording(self) -> None:
        recorder, self.recorder = self.recorder, None
        if recorder is not None:
            # A write error, if any, was already reported.
            with contextlib.suppress(RecordingError):
                recorder.close()

    def _announce(self, events: Sequence[AlertEvent]) -> None:
        """One notification per alert raised; the bell (with --bell) once a tick when one is.

        An alert clearing is not announced: its card loses the mark, and the log (``!``) has it.
        """
        raised = False
        for event in events:
            if event.cleared:
                continue
            raised = True
            if event.kind in ("memory", "forecast"):
                self.notify(event.message, title="Alert", severity="warning", timeout=10, markup=False)
            else:
                self.notify(event.message, title="Alert", severity="error", timeout=10, markup=False)
        if raised and self.config.bell:
            self.bell()

    def alert_kinds(self, gpu_index: int) -> tuple[str, ...]:
        """The kinds of alert raised now on a GPU (or one of its MIG devices)."""
        active = {key[0] for key in self.watcher.monitor.active if key[1] == gpu_index}
        return tuple(kind for kind in ALERT_ORDER if kind in active)

    def _show(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._show_gpus(snapshot)
        self.query_one(HostStrip).show(snapshot.host)
        self._show_processes()
        self._update_title()
        screen = self.screen
        if hasattr(screen, "show_snapshot"):
            screen.show_snapshot(snapshot)

    def _effective_compact(self, gpus: tuple[GpuSample, ...], width: int, height: int) -> bool:
        if self.compact_choice is not None:
            return self.compact_choice
        columns = self._columns_for(len(gpus), False, width)
        rows = [gpus[i : i + columns] for i in range(0, len(gpus), columns)]
        needed = sum(max(GpuCard.lines_needed(gpu, False) for gpu in row) for row in rows)
        available = height - 3
        # Full cards only while the process panel keeps room for its rows (up to a dozen of them).
        process_rows = sum(1 for gpu in gpus for _ in gpu.all_processes())
        panel = min(process_rows, 12) + 3 if self.processes.display else 0
        return needed + max(panel, 6 if self.processes.display else 0) > available

    @staticmethod
    def _columns_for(count: int, compact: bool, width: int) -> int:
        if count < 2:
            return 1
        return 2 if width >= (170 if compact else 100) else 1

    def _show_gpus(self, snapshot: Snapshot) -> None:
        grid = self.query_one("#gpu-grid", Grid)
        width, height = self.size.width, self.size.height
        compact = self._effective_compact(snapshot.gpus, width, height)
        columns = self._columns_for(len(snapshot.gpus), compact, width)
        if columns != self._card_columns:
            self._card_columns = columns
            grid.styles.grid_size_columns = columns
        self.query_one("#gpu-area").set_class(compact, "-compact")
        cards = {card.index: card for card in grid.query(GpuCard)}
        wanted = {gpu.index for gpu in snapshot.gpus}
        for index, card in cards.items():
            if index not in wanted:
                card.remove()
        new_cards = [GpuCard(gpu.index) for gpu in snapshot.gpus if gpu.index not in cards]
        cards.update((card.index, card) for card in new_cards)
        rows = math.ceil(len(snapshot.gpus) / columns)
        heights = [
            max(GpuCard.lines_needed(gpu, compact) for gpu in snapshot.gpus[r * columns : (r + 1) * columns])
            for r in range(rows)
        ]
        forecasts = self.forecasts
        for n, gpu in enumerate(snapshot.gpus):
            # Cards side by side share their row's height, so borders line up.
            cards[gpu.index].show(
                gpu,
                self.trends[gpu.index],
                compact,
                heights[n // columns],
                forecast=None if forecasts is None else forecasts.gpus.get(gpu.index),
                mig_forecasts=None
                if forecasts is None
                else {mig: f for (index, mig), f in forecasts.migs.items() if index == gpu.index},
                alert_kinds=self.alert_kinds(gpu.index),
            )
        if new_cards:
            grid.mount_all(new_cards)
        grid.styles.grid_rows = " ".join(str(h) for h in heights) or "1"
        grid.styles.height = sum(heights)

    def _show_processes(self) -> None:
        table = self.processes
        snapshot = self.snapshot
        if snapshot is None:
            return
        every = snapshot_rows(snapshot, None if self.forecasts is None else self.forecasts.processes)
        rows = [row for row in every if self.filter.matches(row)]
        table.empty_message = "no process matches the filter" if self.filter.active else "no GPU processes"
        table.set_rows(rows, self.sort)
        title = Text.assemble(("Processes", "bold"), f" {len(rows)}")
        if self.filter.active:
            title.append(f" of {len(every)}")
            title.append(f"  filter: {self.filter.describe()}", style="bold yellow")
        if table.tagged:
            title.append(f"  tagged: {len(table.tagged)}", style="bold")
        if title != self._processes_title:
            # Setting a border title repaints the whole panel: only when it changed.
            self._processes_title = title
            table.border_title = title

    def _update_title(self) -> None:
        snapshot = self.snapshot
        bar = Text(no_wrap=True, overflow="ellipsis")
        bar.append(" gputop ", style="bold reverse")
        if snapshot is not None:
            bar.append(f" {snapshot.hostname}", style="bold")
            bar.append(f"  {len(snapshot.gpus)} GPU{'s' if len(snapshot.gpus) != 1 else ''}")
            if snapshot.driver_version:
                bar.append(f"  driver {snapshot.driver_version}")
            if snapshot.cuda_driver_version:
                bar.append(f"  CUDA {snapshot.cuda_driver_version}")
            if snapshot.source != "nvml":
                bar.append(f"  [{snapshot.source}]", style="italic")
        if self.replay is not None:
            self._replay_title(bar, self.replay)
        else:
            bar.append(f"  every {self.interval_s:g}s", style="bold")
        if self.recorder is not None:
            bar.append(f"  ● REC {self.recorder.path}", style="bold red")
        if self.readonly:
            bar.append("  read-only", style="bold cyan")
        if self.frozen:
            bar.append("  FROZEN ", style="bold reverse red")
        if self.replay is not None:
            self.sub_title = self._replay_position_text(self.replay)
        else:
            self.sub_title = f"every {self.interval_s:g}s" + (" · FROZEN" if self.frozen else "")
        self.query_one(TitleBar).show(bar)

    # -- actions: views --------------------------------------------------------------

    def action_toggle_compact(self) -> None:
        snapshot = self.snapshot
        current = (
            self._effective_compact(snapshot.gpus, self.size.width, self.size.height) if snapshot else False
        )
        self.compact_choice = not current
        if snapshot is not None:
            self._show_gpus(snapshot)

    def action_toggle_processes(self) -> None:
        table = self.processes
        table.display = not table.display
        self.query_one("#gpu-area").set_class(not table.display, "-alone")

    def action_toggle_host(self) -> None:
        strip = self.query_one(HostStrip)
        strip.display = not strip.display

    def action_freeze(self) -> None:
        self.frozen = not self.frozen
        if not self.frozen and self.latest is not None and self.latest is not self.snapshot:
            self._show(self.latest)
        self._update_title()
        self.notify("display frozen: press f to resume" if self.frozen else "display live again", timeout=2)

    def action_interval(self, direction: int) -> None:
        current = self.interval_s
        if direction > 0:
            bigger = [step for step in INTERVAL_STEPS_S if step > current + 1e-9]
            new = bigger[0] if bigger else INTERVAL_STEPS_S[-1]
        else:
            smaller = [step for step in INTERVAL_STEPS_S if step < current - 1e-9]
            new = smaller[-1] if smaller else INTERVAL_STEPS_S[0]
        self.interval_s = clamp_interval(new)
        if self._sampler_thread is not None:
            self._sampler_thread.interval_s = self.interval_s
        self._update_title()

    # -- replay ----------------------------------------------------------------------

    def _start_replay(self, replay: Replay) -> None:
        self.apply_snapshot(replay.current)
        if replay.damage is not None:
            self.notify(replay.damage, title="Recording damaged", severity="error", timeout=30, markup=False)
        self._schedule_replay()

    def _schedule_replay(self) -> None:
        """Arm the timer for the next recorded snapshot at the replay's speed (none while paused)."""
        if self._replay_timer is not None:
            self._replay_timer.stop()
            self._replay_timer = None
        replay = self.replay
        delay = None if replay is None else replay.delay_s()
        if delay is not None:
            self._replay_timer = self.set_timer(delay, self._replay_tick)

    def _replay_tick(self) -> None:
        replay = self.replay
        if replay is None:
            return
        self._replay_timer = None
        if replay.advance():
            self.apply_snapshot(replay.current)
        if replay.at_end and not replay.paused:
            replay.paused = True
            where = "where the recording is damaged" if replay.damage else "the end of the recording"
            self.notify(f"replay paused at {where}", title="Replay", markup=False)
        self._update_title()
        self._schedule_replay()

    def _replay_seek(self, position: int) -> None:
        """Show snapshot ``position``, rebuilt from the snapshots before it (history, forecasts, alerts)."""
        replay = self.replay
        assert replay is not None
        replay.position = position
        self.watcher.reset()
        self.trends = {}
        for snapshot in replay.snapshots[max(0, position - REPLAY_REWIND) : position]:
            self.apply_snapshot(snapshot, quiet=True)
        self.apply_snapshot(replay.current, quiet=True)
        if not self.frozen:
            self._show(replay.current)
        self._update_title()
        self._schedule_replay()

    def _replay_position_text(self, replay: Replay) -> str:
        state = "paused" if replay.paused else "playing"
        return (
            f"{replay.position + 1}/{len(replay)} {clock_text(replay.current.timestamp)}"
            f" +{fmt_duration(replay.elapsed_s)} {replay.speed:g}x {state}"
        )

    def _replay_title(self, bar: Text, replay: Replay) -> None:
        bar.append("  REPLAY ", style="bold reverse magenta")
        bar.append(f" {self._replay_position_text(replay)}", style="bold")
        if replay.damage is not None:
            bar.append(f"  ⚠ damaged: ends after snapshot {len(replay)}", style="bold red")

    def action_replay_pause(self) -> None:
        replay = self.replay
        if replay is None:
            return
        replay.paused = not replay.paused
        if not replay.paused and replay.at_end:
            self._replay_seek(0)  # play again from the start
            return
        self._update_title()
        self._schedule_replay()

    def action_replay_step(self, count: int) -> None:
        """Step one snapshot forward or back; stepping pauses."""
        replay = self.replay
        if replay is None:
            return
        replay.paused = True
        before = replay.position
        after = replay.step(count)
        if after == before + 1:
            self.apply_snapshot(replay.current)
            self._update_title()
            self._schedule_replay()
        elif after != before:
            self._replay_seek(after)
        else:
            self._update_title()
            self._schedule_replay()

    def action_replay_speed(self, direction: int) -> None:
        replay = self.replay
        if replay is None:
            return
        if direction > 0:
            replay.faster()
        else:
            replay.slower()
        self._update_title()
        self._schedule_replay()

    def action_replay_jump(self) -> None:
        from gputop.ui.screens.jump import JumpScreen

        replay = self.replay
        if replay is None:
            return

        def jump(text: str | None) -> None:
            if text is None or not text.strip():
                return
            try:
                target = replay.jump_target(text)
            except ValueError as error:
                self.notify(str(error), title="Jump", severity="error", markup=False)
                return
            position = replay.position
            replay.seek_time(target)
            new_position, replay.position = replay.position, position
            self._replay_seek(new_position)

        self.push_screen(JumpScreen(clock_text(replay.current.timestamp)), jump)

    # -- actions: sort and filter ----------------------------------------------------

    def _set_sort(self, order: SortOrder) -> None:
        self.sort = order
        self._show_processes()

    def action_sort_move(self, step: int) -> None:
        self._set_sort(self.sort.moved(step))

    def action_sort_invert(self) -> None:
        self._set_sort(self.sort.inverted())

    def action_sort_by(self, column: str) -> None:
        self._set_sort(SortOrder(column, True) if column != "pid" else SortOrder("pid", False))

    def on_process_table_header_clicked(self, message: ProcessTable.HeaderClicked) -> None:
        self._set_sort(self.sort.by(message.column))

    def _set_filter(self, process_filter: ProcessFilter) -> None:
        self.filter = process_filter
        self._show_processes()

    def action_filter(self) -> None:
        bar = self.query_one("#filter-bar")
        bar.display = True
        field = self.query_one("#filter-input", FilterInput)
        field.value = self.filter.text
        # At once, not on the next idle: keys typed ahead ("/204" in one read) must reach the box.
        self.screen.set_focus(field)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter-input":
            self._apply_filter_text(event.input)

    def _apply_filter_text(self, field: Input) -> bool:
        """Filter by what the box holds; an invalid regex shows its error and keeps the last good filter."""
        error = self.query_one("#filter-error", Static)
        try:
            process_filter = self.filter.with_text(field.value)
        except FilterError as problem:
            error.update(Text(str(problem), style="bold red"))
            field.set_class(True, "-bad-filter")
            return False
        error.update("")
        field.set_class(False, "-bad-filter")
        if process_filter != self.filter:
            self._set_filter(process_filter)
        return True

    def filter_submitted(self, field: Input) -> None:
        """Enter in the filter box: apply it and go back to the panel, first match selected."""
        if not self._apply_filter_text(field):
            return
        self.query_one("#filter-bar").display = False
        self.processes.select_first()
        self.screen.set_focus(self.processes)

    def action_clear_filter(self) -> None:
        """Esc: leave the filter box and clear the filter (text, user and GPU)."""
        field = self.query_one("#filter-input", Input)
        field.value = ""
        field.set_class(False, "-bad-filter")
        self.query_one("#filter-error", Static).update("")
        self.query_one("#filter-bar").display = False
        self._set_filter(ProcessFilter())
        self.screen.set_focus(self.processes)

    def action_only_gpu(self, index: int) -> None:
        self._set_filter(self.filter.with_gpu(index))

    def action_all_gpus(self) -> None:
        self._set_filter(self.filter.with_gpu(None))

    def action_pick_user(self) -> None:
        from gputop.ui.screens.user_pick import UserPickScreen

        users = users_with_processes(self.snapshot) if self.snapshot else []

        def picked(user: str | None) -> None:
            if user is not None:
                self._set_filter(self.filter.with_user(None if user == UserPickScreen.ALL else user))

        self.push_screen(UserPickScreen(users, self.filter.user), picked)

    # -- actions: kill ---------------------------------------------------------------

    def _active_table(self) -> ProcessTable:
        """The process table the user is looking at: the detail screen's, or the main one."""
        focused = self.focused
        return focused if isinstance(focused, ProcessTable) else self.processes

    def action_tag(self) -> None:
        self._active_table().toggle_tag()
        self._show_processes()

    def action_untag_all(self) -> None:
        self._active_table().untag_all()
        self._show_processes()

    def kill_targets(self) -> list[ProcessRow]:
        """The tagged processes, or else the selected one."""
        table = self._active_table()
        tagged = table.tagged_rows()
        if tagged:
            return tagged
        row = table.cursor_row
        return [] if row is None else [row]

    def action_kill(self) -> None:
        if self.readonly:
            return
        from gputop.ui.screens.kill import KillScreen

        targets = self.kill_targets()
        if not targets:
            self.notify("no process selected", severity="warning")
            return

        def chosen(signal_number: int | None) -> None:
            if signal_number is not None:
                self.send_signals([row.process.identity for row in targets], signal_number)

        self.push_screen(KillScreen(targets), chosen)

    @work(thread=True, group="signals")
    def send_signals(self, identities: list[ProcessIdentity], signal_number: int) -> None:
        """Signal each process (re-checked by pid and start time) off the UI thread."""
        for identity in identities:
            result = self.sampler.source.signal(identity, signal_number)
            if result is None:
                result = send_signal(identity, signal_number)
            self.call_from_thread(self._report_signal, result)

    def _report_signal(self, result: SignalResult) -> None:
        self.signal_results.append(result)
        message = safe_text(result.message)  # it may name a process owner: shown, never acted on
        if result.outcome is Outcome.SENT:
            for table in (self.processes, self._active_table()):
                table.tagged = {key for key in table.tagged if key[:2] != result.identity}
            self.notify(message, title="Signal sent", markup=False)
        elif result.outcome is Outcome.GONE:
            self.notify(message, title="Already gone", severity="warning", markup=False)
        elif result.outcome is Outcome.REUSED:
            self.notify(f"refused: {message}", title="Refused (PID reused)", severity="error", markup=False)
        elif result.outcome is Outcome.DENIED:
            self.notify(message, title="Permission denied", severity="error", markup=False)
        else:
            self.notify(message, title="Signal failed", severity="error", markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.readonly and action in SIGNAL_ACTIONS:
            return False
        if self.replay is not None and action in LIVE_ACTIONS:
            return False
        if self.replay is None and action in REPLAY_ACTIONS:
            return False
        if action == "clear_filter":
            return self.filter.active or self.query_one("#filter-bar").display
        if action == "filter":
            # Only on the main screen, and "/" typed into the box is text (a regex may hold one).
            return len(self.screen_stack) == 1 and not isinstance(self.focused, FilterInput)
        return True

    # -- actions: screens ------------------------------------------------------------

    def action_help(self) -> None:
        from gputop.ui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.help_entries()))

    def help_entries(self) -> list[tuple[str, str]]:
        """(keys, description) for every key binding that is available now."""
        by_action: dict[str, tuple[list[str], str]] = {}
        for binding in self._app_bindings():
            if self.check_action(binding.action.split("(")[0], ()) is False:
                continue
            # The footer's short word, or the longer words help has room for.
            action, description = binding.action, binding.tooltip or binding.description
            if action.startswith("only_gpu("):
                # Ten bindings, one line of help.
                action, description = "only_gpu", "Only that GPU's processes"
                if action in by_action:
                    continue
                binding = Binding("0-9", action)
            keys, _description = by_action.setdefault(action, ([], description))
            keys.extend(_key_name(key) for key in binding.key.split(","))
        return [(", ".join(keys), description) for keys, description in by_action.values()]

    def _app_bindings(self) -> list[Binding]:
        return [binding for binding in self.BINDINGS if isinstance(binding, Binding)]

    def action_alert_log(self) -> None:
        from gputop.ui.screens.alert_log import AlertLogScreen

        self.push_screen(AlertLogScreen(self.watcher.monitor.log.events))

    def action_detail_selected(self) -> None:
        row = self.processes.cursor_row
        if row is None:
            self.notify("no process selected", severity="warning")
            return
        self.open_detail(row.process.gpu_index)

    def on_gpu_card_selected(self, message: GpuCard.Selected) -> None:
        self.open_detail(message.index)

    def open_detail(self, index: int) -> None:
        from gputop.ui.screens.detail import DetailScreen

        self.push_screen(DetailScreen(index))

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        seen: set[str] = set()
        for binding in self._app_bindings():
            name = binding.action.split("(")[0]
            if binding.action in seen or self.check_action(name, ()) is False or name == "clear_filter":
                continue
            seen.add(binding.action)
            callback: Callable[[], object] = partial(self.run_action, binding.action)
            keys = ", ".join(_key_name(key) for key in binding.key.split(","))
            yield SystemCommand(binding.description, f"key: {keys}", callback)


_KEY_NAMES = {
    "question_mark": "?",
    "slash": "/",
    "less_than_sign": "<",
    "greater_than_sign": ">",
    "plus": "+",
    "minus": "-",
    "space": "Space",
    "escape": "Esc",
    "enter": "Enter",
    "ctrl+c": "Ctrl+C",
}


def _key_name(key: str) -> str:
    """How help shows a key: "!" for exclamation_mark, "F1" for f1."""
    key = key.strip()
    if key in _KEY_NAMES:
        return _KEY_NAMES[key]
    if key.startswith("f") and key[1:].isdigit():
        return key.upper()
    character = key_to_character(key)
    return character if character and character.isprintable() and not character.isspace() else key


def run_tui(
    sampler: Sampler,
    config: RunConfig,
    *,
    settings: Settings | None = None,
    settings_path: Path | None = None,
    settings_warnings: Sequence[str] = (),
    recorder: Recorder | None = None,
    replay: Replay | None = None,
) -> int:
    """Run the TUI until the user quits; returns the exit status."""
    app = GpuTopApp(
        sampler,
        config,
        settings=settings,
        settings_path=settings_path,
        settings_warnings=settings_warnings,
        recorder=recorder,
        replay=replay,
    )
    result = app.run(mouse=config.mouse)
    return result if isinstance(result, int) else (app.return_code or 0)


__all__ = ["GpuTopApp", "run_tui", "SnapshotReady", "SamplerFailed"]
