"""The app's parts without an app: the key table in each mode, sort keys and the sort menu, the panel title,
interval steps, the GPU filter's refusal, the title's lateness, and what alerts are announced."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from textual.binding import Binding

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.recording.record import Recording
from gputop.core.recording.replay import Replay
from gputop.ui.controls.keymap import BINDINGS, help_entries, key_bindings, key_name, mode_allows, palette_entries
from gputop.ui.controls.replay_control import replay_status
from gputop.ui.controls.sampling_control import next_interval
from gputop.ui.controls.title_control import late_s, sub_title
from gputop.ui.feed import alert_notices
from gputop.ui.panel.filter_control import no_such_gpu
from gputop.ui.panel.process_view import ProcessView, panel_title, sort_for_key
from gputop.ui.panel.rows import ProcessFilter, SortOrder
from gputop.ui.panel.sort_control import SortControl, picked_order
from gputop.ui.screens.sort_pick import SortPickScreen
from gputop.ui.widgets.process_table import ProcessTable

from .factory import NOW, gpu, snapshot

LIVE = partial(mode_allows, readonly=False, replaying=False)
READ_ONLY = partial(mode_allows, readonly=True, replaying=False)
REPLAYING = partial(mode_allows, readonly=False, replaying=True)


def test_help_names_keys_as_they_are_typed_and_folds_the_ten_gpu_keys_into_one_line() -> None:
    entries = dict((description, keys) for keys, description in help_entries(key_bindings(BINDINGS), LIVE))
    assert entries["Help"] == "F1, ?, h"
    assert entries["Only that GPU's processes"] == "0-9"
    assert entries["Sort column right"] == ">"
    assert entries["Kill"] == "k, F9"
    assert entries["Quit"] == "q, F10, Ctrl+C"
    assert "Pause/play" not in entries


def test_read_only_mode_lists_no_key_that_signals_and_a_replay_no_live_key() -> None:
    read_only = [description for _keys, description in help_entries(key_bindings(BINDINGS), READ_ONLY)]
    assert not {"Kill", "Tag process", "Untag all"} & set(read_only)
    replaying = [description for _keys, description in help_entries(key_bindings(BINDINGS), REPLAYING)]
    assert not {"Kill", "Freeze", "Slower refresh"} & set(replaying)
    assert {"Pause/play", "Step forward", "Jump to a time"} <= set(replaying)


def test_the_palette_lists_each_action_once_with_its_keys() -> None:
    bindings = [Binding("k,f9", "kill", "Kill"), Binding("k", "kill", "Kill"), Binding("escape", "clear_filter", "X")]
    assert palette_entries(bindings, LIVE) == [("Kill", "key: k, F9", "kill")]
    assert key_name("exclamation_mark") == "!"


def test_sort_keys_sort_largest_first_but_pids_ascending() -> None:
    assert sort_for_key("cpu") == SortOrder("cpu", True)
    assert sort_for_key("pid") == SortOrder("pid", False)


def test_the_panel_title_counts_what_the_filter_lets_through_and_the_tags() -> None:
    assert panel_title(5, 5, ProcessFilter(), 0).plain == "Processes 5"
    assert panel_title(2, 5, ProcessFilter().with_gpu(1), 1).plain == "Processes 2 of 5  filter: GPU 1  tagged: 1"


def test_plus_and_minus_step_the_interval_and_stop_at_the_ends() -> None:
    assert [next_interval(1.0, 1), next_interval(1.0, -1), next_interval(0.7, 1), next_interval(0.7, -1)] == [
        2.0, 0.5, 1.0, 0.5
    ]
    assert (next_interval(60.0, 1), next_interval(0.1, -1)) == (60.0, 0.1)


def test_the_sort_menu_keeps_the_direction_of_the_current_column_and_picks_another_in_its_own() -> None:
    assert picked_order(SortOrder("cpu", False), "cpu") == SortOrder("cpu", False)
    assert picked_order(SortOrder("cpu", False), "pid") == SortOrder("pid", False)
    assert picked_order(SortOrder("pid", False), "gpu_memory") == SortOrder("gpu_memory", True)


def test_the_sort_keys_and_the_menu_change_the_panel_order_without_an_app() -> None:
    view = ProcessView(ProcessTable())
    menus: list[tuple[SortPickScreen, Callable[[str | None], None]]] = []
    control = SortControl(view, lambda screen, picked: menus.append((screen, picked)))

    control.move(1)  # right of GPU memory among the columns on screen
    assert view.sort == SortOrder("share", True)
    control.invert()
    assert view.sort == SortOrder("share", False)
    control.by_header("share")
    assert view.sort == SortOrder("share", True)
    control.by_key("pid")
    assert view.sort == SortOrder("pid", False)

    control.menu()
    ((screen, picked),) = menus
    assert screen.id == "sort-screen"
    picked(None)
    assert view.sort == SortOrder("pid", False)
    picked("cpu")
    assert view.sort == SortOrder("cpu", True)


def test_only_a_gpu_the_machine_has_can_be_filtered_to_and_the_refusal_says_which_it_has() -> None:
    assert no_such_gpu(2, [0, 1, 2, 3]) is None
    assert no_such_gpu(7, [0, 1, 2, 3]) == "there is no GPU 7: this machine has GPUs 0-3 (# lists them)"
    assert no_such_gpu(1, [0]) == "there is no GPU 1: this machine has GPU 0 (# lists them)"
    assert no_such_gpu(0, []) == "there is no GPU 0: this machine has no GPU (# lists them)"


def test_the_title_says_how_old_the_newest_sample_is_only_past_two_intervals() -> None:
    newest = snapshot(gpu(0), timestamp=NOW)
    assert late_s(newest, NOW + 2.0, 1.0) is None
    assert late_s(newest, NOW + 2.5, 1.0) == 2.5
    assert late_s(newest, NOW + 2.5, 2.0) is None
    assert late_s(None, NOW, 1.0) is None
    # No sample yet: how long since sampling started, past two intervals too.
    assert late_s(None, NOW + 2.0, 1.0, started_at=NOW) is None
    assert late_s(None, NOW + 3.0, 1.0, started_at=NOW) == 3.0


def test_the_sub_title_says_the_interval_and_frozen_or_where_the_replay_is() -> None:
    assert sub_title(1.0, frozen=False, replay=None) == "every 1s"
    assert sub_title(0.5, frozen=True, replay=None) == "every 0.5s · FROZEN"
    replay = Replay(Recording([snapshot(gpu(0)), snapshot(gpu(0), timestamp=NOW + 1)]))
    assert sub_title(1.0, frozen=True, replay=replay) == replay_status(replay)
    assert replay_status(replay).startswith("1/2 ")


def test_each_alert_raised_is_announced_a_warning_or_an_error_and_one_clearing_is_not() -> None:
    events = [
        AlertEvent(time=NOW, gpu_index=0, mig_index=None, kind="memory", message="GPU 0 memory 95%"),
        AlertEvent(time=NOW, gpu_index=1, mig_index=None, kind="thermal", message="GPU 1 at 90°C"),
        AlertEvent(time=NOW, gpu_index=0, mig_index=None, kind="forecast", message="GPU 0 full in ~2m", cleared=True),
        AlertEvent(time=NOW, gpu_index=2, mig_index=None, kind="idle", message="PID 5 idle for 20m"),
    ]
    assert alert_notices(events) == [
        ("GPU 0 memory 95%", "warning"),
        ("GPU 1 at 90°C", "error"),
        ("PID 5 idle for 20m", "warning"),
    ]
