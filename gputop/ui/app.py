"""The gputop TUI: GPU cards, a host strip and a process panel, fed one Snapshot per tick.

The app makes the parts, each in its own module and given only what it uses, and the main screen
(``main_screen.py``), which composes the widgets and owns its keys; the keys of the process panel are the
panel's (``panel/process_panel.py``), those that act over every screen (help, alerts, freeze, refresh, a
replay's, quit) the app's, below. Textual's focus chain finds each key where it lives; ``check_action``
adds only what the mode allows (read-only, replay).

- ``keymap``: every key, and where it lives; ``key_control``: which the mode allows, help, the palette;
- ``messages``: what the sampler thread posts; ``sampling_control``: that thread and its interval;
- ``feed``: which alerts are announced, and how; ``core.analysis.tick_feed``: what each tick feeds (the Watcher's
  history, forecasts and alerts; the recording), on the sampler thread, and the hand-over to this one;
- ``layout_control``: the room (too small, compact cards, panel and strip shown), by ``layout``'s arithmetic;
- ``process_view``: the panel's rows; ``sort_control`` and ``filter_control``: sorting and filtering;
- ``kill_control``: tag and signal; ``replay_control``: replay; ``navigation``: the screens over this one;
- ``title_control``: the title; ``settings_control``: the settings file applied and saved;
- widgets: ``title_bar``, ``filter_bar``, ``gpu_grid`` (of ``gpu_card``), ``host_strip``, ``process_table``.

Every tick is taken (history, forecasts, diagnoses, alerts, recording) on the thread that sampled it; the
app receives the newest in ``receive`` (``apply_snapshot`` takes one on this thread: a replay, the first
sample) and shows it once, in ``show_snapshot``. A busy UI skips frames, never ticks.
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

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.forecast import Forecasts
from gputop.core.analysis.foresight import Foresight, Watcher
from gputop.core.analysis.history import History
from gputop.core.analysis.tick_feed import Delivery, Handover, Tick, TickFeed
from gputop.core.model import Snapshot
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.settings import Settings
from gputop.ui import keymap, layout
from gputop.ui.controls.alert_control import AlertToasts
from gputop.ui.controls.key_control import KeyControl
from gputop.ui.controls.layout_control import LayoutControl
from gputop.ui.controls.message_control import Messages
from gputop.ui.controls.navigation import Navigation
from gputop.ui.controls.sampling_control import SamplingControl
from gputop.ui.controls.settings_control import SettingsControl
from gputop.ui.controls.title_control import TitleControl, TitleFacts
from gputop.ui.feed import alert_kinds, alert_notices
from gputop.ui.main_screen import MainScreen
from gputop.ui.messages import SamplerFailed, TicksReady
from gputop.ui.panel.filter_control import FilterControl
from gputop.ui.panel.kill_control import KillControl
from gputop.ui.panel.panel_keys import PanelKeys
from gputop.ui.panel.process_panel import ProcessPanel
from gputop.ui.panel.process_view import ProcessView
from gputop.ui.panel.sort_control import SortControl
from gputop.ui.screens.live import LiveScreen
from gputop.ui.screens.live_data import LiveData
from gputop.ui.terminal.early_keys import EarlyKeys, keys_given_back, typed_keys
from gputop.ui.terminal.textual_imports import collecting_rarely
from gputop.ui.terminal.textual_private import ChangedCellsApp
from gputop.ui.widgets.card_lines import CardContent
from gputop.ui.widgets.process_filter import ProcessFilter
from gputop.ui.widgets.rows import SortOrder

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
        self.sampler = sampler
        self.config = config
        self.start_sampler = start_sampler and replay is None
        self.readonly = config.readonly
        self.replay = replay
        self.frozen = False
        self.snapshot: Snapshot | None = None  # shown on screen
        self.latest: Snapshot | None = None  # newest received (differs while frozen)
        self.tick: Tick | None = None  # newest received, with its forecasts, diagnoses and alerts
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
            top=lambda: self.screen, every=self.set_interval,
        )
        # The process panel and the parts behind its keys.
        self.processes = ProcessPanel(id="processes")
        self.view = ProcessView(self.processes, ancestry=not sampler.source.simulated and replay is None)
        self.filter_control = FilterControl(
            self.view, mark_card=lambda index: self.main.grid.mark_filtered(index), current=lambda: self.snapshot,
            notify=self.notify, push_screen=self.push_screen,
        )
        self.key_control = KeyControl(
            readonly=self.readonly, replaying=replay is not None, filter_shown=lambda: self.filter_control.shown
        )
        self.sort_control = SortControl(self.view, self.push_screen)
        refusal = None if not (self.readonly or replay is not None) else (
            "a recording" if replay is not None else "read-only (--readonly)"
        )
        self.kill_control = KillControl(
            self, sampler.source.signal, panel=self.processes, tags_changed=self.view.refresh, refusal=refusal,
            source_name=sampler.source.name,
        )
        self.navigation = Navigation(
            self,
            alert_events=lambda: self.feed.watcher.monitor.log.events,
            help_entries=self.key_control.help_entries,
            data=LiveData(
                current=lambda: self.snapshot, history=self.history, forecasts=lambda: self.forecasts,
                diagnoses=lambda: self.diagnoses, raised=lambda: () if self.tick is None else self.tick.raised,
                sort=lambda: self.view.sort, process_detail=sampler.process_detail, replay=replay,
            ),
            kill=self.kill_control,
            only_owner=self.filter_control.only_owner,
            source_name=sampler.source.name,
        )
        self.panel_keys = PanelKeys(
            view=self.view, sort=self.sort_control, filters=self.filter_control, kill=self.kill_control,
            navigation=self.navigation, allows=self.key_control.allows,
        )
        self.processes.connect(self.panel_keys)
        # The main screen, its room, and the settings applied to both.
        self.main = MainScreen(
            title_bar=self.title_control.bar, panel=self.processes, filter_bar=self.filter_control.bar,
            size=lambda: self.size, current=lambda: self.snapshot, draw_cards=self._draw_cards,
            card_contents=self._card_contents, ready=self._start,
        )
        self.settings_control = SettingsControl(
            settings, settings_path, list(settings_warnings),
            view=self.view, layout=self.main.room, interval=lambda: self.interval_s, app=self,
        )
        self.main.connect(
            navigation=self.navigation, filters=self.filter_control,
            save_settings=self.settings_control.save, allows=self.key_control.allows,
        )
        self.replay_control: ReplayControl | None = None
        if replay is not None:
            from gputop.ui.controls.replay_control import ReplayControl  # only a replay needs it

            self.replay_control = ReplayControl(
                replay, take=self.apply_snapshot, show=self._show_unless_frozen, reset=self.feed.reset,
                moved=self.update_title, app=self,
            )
        self._mounted = False

    @property
    def layout_control(self) -> LayoutControl:
        """The main screen's room."""
        return self.main.room

    @property
    def interval_s(self) -> float:
        """How often the live sampler samples."""
        return self.sampling.interval_s

    @property
    def forecasts(self) -> Forecasts | None:
        """The forecasts made from the newest snapshot."""
        return None if self.tick is None else self.tick.foresight.forecasts

    @property
    def diagnoses(self) -> Diagnoses | None:
        """The diagnoses of the newest snapshot."""
        return None if self.tick is None else self.tick.foresight.diagnoses

    def alert_kinds(self, gpu_index: int) -> tuple[str, ...]:
        """The kinds of alert raised, as of the newest snapshot, on a GPU (or one of its MIG devices)."""
        return () if self.tick is None else alert_kinds(self.tick, gpu_index)

    @property
    def sort(self) -> SortOrder:
        """The process panel's sort order."""
        return self.view.sort

    @property
    def filter(self) -> ProcessFilter:
        """The process panel's filter."""
        return self.view.filter

    # -- the screen ----------------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return self.main

    def _start(self) -> None:
        """The main screen is mounted: apply the settings, show what was sampled, start sampling or the replay."""
        self._mounted = True
        self.settings_control.apply()
        # Suspended and resumed (Ctrl+Z, fg), the terminal was used by others: draw it all again.
        self.app_suspend_signal.subscribe(self, lambda _app: self.forget_screen())
        self.app_resume_signal.subscribe(self, lambda _app: self.action_redraw())
        self.layout_control.resized(self.size.width, self.size.height)
        if self.changed_cells_off is not None and not self.config.full_redraw:
            self.on_changed_cells_off(self.changed_cells_off)
        if self.config.debug and self.sampler.source.name == "nvml":
            from gputop.core.sources.nvml_gateway import binding_notice  # noqa: PLC0415 - pynvml only here

            if (notice := binding_notice()) is not None:
                self.notify(notice, title="NVML binding", severity="warning", timeout=15, markup=False)
        for warning in self.settings_control.warnings:
            self.notify(warning, title="Settings", severity="warning", timeout=15, markup=False)
        if self.latest is not None:
            self.show_snapshot(self.latest)
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
        self.layout_control.resized(event.size.width, event.size.height)

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

    def apply_snapshot(self, snapshot: Snapshot, *, quiet: bool = False) -> Foresight:
        """Take one snapshot on this thread (a replay, the first sample) and receive it.

        ``quiet`` (a replay catching up after a jump) neither announces alerts nor draws.
        """
        tick = self.feed.take(snapshot)
        if quiet:
            self.tick, self.latest = tick, snapshot
            self._say_recording_stopped(tick.recording_error)
        else:
            self.receive(Delivery.of(tick))
        return tick.foresight

    def receive(self, delivery: Delivery) -> None:
        """The newest tick, taken already: announce the alerts of every tick since the last, show it unless frozen."""
        tick = delivery.tick
        self.tick, self.latest = tick, tick.snapshot
        self._say_recording_stopped(delivery.recording_error)
        self.alert_toasts.show(delivery.events, tick.snapshot.timestamp)
        if alert_notices(delivery.events) and self.config.bell:
            self.bell()  # once a frame, however many were raised
        if not self.frozen and self._mounted:
            self.show_snapshot(tick.snapshot)

    def _say_recording_stopped(self, error: Exception | None) -> None:
        if error is not None:
            self.notify(f"{error}; gputop goes on without recording", title="Recording stopped",
                        severity="error", timeout=15, markup=False)

    # -- data out ----------------------------------------------------------------------

    def show_snapshot(self, snapshot: Snapshot) -> None:
        """Put a snapshot on screen: cards, host strip, process panel, title, and the open screen."""
        self.snapshot = snapshot
        # The sampler thread adds to the history meanwhile: the cards and the open screen read its series
        # under the Watcher's lock, so they agree with each other. (A read outside a tick, on a resize or
        # `c`, may find one series a tick ahead of another for a frame; nothing can fail: the history
        # replaces its dicts rather than changing them, and its arrays are read by index.)
        with self.feed.watcher.lock:
            self.layout_control.show_gpus(snapshot)
        self.main.host.show(snapshot.host, snapshot.gpus)
        self.view.show(snapshot, None if self.forecasts is None else self.forecasts.processes, self.diagnoses)
        self.update_title()
        screen = self.screen
        # A screen opened but not composed yet shows the newest snapshot itself once mounted.
        if isinstance(screen, LiveScreen) and screen.is_mounted:
            with self.feed.watcher.lock:
                screen.show_snapshot(snapshot)

    def _show_unless_frozen(self, snapshot: Snapshot) -> None:
        if not self.frozen:
            self.show_snapshot(snapshot)

    def _draw_cards(self, snapshot: Snapshot, plan: layout.CardLayout) -> None:
        """The cards of ``snapshot`` as planned, with their history, forecasts, alerts and diagnoses."""
        self.main.grid.show(snapshot, plan, self.history, self.forecasts, self.alert_kinds, self.diagnoses)

    def _card_contents(self, snapshot: Snapshot) -> list[CardContent]:
        """What each card of ``snapshot`` would show: its forecast, the alerts raised on it, its diagnosis."""
        forecasts, diagnoses = self.forecasts, self.diagnoses
        return [
            CardContent(
                gpu,
                forecast=None if forecasts is None else forecasts.gpus.get(gpu.index),
                alert_kinds=self.alert_kinds(gpu.index),
                diagnosis=None if diagnoses is None else diagnoses.gpus.get(gpu.index),
                now=snapshot.timestamp,
            )
            for gpu in snapshot.gpus
        ]

    def _title_facts(self) -> TitleFacts:
        return TitleFacts(
            snapshot=self.snapshot,
            latest=self.latest,
            interval_s=self.interval_s,
            replay=self.replay,
            recording=None if self.feed.recorder is None else self.feed.recorder.path,
            readonly=self.readonly,
            frozen=self.frozen,
            live=self.start_sampler and not self.frozen,
            started_at=self.sampling.started_at,
            alerts=0 if self.tick is None else len(self.tick.alerted),
            now=self.sampler.source_time(),
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
        if not self.frozen and self.latest is not None and self.latest is not self.snapshot:
            self.show_snapshot(self.latest)
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
        sampler,
        config,
        settings=settings,
        settings_path=settings_path,
        settings_warnings=settings_warnings,
        recorder=recorder,
        replay=replay,
        give_back_keys=give_back_keys,
        typed_ahead=typed_ahead,
    )
    with collecting_rarely():  # the collector tuned for a TUI's frames (textual_imports says why)
        result = app.run(mouse=config.mouse)
    return result if isinstance(result, int) else (app.return_code or 0)


__all__ = ["GpuTopApp", "run_tui", "TicksReady", "SamplerFailed"]
