"""The detail screen's docked header at 80x24: the same facts in six lines instead of eight (shorter
words, the pair of memory figures under one unit, short fields filling the ends of earlier lines)."""

from __future__ import annotations

from gputop.ui.screens.detail import DetailHeader, flow, header_fields
from gputop.ui.widgets.host_strip import HostStrip

from .factory import demo_snapshots, make_app, screen_text

# The demo's GPU 1: GPM activity, NVLink, the PCIe link and energy, each on the header.
SNAPSHOT = demo_snapshots(4, 1)[0]
GPU = SNAPSHOT.gpus[1]
INSIDE_80 = 78  # the header's width at 80 columns: the screen below it scrolls, beside its scrollbar


def lines(short: bool, width: int) -> list[str]:
    fields = header_fields(GPU, None, SNAPSHOT.timestamp, short=short)
    return [line.plain.rstrip() for line in flow(fields, width, backfill=short)]


def test_the_short_header_says_every_fact_of_the_long_one_in_two_lines_less() -> None:
    assert lines(False, INSIDE_80) == [
        " GPU 1  NVIDIA H100 80GB HBM3  memory 75.1GiB/80.0GiB 94%  util 100%",
        "temp 44°C (slowdown 87°C)  memory 47°C  power 146W/700W  fan N/A",
        "SM 1980/1980MHz  memory clock 2619/2619MHz  PCIe rx 12.1GiB/s tx 3.8GiB/s  P0",
        "GPU-00000001-d3m0-4001-8000-000000c0ffef  bus 00000000:28:00.0",
        "SM active 1% (occupancy 0%)  FP64 0% FP32 0% FP16 0%  PCIe Gen5 x16",
        "NVLink 4 18/18 links rx 2.0GiB/s tx 2.0GiB/s",
        "NVLink errors CRC 0 replay 0 recovery 0",
        "energy 0.0 Wh since start, 263.89 kWh since the driver loaded",
    ]
    # The temperatures together, the UUID with the bus; NVLink's three error counts all 0.
    assert lines(True, INSIDE_80) == [
        " GPU 1  NVIDIA H100 80GB HBM3  mem 75.1/80.0GiB 94%  util 100%  fan N/A  P0",
        "temp 44°C (slow 87°C)  mem 47°C  power 146W/700W  SM 1980/1980MHz",
        "mem clk 2619/2619MHz  PCIe rx 12.1GiB/s tx 3.8GiB/s  SM active 1% (occ 0%)",
        "GPU-00000001-d3m0-4001-8000-000000c0ffef bus 0000:28:00.0  PCIe Gen5 x16",
        "FP64 0% FP32 0% FP16 0%  NVLink 4 18/18 links rx 2.0GiB/s tx 2.0GiB/s",
        "NVLink errors 0  energy 0.0 Wh since start, 263.89 kWh since driver load",
    ]


async def test_at_80x24_the_host_strip_fits_and_the_docked_header_takes_six_lines_at_120x40_its_words() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(SNAPSHOT)
        await pilot.pause()
        # On the way, the host strip: every figure whole inside its padding (the energy gave way).
        strip = screen_text(app).splitlines()[app.query_one(HostStrip).region.y]
        assert strip.strip() == "CPU 42%  RAM 415G/1T  SWP 2G/64G  LOAD 24.6  GPU 1.1kW  NET ▼119M/s ▲42M/s"
        await pilot.click("#gpu-1")  # GPU 1's card opens its detail
        await pilot.pause()
        header = app.screen.query_one(DetailHeader)
        assert header.size.height == 6
        # The header is docked above the part that scrolls: it has the terminal's whole width.
        assert [line.rstrip() for line in screen_text(app).splitlines()[:6]] == lines(True, 80)
        await pilot.resize_terminal(120, 40)
        await pilot.pause()
        assert screen_text(app).splitlines()[0].startswith(" GPU 1  NVIDIA H100 80GB HBM3  memory 75.1GiB/80.0GiB 94%")
