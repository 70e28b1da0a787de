"""A GPU card's lines and titles without an app: what is wrong comes first, a filtered card's index is
reversed, a lost GPU says so and nothing else, a forecast to fill says FILLING by itself."""

from __future__ import annotations

from gputop.core.analysis.forecast import Forecast
from gputop.ui.widgets.card_lines import CardContent, card_titles, compact_lines, full_lines

from .factory import gpu


def test_the_title_names_the_alerts_before_the_model_and_the_subtitle_the_state_and_clock() -> None:
    title, subtitle = card_titles(CardContent(gpu(0), alert_kinds=("lost", "thermal")), filtered=False)
    assert title.plain == " 0  ⚠ HOT NVIDIA H100 80GB HBM3 "
    assert subtitle is not None and subtitle.plain == " P0 · 1500MHz "


def test_the_card_the_panel_is_filtered_to_shows_its_index_reversed() -> None:
    title, _subtitle = card_titles(CardContent(gpu(3)), filtered=True)
    assert (title.plain[:3], title.spans[0].style) == (" 3 ", "bold reverse")
    line = compact_lines(CardContent(gpu(3)), 90, filtered=True)[0]
    assert line.pieces[0] == (" 3", "bold reverse")


def test_a_lost_gpu_says_lost_and_shows_no_figures_nor_alerts() -> None:
    lost = CardContent(gpu(1, lost=True), alert_kinds=("memory",))
    title, subtitle = card_titles(lost, filtered=False)
    assert (title.plain, subtitle) == (" 1  LOST NVIDIA H100 80GB HBM3 ", None)
    assert [line.plain for line in full_lines(lost, 60)] == ["✖ GPU lost: no longer answering (fallen off the bus?)"]
    assert [line.plain for line in compact_lines(lost, 90, False)] == [" 1 H100 80GB HBM3 ✖ LOST: no longer answering"]


def test_a_full_card_has_memory_utilisation_and_temperature_with_power_lines() -> None:
    lines = [line.plain.rstrip() for line in full_lines(CardContent(gpu(0)), 60)]
    assert lines == [
        "MEM  ▏░░░░░░░░░░░ 0.5/80.0GiB   1%",
        "UTIL ██████░░░░░░  50%  bw 25%",
        "TEMP 60°C/87°C  300W/700W",
    ]


def test_a_compact_card_says_when_it_fills_and_leaves_out_the_filling_label_that_repeats_it() -> None:
    content = CardContent(gpu(0), forecast=Forecast(190.0, 1e6), alert_kinds=("forecast", "thermal"))
    line = compact_lines(content, 120, filtered=False)[0].plain
    # HOT first (it is here), the forecast after (trouble coming), in FILLING's place.
    assert "⚠ HOT full ~3m10s " in line and "FILLING" not in line
