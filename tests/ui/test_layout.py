"""The layout arithmetic without an app: card heights, columns, and when cards fold to one line."""

from __future__ import annotations

from gputop.core.model import GpuSample, MigSample
from gputop.ui.layout import (
    CardLayout,
    card_columns,
    card_lines,
    cards_room,
    needs_compact,
    plan_cards,
    row_heights,
    too_small,
)

PLAIN = GpuSample(index=0)
MIG = GpuSample(index=1, mig_devices=(MigSample(index=0), MigSample(index=1)))
LOST = GpuSample(index=2, lost=True, mig_devices=(MigSample(index=0),))


def test_a_full_card_has_borders_three_lines_and_a_line_per_mig_device() -> None:
    assert [card_lines(gpu, False) for gpu in (PLAIN, MIG, LOST)] == [5, 7, 3]


def test_a_compact_card_is_one_line_or_two_with_mig_devices_unless_lost() -> None:
    assert [card_lines(gpu, True) for gpu in (PLAIN, MIG, LOST)] == [1, 2, 1]


def test_two_columns_of_full_cards_from_100_columns_and_of_compact_ones_from_170() -> None:
    assert [card_columns(2, False, width) for width in (99, 100)] == [1, 2]
    assert [card_columns(8, True, width) for width in (169, 170)] == [1, 2]
    assert card_columns(1, False, 300) == 1


def test_cards_side_by_side_share_the_tallest_ones_height() -> None:
    assert row_heights([5, 7, 3], 2) == [7, 3]
    assert row_heights([5, 7, 3], 1) == [5, 7, 3]
    assert row_heights([], 2) == []


def test_the_terminal_is_too_small_below_40_by_10() -> None:
    assert [too_small(w, h) for w, h in ((39, 10), (40, 9), (40, 10))] == [True, True, False]


def test_full_cards_give_way_when_the_panel_would_keep_fewer_than_a_dozen_rows() -> None:
    eight = [GpuSample(index=n) for n in range(8)]
    # 8 cards x 5 lines = 40, plus 12 panel rows + 3 = 55, plus 3 for title, footer and border.
    assert needs_compact(eight, 80, 58, process_rows=20, panel_shown=True) is False
    assert needs_compact(eight, 80, 57, process_rows=20, panel_shown=True) is True
    # Two columns halve the cards' height; a hidden panel needs no room.
    assert needs_compact(eight, 120, 38, process_rows=20, panel_shown=True) is False
    assert needs_compact(eight, 80, 43, process_rows=20, panel_shown=False) is False
    # With few processes the panel keeps room for six lines, not a dozen rows.
    assert needs_compact(eight, 80, 49, process_rows=1, panel_shown=True) is False
    assert needs_compact(eight, 80, 48, process_rows=1, panel_shown=True) is True


def test_the_plan_follows_the_users_choice_else_the_room_left() -> None:
    gpus = [PLAIN, MIG, LOST]
    assert plan_cards(gpus, 120, 50, compact_choice=None, process_rows=2, panel_shown=True) == CardLayout(
        compact=False, columns=2, heights=(7, 3)
    )
    assert plan_cards(gpus, 120, 50, compact_choice=True, process_rows=2, panel_shown=True) == CardLayout(
        compact=True, columns=1, heights=(1, 2, 1)
    )
    assert plan_cards(gpus, 120, 12, compact_choice=None, process_rows=2, panel_shown=True).compact is True
    assert CardLayout(compact=False, columns=2, heights=(7, 3)).height_of(2) == 3


def test_the_cards_leave_the_panel_room_for_five_rows_and_take_it_all_when_it_is_hidden() -> None:
    # 24 lines: title, host strip, footer, and a panel of 5 rows + borders and header.
    assert cards_room(24, panel_shown=True, host_shown=True) == 24 - 3 - 8
    assert cards_room(24, panel_shown=True, host_shown=False) == 24 - 2 - 8
    assert cards_room(24, panel_shown=False, host_shown=True) == 24 - 3
    assert cards_room(10, panel_shown=True, host_shown=True) == 1
