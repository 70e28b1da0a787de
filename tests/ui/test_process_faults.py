"""Awkward processes through the real sampler and the UI: the fake NVML lists them, psutil looks them up.

A process that exits between NVML's list and psutil's look-up, a zombie, a PID
from another namespace, and one that is gone by the time the kill is sent:
each is shown for what it is, each kill is answered with a clear notice, and
the app keeps running.
"""

from __future__ import annotations

import dataclasses
import subprocess
import time
from collections.abc import Iterator

import psutil
import pytest
from fakenvml import NO_SUCH_PID, GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.host.pidns import read_pid_namespace
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.nvml import NvmlSource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.process import ProcessScreen

from .factory import notices, screen_text

SIZE = (120, 40)
ELSEWHERE = NO_SUCH_PID  # a PID no process here has (past pid_max): exited, as far as this host can tell
EXITED = "(not visible: exited)"
# A PID missing from /proc is exited only where gputop shares the host's PID namespace.
IN_HOST_NAMESPACE = pytest.mark.skipif(
    read_pid_namespace().host is not True, reason="not in the host's PID namespace: a missing PID is not exited"
)


@pytest.fixture
def sampler(fake_nvml: FakeNvml) -> Iterator[Sampler]:
    fake_nvml.write(Scenario().gpu())
    fake_nvml.load()
    real = Sampler(NvmlSource())
    real.open()
    yield real
    real.close()


def listing(fake_nvml: FakeNvml, *pids: int) -> None:
    scenario = Scenario().gpu(name="NVIDIA H100 80GB HBM3")
    for n, pid in enumerate(pids):
        scenario.process(gpu=0, pid=pid, used=(n + 1) * GiB)
    fake_nvml.write(scenario)


def app_for(sampler: Sampler) -> GpuTopApp:
    return GpuTopApp(sampler, RunConfig(interval_s=1.0), start_sampler=False)


def row_text(app: GpuTopApp, pid: int) -> str:
    table = app.processes
    index = table.pids().index(pid)
    return "".join(segment.text for segment in table.render_line(1 + index))


async def kill_selected(app: GpuTopApp, pilot: object, pid: int) -> None:
    table = app.processes
    table.cursor_key = table.rows[table.pids().index(pid)].key
    await pilot.press("k")  # type: ignore[attr-defined]
    assert isinstance(app.screen, KillScreen)
    await pilot.press("enter")  # type: ignore[attr-defined]
    await app.workers.wait_for_complete()
    await pilot.pause()  # type: ignore[attr-defined]


@IN_HOST_NAMESPACE
async def test_a_process_that_exits_between_the_gpu_list_and_the_lookup_shows_as_exited(
    fake_nvml: FakeNvml, sampler: Sampler
) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()  # exited and reaped: NVML still lists it for a tick, psutil finds nothing
    survivor = subprocess.Popen(["sleep", "600"])
    try:
        listing(fake_nvml, gone.pid, survivor.pid)
        app = app_for(sampler)
        async with app.run_test(size=SIZE) as pilot:
            app.apply_snapshot(sampler.sample())
            await pilot.pause()
            assert sorted(app.processes.pids()) == sorted([gone.pid, survivor.pid])
            assert EXITED in row_text(app, gone.pid)
            assert "sleep 600" in row_text(app, survivor.pid)
            # The process screen says the same.
            app.processes.cursor_key = app.processes.rows[app.processes.pids().index(gone.pid)].key
            await pilot.press("enter")
            assert isinstance(app.screen, ProcessScreen)
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert EXITED in screen_text(app)
            await pilot.press("escape")
            await kill_selected(app, pilot, gone.pid)
            assert notices(app) == [f"PID {gone.pid} has exited (no such process in /proc): nothing to signal"]
            assert app.is_running
    finally:
        survivor.kill()
        survivor.wait()


async def test_a_zombie_shows_as_defunct_and_a_kill_says_it_already_exited(
    fake_nvml: FakeNvml, sampler: Sampler
) -> None:
    child = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 10
        while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        listing(fake_nvml, child.pid)
        app = app_for(sampler)
        async with app.run_test(size=SIZE) as pilot:
            app.apply_snapshot(sampler.sample())
            app.apply_snapshot(sampler.sample())  # the second tick reads CPU and memory of a zombie
            await pilot.pause()
            assert "true <defunct>" in row_text(app, child.pid)
            await kill_selected(app, pilot, child.pid)
            assert notices(app) == [f"PID {child.pid} has already exited (zombie)"]
            assert app.is_running
    finally:
        child.wait()


async def test_a_pid_past_pid_max_is_listed_with_its_memory_as_exited_and_cannot_be_signalled(
    fake_nvml: FakeNvml, sampler: Sampler
) -> None:
    listing(fake_nvml, ELSEWHERE)
    app = app_for(sampler)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(sampler.sample())
        await pilot.pause()
        row = row_text(app, ELSEWHERE)
        assert f"{ELSEWHERE}" in row and "1.0GiB" in row and EXITED in row
        await kill_selected(app, pilot, ELSEWHERE)
        assert notices(app) == [f"PID {ELSEWHERE} has exited (no such process in /proc): nothing to signal"]
        assert app.is_running


@IN_HOST_NAMESPACE
async def test_a_process_gone_by_the_time_of_the_kill_is_reported_gone(
    fake_nvml: FakeNvml, sampler: Sampler
) -> None:
    process = subprocess.Popen(["sleep", "600"])
    listing(fake_nvml, process.pid)
    app = app_for(sampler)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(sampler.sample())
        await pilot.pause()
        assert "sleep 600" in row_text(app, process.pid)
        process.kill()
        process.wait()  # gone between selection and kill
        await kill_selected(app, pilot, process.pid)
        assert notices(app) == [f"PID {process.pid} is already gone"]
        # The next tick: NVML still lists it (drivers lag), the host no longer knows it.
        app.apply_snapshot(sampler.sample())
        await pilot.pause()
        assert EXITED in row_text(app, process.pid)
        listing(fake_nvml)
        app.apply_snapshot(sampler.sample())
        await pilot.pause()
        assert app.processes.pids() == []
        assert len(sampler.process_info) == 0
        assert app.is_running


async def test_a_pid_reused_between_selection_and_kill_is_refused(fake_nvml: FakeNvml, sampler: Sampler) -> None:
    first = subprocess.Popen(["sleep", "600"])
    listing(fake_nvml, first.pid)
    app = app_for(sampler)
    try:
        async with app.run_test(size=SIZE) as pilot:
            app.apply_snapshot(sampler.sample())
            await pilot.pause()
            table = app.processes
            [row] = table.rows
            # The kernel hands the PID to a new process: same number, later start time.
            # (Simulated by shifting what the UI recorded; a real reuse needs pid_max wrap-around.)
            earlier = dataclasses.replace(row.process, started=(row.process.started or 0) - 50)
            table.rows = [dataclasses.replace(row, process=earlier)]
            table.cursor_key = table.rows[0].key
            await pilot.press("k", "enter")
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert first.poll() is None, "the new owner of the PID was not signalled"
            assert notices(app) == [f"refused: PID {first.pid} now belongs to another process: not signalled"]
    finally:
        first.kill()
        first.wait()
