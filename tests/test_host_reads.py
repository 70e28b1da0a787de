"""The host's files read each tick: held open and read again from their start, as new as a file opened for
the reading, and the CPU's times read from /proc/stat by psutil's rule (core.host.machine)."""

from __future__ import annotations

import builtins
import os
import time
from pathlib import Path

import psutil
import pytest

from gputop.core.host.machine import HeldFile, HostReader, read_cpu_times
from gputop.core.host.procfs import CLOCK_TICKS

MEMINFO = "MemTotal: {total} kB\nMemAvailable: {available} kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"


def test_a_held_file_reads_the_whole_file_as_it_is_now_longer_or_shorter(tmp_path: Path) -> None:
    path = tmp_path / "figures"
    path.write_bytes(b"first\n")
    held = HeldFile(path)
    assert held.read() == b"first\n"
    longer = b"".join(b"line %05d\n" % k for k in range(2000))  # 22,000 bytes: past the first buffer
    path.write_bytes(longer)
    assert held.read() == longer
    path.write_bytes(b"short\n")
    assert held.read() == b"short\n"
    assert held.read(3) == b"sho"


def test_a_held_file_that_cannot_be_read_raises_and_is_opened_again_once_it_can(tmp_path: Path) -> None:
    path = tmp_path / "figures"
    held = HeldFile(path)
    with pytest.raises(FileNotFoundError):
        held.read()
    path.write_bytes(b"there\n")
    assert held.read() == b"there\n"


def test_memory_figures_follow_meminfo_from_tick_to_tick(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO.format(total=1000, available=400))
    reader = HostReader(meminfo=meminfo)
    assert reader.sample().memory_used == 600 * 1024
    meminfo.write_text(MEMINFO.format(total=1000, available=900))
    assert reader.sample().memory_used == 100 * 1024


def test_reading_the_host_each_tick_opens_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    reader = HostReader()
    reader.sample()
    time.sleep(0.1)  # past MIN_SPAN_S: the CPU and network are read again
    opened: list[object] = []
    real_open, real_os_open = builtins.open, os.open

    def counting_open(*args: object, **kwargs: object) -> object:
        opened.append(args[0])
        return real_open(*args, **kwargs)  # type: ignore[call-overload]

    def counting_os_open(*args: object, **kwargs: object) -> int:
        opened.append(args[0])
        return real_os_open(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(os, "open", counting_os_open)
    host = reader.sample()
    monkeypatch.undo()
    assert opened == []
    assert host.cpu_percent is not None and host.memory_total == psutil.virtual_memory().total


def test_the_cpus_times_are_proc_stats_first_line_by_psutils_rule(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice: guest time is in user time already,
    # and waiting for I/O is idle.
    stat.write_text("cpu  100 20 30 400 50 6 7 8 9 10\ncpu0 50 10 15 200 25 3 3 4 4 5\nintr 12345\n")
    total = 100 + 20 + 30 + 400 + 50 + 6 + 7 + 8
    assert read_cpu_times(HeldFile(stat)) == ((total - 450) / CLOCK_TICKS, total / CLOCK_TICKS)
    stat.write_text("cpu  100 20 30 400\n")  # an old kernel's four columns
    assert read_cpu_times(HeldFile(stat)) == (150 / CLOCK_TICKS, 550 / CLOCK_TICKS)
    stat.write_text("intr 12345\n")
    assert read_cpu_times(HeldFile(stat)) is None
    assert read_cpu_times(HeldFile(tmp_path / "missing")) is None


def test_the_cpus_times_agree_with_psutils_on_this_machine() -> None:
    found = read_cpu_times(HeldFile(Path("/proc/stat")))
    times = psutil.cpu_times()
    assert found is not None
    total = sum(times) - times.guest - times.guest_nice  # type: ignore[attr-defined]
    busy = total - times.idle - times.iowait  # type: ignore[attr-defined]
    slack = 2.0 * (os.cpu_count() or 1)  # the two readings a moment apart: at most a few ticks each CPU
    assert abs(found[0] - busy) < slack and abs(found[1] - total) < slack
