"""The host strip's text is in parts, each the same object while it reads the same (issue 36, item 5): a figure
that did not move, or moved without changing what it reads, costs a look-up and keeps its part, and its
segments; the line the strip draws is, segment for segment, the one its whole text drew before."""

from __future__ import annotations

from dataclasses import replace

from rich.segment import Segment

from gputop.core.model import Energy, HostSample
from gputop.ui.widgets.host_strip import HostStrip, host_parts, host_text
from gputop.ui.widgets.styled_line import StripStyles

from .factory import HOST, gpu, make_app, snapshot

GPUS = tuple(replace(gpu(n), energy=Energy(since_start_j=3.6e6)) for n in range(4))  # 1.2 kW, 4.00 kWh
DARK = tuple(replace(gpu(n), power_draw=None) for n in range(4))  # no GPU reports its power


def test_a_part_is_the_same_object_while_it_reads_the_same_and_a_new_one_when_it_does_not() -> None:
    parts = host_parts(HOST, 160, GPUS)
    assert [part.plain for part in parts] == [
        "CPU ███▊░░░░░░  37.5%  ", "RAM ███▉░░░░░░ 200.0GiB/512.0GiB  ", "SWP 1.0GiB/16.0GiB  ",
        "LOAD 12.00 10.50 9.25", "  GPU 1.2kW 4.00 kWh  ", "NET ▼50.0MiB/s ▲5.0MiB/s",
    ]
    # RAM moved by 4 KiB and the network by a byte a second: they read the same, and are the same parts.
    # The CPU moved: its part alone is new. The GPUs used a little more energy: it reads the same.
    moved = replace(HOST, cpu_percent=40.0, memory_used=HOST.memory_used + 4096, net_rx_rate=50 * 1024**2 + 1)
    gpus = tuple(replace(card, energy=Energy(since_start_j=3.6e6 + 10)) for card in GPUS)
    again = host_parts(moved, 160, gpus)
    assert [new is old for new, old in zip(again, parts, strict=True)] == [False, True, True, True, True, True]
    assert again[0].plain == "CPU ████░░░░░░  40.0%  "
    assert "".join(part.plain for part in again) == host_text(moved, 160, gpus).plain
    # Narrower, the energy gives way: the GPUs' part alone is another.
    narrow = host_parts(moved, 118, gpus)
    assert [part.plain for part in narrow][3:5] == ["LOAD 12.00", "  GPU 1.2kW  "]


def test_a_part_read_again_is_the_same_object_after_many_other_readings_came_between() -> None:
    # A host (of this test alone) seen first, then other readings (the CPU's and the RAM's words new in each:
    # twice as many bars' words as RAM figures) until its RAM words are the oldest of the bars' kept and its
    # figures among the newest forty of the RAM's; then the host as it was and its RAM moved by 4 KiB: it reads
    # the same, one part.
    host = replace(HOST, memory_total=768 * 1024**3)
    host_parts(host, 160, GPUS)
    for gib in range(1, 41):
        host_parts(replace(host, cpu_percent=gib / 2, memory_used=gib * 1024**3), 160, GPUS)
    parts = host_parts(host, 160, GPUS)
    again = host_parts(replace(host, memory_used=host.memory_used + 4096), 160, GPUS)
    assert again[1].plain == parts[1].plain == "RAM ██▋░░░░░░░ 200.0GiB/768.0GiB  "
    assert again[1] is parts[1]


def segments_drawn(strip: HostStrip) -> list[Segment]:
    return list(strip.render_line(0))



async def test_the_strip_draws_its_parts_as_its_whole_text_drew_segment_for_segment() -> None:
    # The wide form (parts) and the narrow one (one part); with and without the GPUs' power, whose absence
    # puts two parts of one style side by side (the load's figure, then the spaces before NET): one segment.
    hosts = [HOST, replace(HOST, swap_used=0, swap_total=0, net_interfaces=()), HostSample()]
    for size in ((120, 40), (80, 24), (200, 40)):
        app = make_app()
        async with app.run_test(size=size) as pilot:
            strip = app.query_one(HostStrip)
            for host in hosts:
                for gpus in (GPUS, DARK, ()):
                    app.apply_snapshot(replace(snapshot(*(gpus or (gpu(0),))), host=host))
                    strip.show(host, gpus)
                    await pilot.pause()
                    width = strip.content_size.width
                    whole = StripStyles().strip(host_text(host, width, gpus), strip.line_style, width)
                    assert segments_drawn(strip) == list(whole), (size, host, len(gpus))
            if size == (120, 40):  # the seam: the load's figure and the spaces before NET, one segment
                strip.show(HOST, DARK)
                await pilot.pause()
                assert "LOAD 12.00  NET" in host_text(HOST, strip.content_size.width, DARK).plain
                assert "12.00  " in [segment.text for segment in segments_drawn(strip)]
