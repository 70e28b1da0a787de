"""Figures as gputop writes them: bytes in binary units, never more than three digits before the point."""

from __future__ import annotations

import pytest

from gputop.core.format import NA, fmt_bytes, fmt_rate

KiB, MiB, GiB = 1024, 1024**2, 1024**3


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0B"),
        (999, "999B"),
        (1000, "1.0KiB"),
        (1536, "1.5KiB"),
        (999.9 * MiB, "999.9MiB"),
        (999.96 * MiB, "1.0GiB"),  # would round to 1000.0MiB: one unit up instead
        (1004.6 * MiB, "1.0GiB"),
        (80 * GiB, "80.0GiB"),
        (1000 * GiB, "1.0TiB"),
        (-2 * GiB, "-2.0GiB"),
        (None, NA),
    ],
)
def test_bytes_use_the_next_unit_at_a_thousand(value: float | None, text: str) -> None:
    assert fmt_bytes(value) == text


def test_no_figure_below_a_petabyte_is_wider_than_eight_characters() -> None:
    # The process panel's GPU-MEM column is eight wide.
    widths = {len(fmt_bytes(n * 1.37)) for n in range(0, 1024**5, 1024**5 // 100_003)}
    assert max(widths) == 8


def test_rates_are_bytes_per_second() -> None:
    assert fmt_rate(12 * MiB) == "12.0MiB/s"
    assert fmt_rate(None) == NA
