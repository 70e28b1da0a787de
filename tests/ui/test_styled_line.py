"""A card's line as (text, style) pieces: cut, padded and drawn as Rich would draw the same Text."""

from __future__ import annotations

import pytest
from rich.cells import cached_cell_len, cell_len
from rich.style import Style

from gputop.ui.widgets.card_lines import CardContent, full_lines
from gputop.ui.widgets.styled_line import _ONE_CELL, StripStyles, StyledLine, text_cells

from .factory import gpu

BASE = Style.parse("on #101010")


def drawn(line: StyledLine, width: int) -> list[tuple[str, Style]]:
    """(text, style) of each segment of the line drawn ``width`` cells wide on BASE."""
    return [(segment.text, segment.style) for segment in StripStyles().strip(line.fit(width), BASE, width)]


def test_a_cut_line_ends_in_an_ellipsis_in_the_style_of_the_first_character_cut_off() -> None:
    line = StyledLine(("MEM  ", "bold"), ("61.8", "green"), "/80.0GiB")
    assert drawn(line, 7) == [("MEM  ", BASE + Style(bold=True)), ("6…", BASE + Style(color="green"))]
    assert drawn(line, 6) == [("MEM  ", BASE + Style(bold=True)), ("…", BASE + Style(color="green"))]
    assert drawn(line, 5) == [("MEM …", BASE + Style(bold=True))]


def test_padding_takes_the_line_s_own_style_and_a_nested_line_s_style_lies_under_its_pieces() -> None:
    value = StyledLine("50%", style="green").append(" bw 25%", "bright_black")
    line = StyledLine(("UTIL ", "bold")).append_line(value.fit(12)).append(" end")
    assert drawn(line, 22) == [
        ("UTIL ", BASE + Style(bold=True)),
        ("50%", BASE + Style(color="green")),
        (" bw 25%", BASE + Style(color="bright_black")),
        ("  ", BASE + Style(color="green")),
        (" end ", BASE),
    ]


def test_neighbours_of_one_style_are_drawn_as_one_segment() -> None:
    line = StyledLine("   └ MIG ", "0 1g.10gb ", ("1.0/9.8G", "cyan"), style="bright_black")
    assert drawn(line, 27) == [
        ("   └ MIG 0 1g.10gb ", BASE + Style(color="bright_black")),
        ("1.0/9.8G", BASE + Style(color="cyan")),
    ]


def test_a_lost_gpu_s_card_says_so_in_bold_red() -> None:
    (line,) = full_lines(CardContent(gpu(1, lost=True)), 60)
    assert drawn(line, 60) == [
        ("✖ GPU lost: no longer answering (fallen off the bus?)       ", BASE + Style(bold=True, color="red"))
    ]


def test_each_character_counted_as_one_cell_is_one_cell_to_rich() -> None:
    assert {"°", "█", "▏", "▁", "─", "a", "~"} <= _ONE_CELL
    assert [char for char in sorted(_ONE_CELL) if cell_len(char) != 1] == []


@pytest.mark.parametrize(
    "text", ["", "81°C", "▕██▌  ▏", "42.0 GiB", "tab\there", "bell\x07", "del\x7f", "GPU 显存", "e\u0301", "…", "👍 ok"]
)
def test_a_text_takes_as_many_cells_as_rich_counts(text: str) -> None:
    assert text_cells(text) == cell_len(text)


def test_new_figures_are_measured_without_filling_rich_s_cache() -> None:
    line = StyledLine()
    before = cached_cell_len.cache_info().currsize
    for n in range(300):
        line.append(f"{n * 1.7:.1f}°C ▁▂▃▅▇ ", "green")
    assert line.cell_length == sum(len(f"{n * 1.7:.1f}°C ▁▂▃▅▇ ") for n in range(300))
    assert cached_cell_len.cache_info().currsize == before
