"""The gputop TUI: GPU cards, a host strip and a process panel, fed one Snapshot per tick.

The app composes small parts, each in its own module:

- ``keymap``: every key (BINDINGS), and what help, the palette and ``check_action`` make of it;
- ``messages``: what the sampler thread posts; ``sampling_control``: that thread and its interval;
- ``feed``: what each snapshot feeds (the Watcher's history, forecasts and alerts; the recording);
- ``layout``: the size arithmetic (columns, compact cards), plain functions;
- ``process_view``: sort and filter; ``kill_control``: tag and signal; ``replay_control``: replay;
- ``settings_control``: the settings file applied and saved;
- widgets: ``title_bar``, ``filter_bar``, ``gpu_grid`` (of ``gpu_card``), ``host_strip``, ``process_table``.

A snapshot comes in through ``apply_snapshot`` and goes out to the widgets once, in ``show_snapshot``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from gputop.core.alerts import AlertEvent
from gputop.core.diagnosis import Diagnoses
from gputop.core.forecast import Forecasts
from gputop.core.foresight import Foresight, Watcher
from gputop.core.history import History
from gputop.core.model import Snapshot
from gputop.core.record import Recorder
from gputop.core.replay import Replay
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.settings import Settings
from gputop.ui import keymap, layout
from gputop.ui.feed import SnapshotFeed
from gputop.ui.kill_control import KillControl
from gputop.ui.layout import gpu_range
from gputop.ui.messages import SamplerFailed, SnapshotReady
from gputop.ui.process_view import ProcessView, sort_for_key
from gputop.ui.replay_control import ReplayControl, replay_status, replay_title
from gputop.ui.sampling_control import SamplingControl
from gputop.ui.settings_control import SettingsControl
from gputop.ui.state import ProcessFilter, SortOrder, launcher_note, users_with_processes
from gputop.ui.textual_private import ChangedCellsApp
from gputop.ui.widgets.filter_bar import FilterBar, FilterInput
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.gpu_grid import GpuGrid
from gputop.ui.widgets.host_strip import HostStrip
from gputop.ui.widgets.process_table import ProcessTable
from gputop.ui.widgets.title_bar import TitleBar, interval_text, title_text


class GpuTopApp(ChangedCellsApp[int]):
    """Live GPUs and their processes."""

    CSS_PATH = "gputop.tcss"
    TITLE = "gputop"
    ENABLE_COMMAND_PALETTE = True
    BINDINGS: ClassVar[list[BindingType]] = keymap.BINDINGS

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
        super().__init__(full_redraw=config.full_redraw)
        self.sampler = sampler
        self.config = config
        self.start_sampler = start_sampler and replay is None
        self.sampling = SamplingControl(self, sampler, config.interval_s)
        self.readonly = config.readonly
        settings = settings if settings is not None else Settings()
        self.settings_control = SettingsControl(self, settings, settings_path, list(settings_warnings))
        self.replay = replay
        self.replay_control = None if replay is None else ReplayControl(self, replay)
        self.title_bar = TitleBar(id="title-bar")
        self.processes = ProcessTable(id="processes")
        self.view = ProcessView(self.processes)
        self.kill_control = KillControl(self)
        self.filter_bar = FilterBar(self.view.apply_filter_text, self._filter_done)
        self.frozen = False
        self.compact_choice: bool | None = None
        self.snapshot: Snapshot | None = None  # shown on screen
        self.latest: Snapshot | None = None  # newest received (differs while frozen)
        self.history = history if history is not None else History()
        self.feed = SnapshotFeed(Watcher(settings.thresholds, history=self.history), recorder)
        self._mounted = False

    @property
    def interval_s(self) -> float:
        """How often the live sampler samples."""
        return self.sampling.interval_s

    @property
    def forecasts(self) -> Forecasts | None:
        """The forecasts made from the newest snapshot."""
        return self.feed.forecasts

    @property
    def diagnoses(self) -> Diagnoses | None:
        """The diagnoses of the newest snapshot."""
        return self.feed.diagnoses

    @property
    def sort(self) -> SortOrder:
        """The process panel's sort order."""
        return self.view.sort

    @property
    def filter(self) -> ProcessFilter:
        """The process panel's filter."""
        return self.view.filter

    # -- layout ------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="main"):
            yield self.title_bar
            yield HostStrip()
            with VerticalScroll(id="gpu-area", can_focus=False):
                yield GpuGrid(id="gpu-grid")
            yield self.processes
            yield self.filter_bar
        yield Static(f"terminal too small (need {layout.MIN_WIDTH}x{layout.MIN_HEIGHT})", id="too-small")
        yield Footer()

    def on_mount(self) -> None:
        self._mounted = True
        self.settings_control.apply()
        # Suspended and resumed (Ctrl+Z, fg), the terminal was used by others: draw it all again.
        self.app_suspend_signal.subscribe(self, lambda _app: self.forget_screen())
        self.app_resume_signal.subscribe(self, lambda _app: self._redraw())
        self.processes.focus()
        self._update_size_mode(self.size.width, self.size.height)
        if self.changed_cells_off is not None and not self.config.full_redraw:
            self.on_changed_cells_off(self.changed_cells_off)
        for warning in self.settings_control.warnings:
            self.notify(warning, title="Settings", severity="warning", timeout=15, markup=False)
        if self.latest is not None:
            self.show_snapshot(self.latest)
        if self.replay_control is not None:
            self.replay_control.start()
        if self.start_sampler:
            self.sampling.start()
            # Sampling can fall behind (a driver that hangs): the title then says how old the data is.
            self.set_interval(0.5, self._say_lateness)
        self.update_title()

    def _say_lateness(self) -> None:
        """Twice a second: the title says how old the newest sample is when sampling is late."""
        if self.query(TitleBar):  # not while the screen is being taken down
            self.update_title()

    def _redraw(self) -> None:
        self.forget_screen()
        self.screen.refresh()

    def on_changed_cells_off(self, reason: str) -> None:
        """The changed-cell writer is off, Textual writes the screen: said under --debug only."""
        if self.config.debug:
            self.notify(f"{reason}; Textual draws the screen itself", title="Full redraw",
                        severity="warning", timeout=15, markup=False)

    def action_redraw(self) -> None:
        """Ctrl+L: draw every cell again (a garbled terminal, a tmux reattach)."""
        self._redraw()

    def on_unmount(self) -> None:
        self.sampling.stop()
        self.feed.stop_recording()

    def action_save_settings(self) -> None:
        self.settings_control.save()

    def on_resize(self, event: Resize) -> None:
        self.forget_screen()  # the terminal may have reflowed what it showed
        self._update_size_mode(event.size.width, event.size.height)
        if self.snapshot is not None:
            self._show_gpus(self.snapshot)

    def _update_size_mode(self, width: int, height: int) -> None:
        too_small = layout.too_small(width, height)
        self.query_one("#main").display = not too_small
        self.query_one(Footer).display = not too_small
        self.query_one("#too-small").display = too_small

    # -- data in -----------------------------------------------------------------------

    def on_snapshot_ready(self, message: SnapshotReady) -> None:
        self.apply_snapshot(message.snapshot)

    def on_sampler_failed(self, message: SamplerFailed) -> None:
        self.sampling.report_error(message.error)

    def apply_snapshot(self, snapshot: Snapshot, *, quiet: bool = False) -> Foresight:
        """Take one tick's snapshot: history, forecasts, alerts, recording; show it unless frozen.

        ``quiet`` (a replay catching up after a jump) neither announces alerts nor draws.
        """
        self.latest = snapshot
        foresight, recording_failure = self.feed.take(snapshot)
        if recording_failure is not None:
            self.notify(f"{recording_failure}; gputop goes on without recording", title="Recording stopped",
                        severity="error", timeout=15, markup=False)
        if quiet:
            return foresight
        self._announce(foresight.events)
        if not self.frozen and self._mounted:
            self.show_snapshot(snapshot)
        return foresight

    def _announce(self, events: Sequence[AlertEvent]) -> None:
        """One notification per alert raised; the bell (with --bell) once a tick when one is.

        An alert clearing is not announced: its card loses the mark, and the log (``!``) has it.
        """
        raised = False
        for event in events:
            if event.cleared:
                continue
            raised = True
            if event.kind in ("memory", "forecast", "idle"):
                self.notify(event.message, title="Alert", severity="warning", timeout=10, markup=False)
            else:
                self.notify(event.message, title="Alert", severity="error", timeout=10, markup=False)
        if raised and self.config.bell:
            self.bell()

    # -- data out ----------------------------------------------------------------------

    def show_snapshot(self, snapshot: Snapshot) -> None:
        """Put a snapshot on screen: cards, host strip, process panel, title, and the open screen."""
        self.snapshot = snapshot
        self._show_gpus(snapshot)
        self.query_one(HostStrip).show(snapshot.host)
        self.view.show(snapshot, None if self.forecasts is None else self.forecasts.processes, self.feed.diagnoses)
        self.update_title()
        screen = self.screen
        if hasattr(screen, "show_snapshot"):
            screen.show_snapshot(snapshot)

    def _card_layout(self, snapshot: Snapshot, compact_choice: bool | None) -> layout.CardLayout:
        return layout.plan_cards(
            snapshot.gpus,
            self.size.width,
            self.size.height,
            compact_choice=compact_choice,
            process_rows=sum(1 for gpu in snapshot.gpus for _ in gpu.all_processes()),
            panel_shown=bool(self.processes.display),
        )

    def _show_gpus(self, snapshot: Snapshot) -> None:
        plan = self._card_layout(snapshot, self.compact_choice)
        area = self.query_one("#gpu-area")
        area.set_class(plan.compact, "-compact")
        panel_shown, host_shown = bool(self.processes.display), bool(self.query_one(HostStrip).display)
        room = layout.cards_room(self.size.height, panel_shown=panel_shown, host_shown=host_shown)
        if area.styles.max_height is None or area.styles.max_height.value != room:
            area.styles.max_height = room
        self.query_one(GpuGrid).show(
            snapshot, plan, self.history, self.forecasts, self.feed.alert_kinds, self.feed.diagnoses
        )

    def update_title(self) -> None:
        """Say in the title bar (and the sub-title) what is shown and how it moves."""
        control = self.replay_control
        mode = interval_text(self.interval_s) if control is None else replay_title(control.replay)
        recording = None if self.feed.recorder is None else self.feed.recorder.path
        bar = title_text(
            self.snapshot, mode, recording=recording, readonly=self.readonly, frozen=self.frozen, late_s=self._late_s()
        )
        if control is not None:
            self.sub_title = replay_status(control.replay)
        else:
            self.sub_title = f"every {self.interval_s:g}s" + (" · FROZEN" if self.frozen else "")
        # The late-sample timer may fire while the app is closing: the bar is gone by then.
        if self.title_bar.is_mounted:
            self.title_bar.show(bar)
        screen = self.screen
        if hasattr(screen, "update_title"):
            screen.update_title()

    def _late_s(self) -> float | None:
        """The age of the newest sample when live sampling is late (older than two intervals)."""
        latest = self.latest
        if latest is None or not self.start_sampler or self.frozen:
            return None
        age = time.time() - latest.timestamp
        return age if age > 2 * self.interval_s else None

    # -- actions: views --------------------------------------------------------------

    def action_toggle_compact(self) -> None:
        snapshot = self.snapshot
        current = self._card_layout(snapshot, self.compact_choice).compact if snapshot else False
        self.compact_choice = not current
        if snapshot is not None:
            self._show_gpus(snapshot)

    def action_toggle_processes(self) -> None:
        table = self.processes
        table.display = not table.display
        if self.snapshot is not None:
            self._show_gpus(self.snapshot)  # the cards take the room (full cards if they now fit)

    def action_toggle_host(self) -> None:
        strip = self.query_one(HostStrip)
        strip.display = not strip.display
        if self.snapshot is not None:
            self._show_gpus(self.snapshot)

    def action_freeze(self) -> None:
        self.frozen = not self.frozen
        if not self.frozen and self.latest is not None and self.latest is not self.snapshot:
            self.show_snapshot(self.latest)
        self.update_title()
        self.notify("display frozen: press f to resume" if self.frozen else "display live again", timeout=2)

    def action_interval(self, direction: int) -> None:
        self.sampling.step_interval(direction)
        self.update_title()

    # -- actions: replay (replay_control) ----------------------------------------------

    def action_replay_pause(self) -> None:
        if self.replay_control is not None:
            self.replay_control.toggle_pause()

    def action_replay_step(self, count: int) -> None:
        if self.replay_control is not None:
            self.replay_control.step(count)

    def action_replay_speed(self, direction: int) -> None:
        if self.replay_control is not None:
            self.replay_control.change_speed(direction)

    def action_replay_jump(self) -> None:
        if self.replay_control is not None:
            self.replay_control.ask_jump()

    # -- actions: sort and filter (process_view, filter_bar) ---------------------------

    def action_sort_move(self, step: int) -> None:
        self.view.set_sort(self.sort.moved(step, self.processes.shown_columns))

    def action_sort_invert(self) -> None:
        self.view.set_sort(self.sort.inverted())

    def action_sort_by(self, column: str) -> None:
        self.view.set_sort(sort_for_key(column))

    def action_sort_menu(self) -> None:
        from gputop.ui.screens.sort_pick import SortPickScreen

        def picked(column: str | None) -> None:
            if column is not None:
                self.view.set_sort(self.sort.by(column) if column != self.sort.column else self.sort)

        self.push_screen(SortPickScreen(self.sort, self.processes.shown_columns), picked)

    def on_process_table_header_clicked(self, message: ProcessTable.HeaderClicked) -> None:
        self.view.set_sort(self.sort.by(message.column))

    def action_toggle_tree(self) -> None:
        self.view.set_tree(not self.view.tree)

    def action_filter(self) -> None:
        self.filter_bar.open(self.filter.text)

    def _filter_done(self) -> None:
        """Enter in the filter box: back to the panel, first match selected."""
        self.processes.select_first()
        self.screen.set_focus(self.processes)

    def action_clear_filter(self) -> None:
        """Esc: leave the filter box and clear the filter (text, user and GPU)."""
        self.filter_bar.clear()
        self.view.set_filter(ProcessFilter())
        self.query_one(GpuGrid).mark_filtered(None)
        self.screen.set_focus(self.processes)

    def _filter_gpu(self, index: int | None) -> None:
        self.view.set_filter(self.filter.with_gpu(index))
        self.query_one(GpuGrid).mark_filtered(index)

    def action_only_gpu(self, index: int) -> None:
        """0-9: only that GPU's processes; a GPU this machine does not have is refused, in words."""
        indices = [gpu.index for gpu in self.snapshot.gpus] if self.snapshot else []
        if index not in indices:
            self.notify(f"there is no GPU {index}: this machine has {gpu_range(indices)} (# lists them)",
                        severity="warning")
            return
        self._filter_gpu(index)

    def action_all_gpus(self) -> None:
        self._filter_gpu(None)

    def action_pick_gpu(self) -> None:
        from gputop.ui.screens.gpu_pick import GpuPickScreen

        def picked(choice: str | None) -> None:
            if choice is not None:
                self._filter_gpu(None if choice == GpuPickScreen.ALL else int(choice))

        self.push_screen(GpuPickScreen(self.snapshot.gpus if self.snapshot else (), self.filter.gpu), picked)

    def action_pick_user(self) -> None:
        from gputop.ui.screens.user_pick import UserPickScreen

        users = users_with_processes(self.snapshot) if self.snapshot else []

        def picked(user: str | None) -> None:
            if user is not None:
                self.view.set_filter(self.filter.with_user(None if user == UserPickScreen.ALL else user))

        self.push_screen(UserPickScreen(users, self.filter.user), picked)

    # -- actions: tag and kill (kill_control) ------------------------------------------

    def action_tag(self) -> None:
        self.kill_control.active_table().toggle_tag()
        self.view.refresh()

    def action_untag_all(self) -> None:
        self.kill_control.active_table().untag_all()
        self.view.refresh()

    def action_kill_refused(self) -> None:
        why = "a recording" if self.replay is not None else "read-only (--readonly)"
        self.notify(f"{why}: gputop sends no signals", title="Not sent", severity="warning")

    def action_next_match(self) -> None:
        """n / F3: the next process (after the cursor, wrapping) that the filter's text matches."""
        if not self.filter.text:
            self.notify("no filter: / types one, then n goes from match to match", severity="warning")
            return
        self.processes.select_next(self.filter.matches)

    def action_kill(self) -> None:
        if not self.readonly:
            self.kill_control.ask()

    # -- keys: which apply now, help and palette (keymap) ------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not keymap.mode_allows(action, readonly=self.readonly, replaying=self.replay is not None):
            return False
        # The footer shows what acts on the thing that has the focus: a dialog's own keys, the filter
        # box's Enter and Esc, the process screen's keys; the main screen's only where they act.
        screen = self.screen
        if isinstance(screen, ModalScreen):
            return action == "quit"
        if screen.id == "process-screen" and action not in keymap.PROCESS_SCREEN_ACTIONS:
            return False
        if isinstance(self.focused, FilterInput) and action not in keymap.FILTER_BOX_ACTIONS:
            return False
        if action == "clear_filter":
            return self.filter.active or self.filter_bar.display
        if action == "filter":
            # Only on the main screen, and "/" typed into the box is text (a regex may hold one).
            return len(self.screen_stack) == 1 and not isinstance(self.focused, FilterInput)
        return True

    def _allowed(self, action: str) -> bool:
        return self.check_action(action, ()) is not False

    def help_entries(self) -> list[tuple[str, str]]:
        """(keys, description) for every key binding that is available now, and the keys that move."""
        return [*keymap.help_entries(keymap.key_bindings(self.BINDINGS), self._allowed), *keymap.NAVIGATION_HELP]

    def get_key_display(self, binding: Binding) -> str:
        """Keys named alike everywhere, footers included: "Esc", "F10", "Enter"."""
        return binding.key_display or keymap.key_name(binding.key)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for description, keys, action in keymap.palette_entries(keymap.key_bindings(self.BINDINGS), self._allowed):
            yield SystemCommand(description, keys, partial(self.run_action, action))

    # -- actions: screens ------------------------------------------------------------

    def action_help(self) -> None:
        from gputop.ui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.help_entries()))

    def action_alert_log(self) -> None:
        from gputop.ui.screens.alert_log import AlertLogScreen

        self.push_screen(AlertLogScreen(self.feed.watcher.monitor.log.events))

    def action_detail_selected(self) -> None:
        row = self.processes.cursor_row
        if row is None:
            self.notify("no process selected", severity="warning")
            return
        self.open_detail(row.process.gpu_index)

    def action_open_process(self) -> None:
        """Enter: the selected process in full (in the table the user looks at)."""
        from gputop.ui.screens.process import ProcessScreen

        row = self.kill_control.active_table().cursor_row
        if row is None:
            self.notify("no process selected", severity="warning")
        elif row.launcher:
            self.notify(launcher_note(row), severity="warning")
        else:
            self.push_screen(ProcessScreen(row.process.identity))

    def on_gpu_card_selected(self, message: GpuCard.Selected) -> None:
        self.open_detail(message.index)

    def open_detail(self, index: int) -> None:
        from gputop.ui.screens.detail import DetailScreen

        self.push_screen(DetailScreen(index))


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
