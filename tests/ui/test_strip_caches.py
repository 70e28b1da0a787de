"""Private 4: a strip makes its caches when it first uses one, and never caches itself, so strips
cost less memory and none of them is left for the garbage collector; what every Strip operation
returns is unchanged."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.cache import FIFOCache
from textual.strip import Strip

from gputop.ui.textual_private import strip_caches_on_first_use

# Every Strip operation that reads or fills a cache, on a few strips; printed as text and styles.
OPERATIONS = r"""
import json, sys
from rich.console import Console
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import ANSIToTruecolor
from textual.strip import Strip
from rich.terminal_theme import MONOKAI
if sys.argv[1] == "patched":
    from gputop.ui.textual_private import strip_caches_on_first_use
    assert strip_caches_on_first_use()
red, blue = Style.parse("red"), Style.parse("bold #0000ff on yellow")
def show(result):
    strips = result if isinstance(result, list) else [result]
    return [[(text, str(style)) for text, style, _ in strip] + [strip.cell_length] for strip in strips]
out = []
for _ in range(2):  # the second round is answered from the caches
    strip = Strip([Segment("GPU 0 ", red), Segment("▕██▌  ▏", blue), Segment(" 81°C")])
    out += [show(strip.crop(2, 9)), show(strip.crop(0, 99)), show(strip.divide([3, 8, 17])),
            show(strip.divide([strip.cell_length])), show(strip.crop_extend(4, 24, blue)),
            show(strip.crop_extend(0, strip.cell_length, None)), show(strip.apply_style(blue)),
            show(strip.adjust_cell_length(25, red)), show(strip.adjust_cell_length(5)),
            show(strip.extend_cell_length(30, blue)), show(strip.apply_offsets(3, 7)),
            show(strip.apply_filter(ANSIToTruecolor(MONOKAI), Color(0, 0, 0))), strip.render(Console())]
print(json.dumps(out))
"""


def _run(which: str) -> list[object]:
    done = subprocess.run([sys.executable, "-c", OPERATIONS, which], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_every_strip_operation_answers_as_textual_does() -> None:
    patched, textual = _run("patched"), _run("textual")
    assert len(patched) == 26
    assert patched == textual


@pytest.fixture(scope="module", autouse=True)
def _patched() -> None:
    assert strip_caches_on_first_use()


def test_a_new_strip_holds_no_cache() -> None:
    gc.collect()
    before = sum(type(o) is FIFOCache or isinstance(o, FIFOCache) for o in gc.get_objects())
    strips = [Strip([Segment(f"line {n}")]) for n in range(500)]
    after = sum(type(o) is FIFOCache or isinstance(o, FIFOCache) for o in gc.get_objects())
    assert len(strips) == 500 and after - before == 0


def test_a_cache_is_made_on_first_use_and_answers_again() -> None:
    strip = Strip([Segment("memory 41.2 GiB", Style.parse("bold"))])
    first = strip.crop(3, 9)
    assert first.text == "ory 41"
    assert strip.crop(3, 9) is first
    assert strip.apply_style(Style.parse("red")) is strip.apply_style(Style.parse("red"))


def test_a_strip_that_would_cache_itself_is_freed_without_the_garbage_collector() -> None:
    gc.collect()
    gc.disable()
    try:
        for n in range(200):
            strip = Strip([Segment(f"row {n} "), Segment("x", Style.parse("red"))])
            assert strip.divide([strip.cell_length]) == [strip]
            assert strip.crop_extend(0, strip.cell_length, None) is strip
            assert strip.divide([2, strip.cell_length])[0].text == "ro"
            del strip
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_a_strip_of_another_shape_is_left_as_textual_made_it() -> None:
    class OtherStrip:
        __slots__ = ("_segments", "_cell_length", "_crop_cache", "_line_cache")

        def __init__(self, segments: list[Segment], cell_length: int | None = None) -> None:
            self._segments, self._cell_length = list(segments), cell_length
            self._crop_cache: FIFOCache[int, int] = FIFOCache(4)
            self._line_cache = "kept"  # a slot that is neither a cache nor one of those known

    init = OtherStrip.__init__
    assert strip_caches_on_first_use(OtherStrip) is False
    assert OtherStrip.__init__ is init
    assert type(OtherStrip([])._crop_cache) is FIFOCache
