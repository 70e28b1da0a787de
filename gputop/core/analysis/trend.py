"""The robust straight-line fit under every forecast (see core.analysis.forecast for how it is used)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations


@dataclass(frozen=True, slots=True)
class Trend:
    """A robust straight-line fit of the recent points of one series."""

    slope: float  # units per second
    value_now: float  # the line's value at the newest point
    span_s: float  # time between the oldest and newest points used
    steady: bool  # the line explains the data (see the module docstring)
    residual: float = 0.0  # the median absolute distance of the points from the line
    points: int = 0  # how many points the fit used



def median(sorted_values: Sequence[float]) -> float:
    middle = len(sorted_values) // 2
    if len(sorted_values) % 2:
        return sorted_values[middle]
    return (sorted_values[middle - 1] + sorted_values[middle]) / 2.0


def kept_points(
    timestamps: Sequence[float], values: Sequence[int | float | None], window_s: float, max_points: int
) -> tuple[list[float], list[float]]:
    """The known points of the last ``window_s`` seconds, at most ``max_points`` of them spread evenly."""
    count = len(timestamps)
    if count < 2:
        return [], []
    # Binary search and direct indexing: only the kept points are ever read,
    # however long the history behind them is.
    first = bisect_left(timestamps, timestamps[-1] - window_s)
    last = count - 1
    if last - first + 1 > max_points:
        indices = [first + (k * (last - first)) // (max_points - 1) for k in range(max_points)]
    else:
        indices = list(range(first, count))
    times: list[float] = []
    points: list[float] = []
    for index in indices:
        value = values[index]
        if value is not None:
            times.append(timestamps[index])
            points.append(value)
    return times, points


def fit_trend(
    timestamps: Sequence[float],
    values: Sequence[int | float | None],
    window_s: float,
    max_points: int,
    max_residual_ratio: float = 0.1,
) -> Trend | None:
    """Theil–Sen fit of the points of the last ``window_s`` seconds; None under 2 points."""
    times, points = kept_points(timestamps, values, window_s, max_points)
    if len(times) < 2:
        return None

    t_last = times[-1]
    # Every pair of points, in floats (memory's byte counts are exact in a float up to 8 PiB): half the
    # time of indexing two lists of integers for each pair (24 points: 276 pairs, 70 us a fit).
    pairs = list(zip(times, map(float, points), strict=True))
    slopes = sorted([(pj - pi) / (tj - ti) for (ti, pi), (tj, pj) in combinations(pairs, 2) if tj != ti])
    if not slopes:
        return None
    slope = median(slopes)
    offsets = [p - slope * (t - t_last) for t, p in zip(times, points, strict=True)]
    value_now = median(sorted(offsets))
    residual = median(sorted([abs(offset - value_now) for offset in offsets]))
    span_s = t_last - times[0]
    rise = abs(slope) * span_s
    steady = rise > 0.0 and residual <= max_residual_ratio * rise
    return Trend(slope=slope, value_now=value_now, span_s=span_s, steady=steady, residual=residual, points=len(times))


# The median absolute deviation of normal noise times this is its standard deviation.
MAD_TO_SIGMA = 1.4826
