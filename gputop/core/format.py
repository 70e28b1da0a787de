"""Turning base units into short human text. Used only at the edges (UI, report)."""

from __future__ import annotations

import re

from gputop.core.glyphs import glyphs
from gputop.core.text_cut import cut_end

NA = "N/A"
NOT_YET = "…"  # a figure that needs two readings (CPU %, a rate), before it has them: not 0, not N/A

_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def fmt_bytes(value: float | None, precision: int = 1) -> str:
    """1536 -> '1.5KiB'; None -> 'N/A'.

    At 1000 of a unit the next one is used (1000 MiB -> '1.0GiB'), so a figure never needs more
    than three digits before the point: '999.9MiB' is as wide as it gets below a TiB.
    """
    if value is None:
        return NA
    size = float(value)
    sign = "-" if size < 0 else ""
    size = abs(size)
    for unit in _BINARY_UNITS:
        if round(size, precision if unit != "B" else 0) < 1000 or unit == _BINARY_UNITS[-1]:
            if unit == "B":
                return f"{sign}{int(size)}B"
            return f"{sign}{size:.{precision}f}{unit}"
        size /= 1024
    raise AssertionError("unreachable")


def fmt_rate(value: float | None) -> str:
    """Bytes per second: '12.0MiB/s'."""
    return NA if value is None else fmt_bytes(value) + "/s"


def fmt_percent(value: float | None, precision: int = 0) -> str:
    return NA if value is None else f"{value:.{precision}f}%"


def fmt_temperature(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}°C"


def fmt_watts(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}W"


def fmt_duration(seconds: float | None) -> str:
    """Compact elapsed time: '45s', '3m12s', '5h07m', '12d03h'."""
    if seconds is None:
        return NA
    total = max(0, int(seconds))
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


def fmt_age(seconds: float) -> str:
    """How long ago, to a tenth of a second under 10 s: '0.6s', '14s', '3m12s'."""
    if seconds < 10:
        return f"{max(0.0, seconds):.1f}s"
    return fmt_duration(seconds)


def fmt_growth(bytes_per_s: float | None) -> str:
    """Memory growth per minute: '+1.2GiB/min'."""
    if bytes_per_s is None:
        return NA
    per_min = bytes_per_s * 60
    sign = "+" if per_min >= 0 else "-"
    return f"{sign}{fmt_bytes(abs(per_min))}/min"


def safe_text(text: str | None, limit: int | None = None) -> str:
    """Make text that other users control safe to print: control characters shown as escapes.

    Terminal escape sequences, newlines and tabs in a process name or command line
    are shown as visible ``\\x1b``-style escapes and never reach the terminal raw.
    """
    if text is None:
        return NA
    out: list[str] = []
    for char in text:
        code = ord(char)
        if code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif char in "\u2028\u2029\ufeff" or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    result = "".join(out)
    return result if limit is None else cut_end(result, limit)


# In JSON from json.dumps(ensure_ascii=False), these can only be inside strings.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def safe_json(text: str) -> str:
    """JSON text with C1 control characters and lone surrogates written as ``\\uXXXX`` escapes.

    json.dumps escapes C0 controls but not C1 ones, which a terminal showing the output
    may act on; and a command line with bytes that are not UTF-8 reaches us (through
    psutil) as lone surrogates, which no UTF-8 stream accepts. The escapes read back as
    the same characters, so a recording loses nothing.
    """
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def bar_cells(percent: float | None, width: int) -> tuple[str, str] | None:
    """A bar ``width`` cells wide for ``percent`` (0-100): the filled cells, to eighth-cell precision
    (whole cells in ASCII), and the empty ones; None when the figure is not known (each output shows
    that its own way)."""
    if percent is None:
        return None
    if width <= 0:
        return "", ""
    drawn = glyphs()
    steps = len(drawn.bar_eighths) + 1  # the steps a cell is filled in
    filled_steps = round(min(100.0, max(0.0, percent)) / 100 * width * steps)
    full, part = divmod(filled_steps, steps)
    filled = drawn.bar_full * full + (drawn.bar_eighths[part - 1] if part and full < width else "")
    return filled, drawn.bar_empty * (width - len(filled))
