"""The host strip at 80 columns: one line that fits the 78 cells inside its padding, giving way in
order of least use (the GPUs' energy, the swap's size, unused swap) before anything is cut. On
screen at 80x24: tests/ui/test_detail_header.py."""

from __future__ import annotations

import dataclasses

from gputop.core.model import Energy, HostSample
from gputop.ui.widgets.host_strip import host_text

from .factory import GIB, HOST, gpu

TIB = 1024 * GIB
INSIDE_80 = 78  # 80 columns less the strip's padding
# Eight busy GPUs that have used 1.23 kWh since gputop started.
GPUS = tuple(
    dataclasses.replace(gpu(n), power_draw=650.0, energy=Energy(since_start_j=1.23e6 / 8 * 3.6))
    for n in range(8)
)


def test_at_80_columns_the_energy_since_start_gives_way_first() -> None:
    wide = host_text(HOST, 100, GPUS).plain
    assert wide == "CPU 38%  RAM 200G/512G  SWP 1G/16G  LOAD 12.0  GPU 5.2kW 1.23 kWh  NET ▼50M/s ▲5M/s"
    assert len(wide) > INSIDE_80
    assert host_text(HOST, INSIDE_80, GPUS).plain == (
        "CPU 38%  RAM 200G/512G  SWP 1G/16G  LOAD 12.0  GPU 5.2kW  NET ▼50M/s ▲5M/s"
    )


def test_a_busy_host_gives_up_the_energy_then_the_swap_size_never_the_network() -> None:
    busy = HostSample(
        cpu_percent=99.0, memory_total=2 * TIB, memory_used=1900 * GIB, swap_total=64 * GIB, swap_used=15 * GIB,
        load_average=(125.7, 120.0, 110.0), net_rx_rate=1000 * 1024**2, net_tx_rate=999 * 1024**2,
    )
    assert host_text(busy, 100, GPUS).plain == (
        "CPU 99%  RAM 2T/2T  SWP 15G/64G  LOAD 125.7  GPU 5.2kW 1.23 kWh  NET ▼1G/s ▲999M/s"
    )
    assert host_text(busy, INSIDE_80, GPUS).plain == (
        "CPU 99%  RAM 2T/2T  SWP 15G/64G  LOAD 125.7  GPU 5.2kW  NET ▼1G/s ▲999M/s"
    )
    assert host_text(busy, 70, GPUS).plain == "CPU 99%  RAM 2T/2T  SWP 15G  LOAD 125.7  GPU 5.2kW  NET ▼1G/s ▲999M/s"
    # No swap in use: SWP gives way; swap in use stays, cut at the end only past that.
    idle_swap = dataclasses.replace(busy, swap_used=0)
    assert host_text(idle_swap, 64, GPUS).plain == "CPU 99%  RAM 2T/2T  LOAD 125.7  GPU 5.2kW  NET ▼1G/s ▲999M/s"
    assert len(host_text(busy, 50, GPUS).plain) == 50


def test_at_120_columns_a_busy_host_keeps_its_network_rates_whole() -> None:
    busy = HostSample(
        cpu_percent=32.5, memory_total=TIB, memory_used=404 * GIB, swap_total=64 * GIB, swap_used=3 * GIB // 2,
        load_average=(22.37, 20.0, 18.0), net_rx_rate=102.7 * 1024**2, net_tx_rate=46.8 * 1024**2,
    )
    inside_120 = 118
    # With bars the line is one cell too long with the energy: the energy gives way, not the tx rate.
    line = host_text(busy, inside_120, GPUS).plain
    assert len(line) <= inside_120 and "kWh" not in line and line.endswith("NET ▼102.7MiB/s ▲46.8MiB/s")
    # Wider, both fit; narrower than the bars allow, the narrow form keeps the network whole too.
    assert "1.23 kWh" in host_text(busy, 160, GPUS).plain
    assert host_text(busy, 110, GPUS).plain.endswith("NET ▼103M/s ▲47M/s")
