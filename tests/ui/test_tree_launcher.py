"""The tree on real processes: a real launcher whose two children the fake driver lists as GPU
processes. Its line sits above them with its ancestors up to the session; Enter opens its process
screen; k offers "the launcher" or "the launcher and its 2 workers", each signalled by (pid, start time)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import psutil
import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.host.pidns import read_pid_namespace
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.nvml import NvmlSource
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.kill import KillScreen, LauncherChoiceScreen
from gputop.ui.screens.process import ProcessScreen

from .factory import kill_targets, screen_text

pytestmark = pytest.mark.skipif(
    read_pid_namespace().host is not True, reason="NVML's PIDs are the host's: the workers would not be found"
)

LAUNCHER = (
    "import subprocess, sys, time\n"
    "workers = [subprocess.Popen(['sleep', '600']) for _ in range(2)]\n"
    "print(' '.join(str(w.pid) for w in workers), flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.fixture
def job(fake_nvml: FakeNvml) -> Iterator[tuple[subprocess.Popen[str], list[int], Sampler]]:
    """The launcher, its two workers (GPU 0: 6 GiB, GPU 1: 4 GiB) and a sampler on the fake driver."""
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, "--nproc-per-node", "2"], stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    workers = [int(pid) for pid in launcher.stdout.readline().split()]
    scenario = Scenario().gpu(name="NVIDIA H100 80GB HBM3").gpu(name="NVIDIA H100 80GB HBM3")
    scenario.process(gpu=0, pid=workers[0], used=6 * GiB).process(gpu=1, pid=workers[1], used=4 * GiB)
    fake_nvml.write(scenario)
    fake_nvml.load()
    sampler = Sampler(NvmlSource())
    sampler.open()
    try:
        yield launcher, workers, sampler
    finally:
        sampler.close()
        for pid in [launcher.pid, *workers]:
            with contextlib.suppress(psutil.Error):  # the ones this test started, by PID
                psutil.Process(pid).kill()
        launcher.wait()


def panel(app: GpuTopApp) -> list[str]:
    table = app.processes
    return ["".join(s.text for s in table.render_line(y)).rstrip() for y in range(1, len(table.rows) + 1)]


async def tree_of(app: GpuTopApp, pilot, sampler: Sampler) -> None:  # type: ignore[no-untyped-def]
    app.apply_snapshot(sampler.sample())
    await pilot.pause()
    await pilot.press("t")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_launcher_and_its_ancestors_up_to_the_session_sit_above_its_workers(job, size) -> None:  # type: ignore[no-untyped-def]
    launcher, workers, sampler = job
    app = GpuTopApp(sampler, RunConfig(interval_s=1.0), start_sampler=False)
    async with app.run_test(size=size) as pilot:
        await tree_of(app, pilot, sampler)
        pids = app.processes.pids()
        at = pids.index(launcher.pid)
        assert pids[at + 1 :] == [workers[0], workers[1]]  # 6 GiB first: the panel's order within the tree
        assert pids[at - 1] == os.getpid()  # its parent (this test), then up to the session
        lines = panel(app)
        assert "Σ10.0GiB" in lines[at] and " python" in lines[at] and lines[at + 1].split()[-1] == "600"
        assert "├─ sleep 600" in lines[at + 1] and "└─ sleep 600" in lines[at + 2]
        top = app.processes.rows[0]
        assert top.launcher and top.guide == ""
        assert psutil.Process(top.process.pid).name() in ("bash", "sh", "zsh", "sshd", "tmux: server", "screen") \
            or psutil.Process(top.process.pid).ppid() <= 1


async def test_enter_opens_the_launchers_screen_and_k_signals_it_with_its_workers(job) -> None:  # type: ignore[no-untyped-def]
    launcher, workers, sampler = job
    app = GpuTopApp(sampler, RunConfig(interval_s=1.0), start_sampler=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await tree_of(app, pilot, sampler)
        table = app.processes
        table.cursor_key = table.rows[table.pids().index(launcher.pid)].key
        await pilot.press("enter")
        assert isinstance(app.screen, ProcessScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = screen_text(app)
        assert f"PID {launcher.pid}" in text and "no GPU: launcher of 2 GPU processes" in text
        assert "--nproc-per-node 2" in text and f"Parents      {os.getpid()} " in text  # read from /proc
        await pilot.press("escape", "k")
        assert isinstance(app.screen, LauncherChoiceScreen)
        assert "the launcher and its 2 workers" in screen_text(app)
        await pilot.press("down", "enter")
        assert isinstance(app.screen, KillScreen)
        targets = kill_targets(app)
        assert "Send a signal to 3 processes?" in screen_text(app)
        assert all(f"PID {pid}" in targets for pid in [launcher.pid, *workers])
        await pilot.press("enter")  # SIGTERM
        await app.workers.wait_for_complete()
        assert launcher.wait(timeout=10) == -15
        deadline = time.monotonic() + 10
        while any(running(pid) for pid in workers):  # each worker ended (reaped, or a zombie till it is)
            assert time.monotonic() < deadline
            time.sleep(0.01)


def running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
