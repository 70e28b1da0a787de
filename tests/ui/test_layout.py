"""The layout arithmetic without an app: card heights, columns, and when cards fold to one line."""

from __future__ import annotations

from gputop.core.analysis.diagnosis import GpuDiagnosis
from gputop.core.analysis.diagnosis.health import HealthProblem
from gputop.core.analysis.diagnosis.memory import Unattributed
from gputop.core.model import Activity, GpuSample, MigSample
from gputop.ui.layout import (
    CardLayout,
    card_columns,
    card_lines,
    cards_room,
    needs_compact,
    plan_cards,
    row_heights,
    rows_left,
    toggled_choice,
    too_small,
)
from gputop.ui.widgets.card_lines import CardContent, compact_lines

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


EIGHT = [GpuSample(index=n, name="NVIDIA H100 80GB HBM3") for n in range(8)]


def test_rows_left_under_the_cards_count_title_host_strip_footer_and_the_panels_border_and_header() -> None:
    # 120 columns: two columns of full cards, 4 rows x 5 lines; compact: 8 lines (the panel's border above
    # it, with its title, is the line between them).
    assert rows_left(EIGHT, 120, 40, compact=False, host_shown=True) == 40 - 3 - 20 - 2 == 15
    assert rows_left(EIGHT, 120, 40, compact=True, host_shown=True) == 40 - 3 - 8 - 2 == 27
    assert rows_left(EIGHT, 120, 40, compact=False, host_shown=False) == 16
    # 80x24: full cards scroll in their room, the panel keeps 5 rows; compact ones leave 11.
    assert rows_left(EIGHT, 80, 24, compact=False, host_shown=True) == 5
    assert rows_left(EIGHT, 80, 24, compact=True, host_shown=True) == 11


def test_full_cards_give_way_when_they_would_leave_fewer_than_15_process_rows() -> None:
    # 8 GPUs at 120 columns: full cards leave 14 rows at 39 lines, 15 at 40.
    assert needs_compact(EIGHT, 120, 39, process_rows=20, panel_shown=True) is True
    assert needs_compact(EIGHT, 120, 40, process_rows=20, panel_shown=True) is False
    # One column at 80: 40 lines of cards, so 60 lines for 15 rows.
    assert needs_compact(EIGHT, 80, 60, process_rows=20, panel_shown=True) is False
    assert needs_compact(EIGHT, 80, 59, process_rows=20, panel_shown=True) is True
    # The hidden host strip gives a line back.
    assert needs_compact(EIGHT, 120, 39, process_rows=20, panel_shown=True, host_shown=False) is False


def test_with_few_processes_full_cards_need_room_for_those_rows_only() -> None:
    assert needs_compact(EIGHT, 120, 35, process_rows=10, panel_shown=True) is False  # 10 rows left
    assert needs_compact(EIGHT, 120, 34, process_rows=10, panel_shown=True) is True
    # No process at all: the panel still keeps its 5 rows (full cards would scroll).
    assert needs_compact(EIGHT, 120, 30, process_rows=0, panel_shown=True) is False
    assert needs_compact(EIGHT, 120, 29, process_rows=0, panel_shown=True) is True


def test_compact_cards_unfold_only_when_full_ones_would_leave_two_rows_more_than_wanted() -> None:
    # 8 GPUs at 120x39: full cards leave 14 rows, enough for 14 processes, not for 15.
    assert needs_compact(EIGHT, 120, 39, process_rows=14, panel_shown=True) is False
    assert needs_compact(EIGHT, 120, 39, process_rows=15, panel_shown=True) is True
    # Folded at 15, they stay folded at 14 and 13, and unfold at 12.
    folded = [needs_compact(EIGHT, 120, 39, process_rows=n, panel_shown=True, shown_compact=True) for n in (14, 13, 12)]
    assert folded == [True, True, False]


def test_with_the_panel_hidden_full_cards_unless_they_would_scroll() -> None:
    assert needs_compact(EIGHT, 80, 43, process_rows=20, panel_shown=False) is False
    assert needs_compact(EIGHT, 80, 42, process_rows=20, panel_shown=False) is True


def test_when_both_forms_scroll_the_compact_one_hides_less() -> None:
    sixteen = [GpuSample(index=n) for n in range(16)]
    # 80x24: either form leaves the panel its 5 rows; 17 compact lines scroll less than 80 full ones.
    assert rows_left(sixteen, 80, 24, compact=False, host_shown=True) == 5
    assert rows_left(sixteen, 80, 24, compact=True, host_shown=True) == 5
    assert needs_compact(sixteen, 80, 24, process_rows=40, panel_shown=True) is True


def warned(index: int = 0) -> CardContent:
    """A hot GPU at its memory limit, throttled, with an XID: four warnings on one card."""
    diagnosis = GpuDiagnosis(
        verdict="throttled",
        limiting=("sw_power_cap",),
        unattributed=Unattributed(memory=0, shown=False),
        health=(HealthProblem("xid 79", 0.0, "XID 79: fell off the bus"),),
        new_ecc_errors=False,
    )
    gpu = GpuSample(index=index, name="NVIDIA H100 80GB HBM3", memory_used=79 * 2**30, memory_total=80 * 2**30)
    return CardContent(gpu, alert_kinds=("memory", "thermal"), diagnosis=diagnosis)


def test_a_card_keeps_its_marks_when_the_words_fit_on_its_line_or_title() -> None:
    # Compact: index, name, memory bar, figures and the util/°C/W tail leave the marks the rest; at 100
    # columns all four fit, at 80 the lesser ones fold into "+3" behind HEALTH.
    assert warned().keeps_marks(100, compact=True) is True
    assert warned().keeps_marks(80, compact=True) is False
    # Full: the marks sit in the border title, before the name.
    assert warned().keeps_marks(60, compact=False) is True
    assert warned().keeps_marks(30, compact=False) is False
    assert CardContent(PLAIN).keeps_marks(10, compact=True) is True  # nothing to lose


def test_a_form_that_would_cut_a_warning_is_not_picked_by_itself() -> None:
    one = [warned().gpu]
    # 24 lines: a full card leaves 13 rows, a compact one 16; at 100 columns the compact line keeps
    # HEALTH MEMORY HOT THROTTLED, at 80 and 60 it would fold them into "+N", so the card stays full.
    assert needs_compact(one, 100, 24, process_rows=20, panel_shown=True, contents=[warned()]) is True
    assert needs_compact(one, 80, 24, process_rows=20, panel_shown=True, contents=[warned()]) is False
    assert needs_compact(one, 60, 24, process_rows=20, panel_shown=True, contents=[warned()]) is False
    # Where both forms cut a warning, the most rows win.
    assert needs_compact(one, 30, 24, process_rows=20, panel_shown=True, contents=[warned()]) is True


def test_c_holds_the_other_form_or_hands_the_choice_back_when_it_lands_on_gputops_own() -> None:
    assert toggled_choice(shown_compact=False, auto_compact=False) is True
    assert toggled_choice(shown_compact=True, auto_compact=True) is False
    assert toggled_choice(shown_compact=True, auto_compact=False) is None
    assert toggled_choice(shown_compact=False, auto_compact=True) is None


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
    # 24 lines: title, host strip, footer, and a panel of 5 rows + its border above and header.
    assert cards_room(24, panel_shown=True, host_shown=True) == 24 - 3 - 7
    assert cards_room(24, panel_shown=True, host_shown=False) == 24 - 2 - 7
    assert cards_room(24, panel_shown=False, host_shown=True) == 24 - 3
    assert cards_room(10, panel_shown=True, host_shown=True) == 1
    # Below 24 lines a line for each GPU comes first, the panel keeping one row (40x10: 4 of 7 lines).
    assert cards_room(10, panel_shown=True, host_shown=True, gpu_count=4) == 4
    assert cards_room(10, panel_shown=True, host_shown=True, gpu_count=8) == 4
    assert cards_room(24, panel_shown=True, host_shown=True, gpu_count=16) == 24 - 3 - 7


def test_full_cards_that_scroll_keep_no_marks_so_a_folded_compact_row_wins() -> None:
    four = [warned(index) for index in range(4)]
    gpus = [content.gpu for content in four]
    # 80x24: full cards scroll, GPUs 2 and 3 out of sight with every mark; compact rows fold all but
    # HEALTH into "+3", yet every GPU's worst mark stays in sight, and the panel gets its rows.
    assert four[0].keeps_marks(80, compact=True) is False
    assert needs_compact(gpus, 80, 24, process_rows=20, panel_shown=True, contents=four) is True
    # With room for four full cards and the panel's rows, full cards say it all.
    assert needs_compact(gpus, 80, 60, process_rows=20, panel_shown=True, contents=four) is False


def test_a_compact_row_gives_its_sm_figure_to_the_worst_mark_and_keeps_util_temperature_and_power() -> None:
    diagnosis = GpuDiagnosis(
        verdict="throttled", limiting=("sw_power_cap",), unattributed=Unattributed(memory=0, shown=False),
        health=(), new_ecc_errors=False,
    )
    gpu = GpuSample(
        index=0, name="NVIDIA H100 80GB HBM3", memory_used=66 * 2**30, memory_total=80 * 2**30, utilization_gpu=91,
        temperature=77, power_draw=612, activity=Activity(sm_active=66.0),
    )
    throttled = CardContent(gpu, diagnosis=diagnosis)
    row = compact_lines(throttled, 76, False)[0].plain
    assert "THROTTLED" in row and " sm" not in row and row.rstrip().endswith("91%  77°C  612W")
    # Where the mark fits beside it, the SM figure stays.
    wide = compact_lines(throttled, 96, False)[0].plain
    assert "THROTTLED" in wide and wide.rstrip().endswith("91% sm 66%  77°C  612W")
