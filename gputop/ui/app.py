"""The gputop TUI: GPU cards, a host strip and a process panel, fed one Snapshot per tick.

The app is the composition root: it makes the parts, each in its own module and given only what it uses
(CONTRIBUTING.md's table says who owns what), and the main screen (``main_screen.py``), which composes its
widgets, owns its keys and shows each tick it is handed. The app keeps the keys that act over every screen
(help, alerts, freeze, refresh, a replay's, quit); Textual's focus chain finds each key where it lives, and
``check_action`` adds only what the mode allows (read-only, replay).

Every tick is taken (history, forecasts, diagnoses, alerts, recording) on the thread that sampled it; the
app receives the newest in ``receive`` (``apply_snapshot`` takes one on this thread: a replay, the first
sample) and hands it, once, to the main screen and the screen open over it (``show_tick``). A busy UI
skips frames, never ticks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.events import Event, Key, Paste, Resize
from textual.notifications import SeverityLevel
from textual.screen import Screen

from gputop.core.analysis.foresight import Foresight, Watcher
from gputop.core.analysis.history import History
from gputop.core.analysis.tick_feed import Delivery, Handover, Tick, TickFeed
from gputop.core.model import Snapshot
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.settings import Settings
from gputop.ui import keymap
from gputop.ui.controls.alert_control import AlertToasts
from gputop.ui.controls.key_control import KeyControl
from gputop.ui.controls.message_control import Messages
from gputop.ui.controls.navigation import Navigation
from gputop.ui.controls.sampling_control import SamplingControl
from gputop.ui.controls.settings_control import SettingsControl
from gputop.ui.controls.title_control import OneShot, TitleControl, TitleFacts
from gputop.ui.feed import alert_notices
from gputop.ui.main_screen import MainScreen
from gputop.ui.messages import SamplerFailed, TicksReady
from gputop.ui.panel.kill_control import KillControl
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.screens.live import LiveScreen
from gputop.ui.screens.live_data import LiveData
from gputop.ui.terminal.early_keys import EarlyKeys, keys_given_back, typed_keys
from gputop.ui.terminal.textual_imports import collecting_rarely
from gputop.ui.terminal.textual_private import ChangedCellsApp
from gputop.ui.widgets.process_table import ProcessTable

if TYPE_CHECKING:  # imported by the runs that record or replay (cli), not by every start
    from gputop.core.recording.record import Recorder
    from gputop.core.recording.replay import Replay
    from gputop.ui.controls.replay_control import ReplayControl


class GpuTopApp(ChangedCellsApp[int]):
    """Live GPUs and their processes."""

    CSS_PATH = "gputop.tcss"
    TITLE = "gputop"
    ENABLE_COMMAND_PALETTE = True
    # The keys that act over every screen but a dialog; the main screen and its panel have their own.
    BINDINGS: ClassVar[list[BindingType]] = keymap.APP_BINDINGS

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
        give_back_keys: Callable[[], None] | None = None,
        typed_ahead: bytes = b"",
    ) -> None:
        """``settings`` set the view (sort, columns, toggles, theme) and the alert thresholds;
        the interval is ``config.interval_s``, which the command line resolves. ``give_back_keys``:
        gives the terminal's modes back where the keys were held on the first frame (``early_keys``);
        ``typed_ahead``: what was typed while gputop waited on the driver, read before that.
        """
        super().__init__(full_redraw=config.full_redraw)
        if give_back_keys is not None:
            self.driver_class = keys_given_back(self.driver_class, give_back_keys)
        self.early_keys = EarlyKeys(typed_keys(typed_ahead))  # keys that come before the main screen listens
        self.sampler, self.config, self.readonly, self.replay = sampler, config, config.readonly, replay
        self.start_sampler = start_sampler and replay is None
        self.frozen = False
        self.snapshot: Snapshot | None = None  # shown on screen
        # The newest received (differs from the one shown while frozen), with its forecasts, diagnoses, alerts.
        self.tick: Tick | None = None
        self.history = history if history is not None else History()
        settings = settings if settings is not None else Settings()
        self.messages = Messages(self)  # where every notify goes: the message line of its screen
        self.alert_toasts = AlertToasts(self, self.messages)
        # Fed on the sampler thread (live) or this one (a replay); the history is read here under its lock.
        self.feed = TickFeed(Watcher(settings.thresholds, history=self.history), recorder)
        self.handover = Handover()
        self.sampling = SamplingControl(
            sampler, config.interval_s, self.feed, self.handover,
            take_first=self.apply_snapshot, post=self.post_message, notify=self.notify,
        )
        self.title_control = TitleControl(
            facts=self._title_facts, set_sub_title=partial(setattr, self, "sub_title"),
            top=lambda: self.screen, later=lambda delay_s, call: OneShot(delay_s, call, self.call_next),
        )
        # The process panel (its sort, filter and tree are its own) and the parts its messages ask for.
        self.key_control = KeyControl(
            readonly=self.readonly, replaying=replay is not None, filter_shown=lambda: self.processes.filter_shown
        )
        self.processes = ProcessPanel(
            id="processes", ancestry=not sampler.source.simulated and replay is None, allows=self.key_control.allows
        )
        refusal = None if not (self.readonly or replay is not None) else (
            "a recording" if replay is not None else "read-only (--readonly)"
        )
        self.kill_control = KillControl(
            self, sampler.source.signal, panel=self.processes, refusal=refusal, source_name=sampler.source.name,
        )
        self.navigation = Navigation(
            self,
            alert_events=lambda: self.feed.watcher.monitor.log.events,
            help_entries=self.key_control.help_entries,
            data=LiveData(
                history=self.history, process_detail=sampler.process_detail, replay=replay,
                allows=self.key_control.allows,
            ),
            kill=self.kill_control,
            panel=self.processes,
            source_name=sampler.source.name,
        )
        # The main screen, given the parts its keys use, and the settings applied to it and the panel.
        self.main = MainScreen(
            title_bar=self.title_control.bar, panel=self.processes, history=self.history,
            history_lock=self.feed.watcher.lock, navigation=self.navigation, allows=self.key_control.allows,
            mounted=self._start,
        )
        self.settings_control = SettingsControl(
            settings, settings_path, list(settings_warnings),
            panel=self.processes, layout=self.main.room, interval=lambda: self.sampling.interval_s, app=self,
        )
        self.replay_control: ReplayControl | None = None
        if replay is not None:
            from gputop.ui.controls.replay_control import ReplayControl  # only a replay needs it

            self.replay_control = ReplayControl(
                replay, take=self.apply_snapshot, show=self._show_unless_frozen, reset=self.feed.reset,
                moved=self.update_title, app=self,
            )
        self._mounted = False

    # -- the screen ----------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return self.main

    def _start(self) -> None:
        """The main screen is mounted, nothing painted yet: apply the settings, show what was sampled, start
        sampling or the replay."""
        self._mounted = True
        self.settings_control.apply()
        # Suspended and resumed (Ctrl+Z, fg), the terminal was used by others: draw it all again.
        self.app_suspend_signal.subscribe(self, lambda _app: self.forget_screen())
        self.app_resume_signal.subscribe(self, lambda _app: self.action_redraw())
        self.main.resized(self.size.width, self.size.height)
        if self.changed_cells_off is not None and not self.config.full_redraw:
            self.on_changed_cells_off(self.changed_cells_off)
        if self.config.debug and self.sampler.source.name == "nvml":
            from gputop.core.sources.nvml_gateway import binding_notice  # noqa: PLC0415 - pynvml only here

            if (notice := binding_notice()) is not None:
                self.notify(notice, title="NVML binding", severity="warning", timeout=15, markup=False)
        for warning in self.settings_control.warnings:
            self.notify(warning, title="Settings", severity="warning", timeout=15, markup=False)
        if self.tick is not None:
            self.show_tick(self.tick)
        if self.replay_control is not None:
            self.replay_control.start()
        if self.start_sampler:
            self.sampling.start()
            # Sampling can fall behind (a driver that hangs): the title then says how old the data is.
            self.title_control.watch_lateness()
        self.update_title()
        # After the panel's focus (queued by the main screen's mount): the keys typed meanwhile, in order.
        self.call_later(self.early_keys.release, self.on_event)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification, Textual's own too: on the message line of the screen it is raised on."""
        self.messages.say(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def clear_notifications(self) -> None:
        super().clear_notifications()
        self.messages.clear()

    def on_changed_cells_off(self, reason: str) -> None:
        """The changed-cell writer is off, Textual writes the screen: said under --debug only."""
        if self.config.debug:
            self.notify(f"{reason}; Textual draws the screen itself", title="Full redraw",
                        severity="warning", timeout=15, markup=False)

    def on_unmount(self) -> None:
        self.sampling.stop()
        self.feed.stop_recording()

    async def on_event(self, event: Event) -> None:
        if isinstance(event, (Key, Paste)) and self.early_keys.hold(event):
            return  # the main screen is not listening yet: dispatched once it is
        if isinstance(event, Key):  # any key dismisses the alert's notification, and does its work
            self.alert_toasts.dismiss()
        await super().on_event(event)

    def on_resize(self, event: Resize) -> None:
        self.forget_screen()  # the terminal may have reflowed what it showed
        self.main.resized(event.size.width, event.size.height)

    # -- what the process tables ask for (messages from the panel and the detail screen's table) --------

    def on_process_table_sorted(self, message: ProcessTable.Sorted) -> None:
        self.processes.sort = message.order  # the panel's order is the one every table follows, and saved

    def on_process_table_kill_asked(self, message: ProcessTable.KillAsked) -> None:
        self.kill_control.asked(message.table)

    def on_process_table_open_process(self, message: ProcessTable.OpenProcess) -> None:
        self.navigation.process(message.table)

    def on_process_panel_open_gpu_detail(self, message: ProcessPanel.OpenGpuDetail) -> None:
        self.navigation.detail(message.index)

    # -- data in -----------------------------------------------------------------------

    def on_ticks_ready(self, message: TicksReady) -> None:
        if not self.is_running:
            # Shutting down: Textual takes the screens down while this loop still handles messages
            # (run_test does, with the sampler thread still posting), so the widgets may be gone.
            return
        # Everything taken since the last message; none when an earlier message took it already.
        delivery = self.handover.take()
        if delivery is not None:
            self.receive(delivery)

    def on_sampler_failed(self, message: SamplerFailed) -> None:
        self.sampling.report_error(message.error)

    def on_main_screen_save_settings(self, message: MainScreen.SaveSettings) -> None:
        self.settings_control.save()

    def apply_snapshot(self, snapshot: Snapshot, *, quiet: bool = False) -> Foresight:
        """Take one snapshot on this thread (a replay, the first sample) and receive it.

        ``quiet`` (a replay catching up after a jump) neither announces alerts nor draws.
        """
        tick = self.feed.take(snapshot)
        if quiet:
            self.tick = tick
            self._say_recording_stopped(tick.recording_error)
        else:
            self.receive(Delivery.of(tick))
        return tick.foresight

    def receive(self, delivery: Delivery) -> None:
        """The newest tick, taken already: announce the alerts of every tick since the last, show it unless frozen."""
        tick = delivery.tick
        self.tick = tick
        self._say_recording_stopped(delivery.recording_error)
        self.alert_toasts.show(delivery.events, tick.snapshot.timestamp)
        if alert_notices(delivery.events) and self.config.bell:
            self.bell()  # once a frame, however many were raised
        if not self.frozen and self._mounted:
            self.show_tick(tick)

    def _say_recording_stopped(self, error: Exception | None) -> None:
        if error is not None:
            self.notify(f"{error}; gputop goes on without recording", title="Recording stopped",
                        severity="error", timeout=15, markup=False)

    # -- data out ----------------------------------------------------------------------

    def show_tick(self, tick: Tick) -> None:
        """Put a tick on screen: handed to the main screen and to the screen open over it; the title."""
        self.snapshot = tick.snapshot
        self.navigation.tick = tick  # a screen opened from now on opens on it
        self.main.show(tick)
        self.update_title()
        screen = self.screen
        if isinstance(screen, LiveScreen):  # one opened but not built yet shows it once it is
            with self.feed.watcher.lock:  # it reads the history, which the sampler thread adds to
                screen.hand(tick)

    def _show_unless_frozen(self, _snapshot: Snapshot) -> None:
        """A replay's snapshot, taken already (quietly): the newest tick, shown unless frozen."""
        if not self.frozen and self.tick is not None:
            self.show_tick(self.tick)

    def _title_facts(self) -> TitleFacts:
        return TitleFacts(
            snapshot=self.snapshot, latest=None if self.tick is None else self.tick.snapshot,
            interval_s=self.sampling.interval_s, replay=self.replay,
            recording=None if self.feed.recorder is None else self.feed.recorder.path, readonly=self.readonly,
            frozen=self.frozen, live=self.start_sampler and not self.frozen, started_at=self.sampling.started_at,
            alerts=0 if self.tick is None else len(self.tick.alerted), now=self.sampler.source_time(),
        )

    def update_title(self) -> None:
        """Say again what is shown and how it moves (the parts call this when either changed)."""
        self.title_control.update()

    # -- the keys that act over every screen; which the mode allows ----------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.key_control.allows(action)

    def get_key_display(self, binding: Binding) -> str:
        """Keys named alike everywhere, footers included: "Esc", "F10", "Enter"."""
        return binding.key_display or keymap.key_name(binding.key)

    def action_help(self) -> None:
        self.navigation.help()

    def action_alert_log(self) -> None:
        self.navigation.alert_log()

    def action_freeze(self) -> None:
        self.frozen = not self.frozen
        if not self.frozen and self.tick is not None and self.tick.snapshot is not self.snapshot:
            self.show_tick(self.tick)
        self.update_title()
        self.notify("display frozen: press f to resume" if self.frozen else "display live again", timeout=2)

    def action_interval(self, direction: int) -> None:
        self.sampling.step_interval(direction)
        self.update_title()

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

    def action_redraw(self) -> None:
        """Ctrl+L: draw every cell again (a garbled terminal, a tmux reattach)."""
        self.forget_screen()
        self.screen.refresh()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The palette (Ctrl+P): gputop's actions that act here, only (not Textual's Keys, Theme...)."""
        for description, keys, action, node in self.key_control.palette_entries(screen.active_bindings.values()):
            yield SystemCommand(description, keys, partial(self.run_action, action, node))


def run_tui(
    sampler: Sampler,
    config: RunConfig,
    *,
    settings: Settings | None = None,
    settings_path: Path | None = None,
    settings_warnings: Sequence[str] = (),
    recorder: Recorder | None = None,
    replay: Replay | None = None,
    give_back_keys: Callable[[], None] | None = None,
    typed_ahead: bytes = b"",
) -> int:
    """Run the TUI until the user quits; returns the exit status."""
    app = GpuTopApp(
        sampler, config, settings=settings, settings_path=settings_path, settings_warnings=settings_warnings,
        recorder=recorder, replay=replay, give_back_keys=give_back_keys, typed_ahead=typed_ahead,
    )
    with collecting_rarely():  # the collector tuned for a TUI's frames (textual_imports says why)
        result = app.run(mouse=config.mouse)
    return result if isinstance(result, int) else (app.return_code or 0)


__all__ = ["GpuTopApp", "run_tui", "TicksReady", "SamplerFailed"]
