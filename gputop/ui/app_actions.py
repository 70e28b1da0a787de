"""The app's actions: Textual looks up ``action_*`` on the app, and each hands its key to the part that owns it.

``GpuTopApp`` inherits them; the parts (``ui/*_control.py``, ``navigation``, ``process_view``) do the work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.process_table import ProcessTable

if TYPE_CHECKING:
    from gputop.core.model import Snapshot
    from gputop.ui.filter_control import FilterControl
    from gputop.ui.kill_control import KillControl
    from gputop.ui.layout_control import LayoutControl
    from gputop.ui.navigation import Navigation
    from gputop.ui.process_view import ProcessView
    from gputop.ui.replay_control import ReplayControl
    from gputop.ui.sampling_control import SamplingControl
    from gputop.ui.settings_control import SettingsControl
    from gputop.ui.sort_control import SortControl


class AppActions:
    """The key actions of ``GpuTopApp`` (a mixin: the attributes below are the app's)."""

    frozen: bool
    readonly: bool
    snapshot: Snapshot | None
    latest: Snapshot | None
    view: ProcessView
    sampling: SamplingControl
    settings_control: SettingsControl
    replay_control: ReplayControl | None
    layout_control: LayoutControl
    sort_control: SortControl
    filter_control: FilterControl
    kill_control: KillControl
    navigation: Navigation

    # The app's own methods, named here only for the type checker (annotations define nothing, so the
    # app's definitions are the ones that run).
    show_snapshot: Callable[[Snapshot], None]
    update_title: Callable[[], None]
    notify: Callable[..., None]


    def action_save_settings(self) -> None:
        self.settings_control.save()

    def action_toggle_compact(self) -> None:
        self.layout_control.toggle_compact()

    def action_toggle_processes(self) -> None:
        self.layout_control.toggle_processes()

    def action_toggle_host(self) -> None:
        self.layout_control.toggle_host()

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

    def action_sort_move(self, step: int) -> None:
        self.sort_control.move(step)

    def action_sort_invert(self) -> None:
        self.sort_control.invert()

    def action_sort_by(self, column: str) -> None:
        self.sort_control.by_key(column)

    def action_sort_menu(self) -> None:
        self.sort_control.menu()

    def on_process_table_header_clicked(self, message: ProcessTable.HeaderClicked) -> None:
        self.sort_control.by_header(message.column)

    def action_toggle_tree(self) -> None:
        self.view.set_tree(not self.view.tree)

    def action_filter(self) -> None:
        self.filter_control.open()

    def action_clear_filter(self) -> None:
        self.filter_control.clear()

    def action_next_match(self) -> None:
        self.filter_control.next_match()

    def action_only_gpu(self, index: int) -> None:
        self.filter_control.only_gpu(index)

    def action_all_gpus(self) -> None:
        self.filter_control.filter_gpu(None)

    def action_pick_gpu(self) -> None:
        self.filter_control.pick_gpu()

    def action_pick_user(self) -> None:
        self.filter_control.pick_user()

    def action_tag(self) -> None:
        self.kill_control.toggle_tag()

    def action_untag_all(self) -> None:
        self.kill_control.untag_all()

    def action_kill(self) -> None:
        if not self.readonly:
            self.kill_control.ask()

    def action_kill_refused(self) -> None:
        self.kill_control.refuse()

    def action_help(self) -> None:
        self.navigation.help()

    def action_alert_log(self) -> None:
        self.navigation.alert_log()

    def action_owners(self) -> None:
        self.navigation.owners()

    def action_open_process(self) -> None:
        self.navigation.process()

    def action_detail_selected(self) -> None:
        self.navigation.detail_of_selected()

    def on_gpu_card_selected(self, message: GpuCard.Selected) -> None:
        self.navigation.detail(message.index)
