"""The app's parts without an app: the key table in each mode and where each key lives, sort keys and the sort
menu's choice, the layout of the main screen, the panel title, interval steps, the GPU filter's refusal,
the title's lateness and words, and what alerts are announced."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from textual.binding import ActiveBinding, Binding
from textual.geometry import Size
from textual.screen import Screen
from textual.widgets import Static

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.recording.record import Recording
from gputop.core.recording.replay import Replay
from gputop.ui import keymap, layout
from gputop.ui.controls.key_control import KeyControl
from gputop.ui.controls.layout_control import LayoutControl
from gputop.ui.controls.sampling_control import next_interval
from gputop.ui.controls.title_control import TitleControl, TitleFacts, late_s, sub_title
from gputop.ui.feed import alert_notices
from gputop.ui.keymap import BINDINGS, help_entries, key_bindings, key_name, mode_allows, palette_entries
from gputop.ui.panel.panel_words import no_such_gpu, panel_title
from gputop.ui.widgets.card_lines import CardContent
from gputop.ui.widgets.process_filter import ProcessFilter
from gputop.ui.widgets.replay_title import replay_status
from gputop.ui.widgets.rows import SortOrder, picked_order, sort_for_key

from .factory import NOW, gpu, proc, snapshot

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


def test_the_brackets_step_the_interval_and_stop_at_the_ends() -> None:
    assert [next_interval(1.0, 1), next_interval(1.0, -1), next_interval(0.7, 1), next_interval(0.7, -1)] == [
        2.0, 0.5, 1.0, 0.5
    ]
    assert (next_interval(60.0, 1), next_interval(0.1, -1)) == (60.0, 0.1)


def test_the_sort_menu_keeps_the_direction_of_the_current_column_and_picks_another_in_its_own() -> None:
    assert picked_order(SortOrder("cpu", False), "cpu") == SortOrder("cpu", False)
    assert picked_order(SortOrder("cpu", False), "pid") == SortOrder("pid", False)
    assert picked_order(SortOrder("pid", False), "gpu_memory") == SortOrder("gpu_memory", True)


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


def test_each_key_lives_in_one_place_and_the_footer_keeps_the_declared_order() -> None:
    places = [keymap.APP_BINDINGS, keymap.MAIN_SCREEN_BINDINGS, keymap.PANEL_BINDINGS, keymap.TABLE_BINDINGS]
    assert sum(len(place) for place in places) == len(BINDINGS)
    where = {binding.action: n for n, place in enumerate(places) for binding in key_bindings(place)}
    actions = ("help", "toggle_compact", "filter", "kill", "sort_move(1)", "quit")
    assert [where[action] for action in actions] == [0, 1, 2, 3, 3, 0]
    # Keys of the panel, the screen and the app, gathered in that order by the focus chain, shown in keymap's.
    kill, screen_escape, help_key = (
        next(b for b in key_bindings(BINDINGS) if b.action == action) for action in ("kill", "clear_filter", "help")
    )
    node = object()
    active = {"k": ActiveBinding(node, kill, True, ""), "escape": ActiveBinding(node, screen_escape, True, ""),
              "f1": ActiveBinding(node, help_key, True, "")}  # type: ignore[arg-type]
    assert list(keymap.in_footer_order(active)) == ["f1", "escape", "k"]
    # A screen's own keys (Esc Back) come first.
    back = Binding("escape", "back", "Back")
    screen = object()
    own = {"f1": active["f1"], "escape": ActiveBinding(screen, back, True, "")}  # type: ignore[arg-type]
    assert list(keymap.in_footer_order(own, own=screen)) == ["escape", "f1"]


def test_the_mode_and_the_filter_decide_which_keys_act_and_the_palette_runs_each_where_it_lives() -> None:
    shown = [False]
    live = KeyControl(readonly=False, replaying=False, filter_shown=lambda: shown[0])
    assert live.allows("kill") and not live.allows("kill_refused") and not live.allows("replay_pause")
    assert not live.allows("clear_filter")
    shown[0] = True
    assert live.allows("clear_filter")
    read_only = KeyControl(readonly=True, replaying=False, filter_shown=lambda: False)
    assert not read_only.allows("kill") and read_only.allows("kill_refused") and read_only.allows("freeze")
    panel, app = object(), object()
    kill = next(b for b in key_bindings(BINDINGS) if b.action == "kill")
    freeze = next(b for b in key_bindings(BINDINGS) if b.action == "freeze")
    active = [ActiveBinding(panel, kill, True, ""), ActiveBinding(app, freeze, True, "")]  # type: ignore[arg-type]
    assert live.palette_entries(active) == [("Kill", "key: k, F9", "kill", panel), ("Freeze", "key: f", "freeze", app)]
    assert read_only.palette_entries(active) == [("Freeze", "key: f", "freeze", app)]


class _Grid:
    """Stands for the cards' grid: what the room has it draw."""

    def __init__(self) -> None:
        self.drawn: list[layout.CardLayout] = []

    def show(self, contents: Sequence[CardContent], plan: layout.CardLayout) -> None:
        self.drawn.append(plan)


def test_the_main_screen_s_room_too_small_compact_and_the_parts_hidden_without_an_app() -> None:
    grid = _Grid()
    room = LayoutControl(
        main=Static(), footer=Static(), too_small=Static(), area=Static(), grid=grid,  # type: ignore[arg-type]
        panel=Static(), host=Static(), size=lambda: Size(120, 40),
    )
    room.resized(120, 40)
    assert grid.drawn == []  # no tick yet: nothing to lay out
    room.show_cards([CardContent(gpu(n, [proc(100 + n, n, 5)])) for n in range(8)], process_rows=8)
    assert len(grid.drawn) == 1
    room.resized(39, 10)  # the minimum is 40x10
    assert (room.main.display, room.footer.display, room.too_small.display) == (False, False, True)
    room.resized(120, 40)
    assert (room.main.display, room.footer.display, room.too_small.display) == (True, True, False)
    full = grid.drawn[-1].compact
    room.toggle_compact()
    assert grid.drawn[-1].compact is (not full) and room.compact_choice is (not full)
    room.toggle_processes()
    assert room.panel.display is False and len(grid.drawn) == 5
    room.toggle_host()
    assert room.host.display is False and len(grid.drawn) == 6


def test_the_title_says_the_interval_and_frozen_from_the_facts_it_is_given() -> None:
    titles: list[str] = []
    timers: list[float] = []
    facts = TitleFacts(
        snapshot=None, latest=None, interval_s=2.0, replay=None, recording=None, readonly=False, frozen=True,
        live=False, started_at=None, alerts=0,
    )
    control = TitleControl(
        facts=lambda: facts, set_sub_title=titles.append, top=lambda: Screen(),
        later=lambda seconds, _call: timers.append(seconds),  # type: ignore[func-returns-value]
    )
    control.update()
    assert titles == ["every 2s · FROZEN"]
    control.watch_lateness()
    assert timers == []  # frozen: nothing can turn late, and the title does not wake by itself
