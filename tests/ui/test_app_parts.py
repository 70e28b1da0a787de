"""The app's parts without an app: the key table in each mode, sort keys, the panel title, interval steps."""

from __future__ import annotations

from functools import partial

from textual.binding import Binding

from gputop.ui.keymap import BINDINGS, help_entries, key_bindings, key_name, mode_allows, palette_entries
from gputop.ui.process_view import panel_title, sort_for_key
from gputop.ui.sampling_control import next_interval
from gputop.ui.state import ProcessFilter, SortOrder

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
