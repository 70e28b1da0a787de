"""Host facts for GPU processes: psutil joined by PID, cached per (pid, create_time)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from fakenvml import NO_SUCH_PID

from gputop.core.host import procinfo
from gputop.core.host.procfs import MIN_SPAN_S, container_from_cgroup
from gputop.core.host.procinfo import QUIET_READ_EVERY, QUIET_READINGS, ProcessInfo

DOCKER_ID = "4f1c2b3a" * 8
POD_UID = "3f2a9c1e-7b4d-4c55-9e1a-0d6b2f8a7c31"


@pytest.mark.parametrize(
    ("cgroup", "expected"),
    [
        (f"0::/system.slice/docker-{DOCKER_ID}.scope\n", f"docker:{DOCKER_ID[:12]}"),
        (f"12:memory:/docker/{DOCKER_ID}\n", f"docker:{DOCKER_ID[:12]}"),
        (f"0::/system.slice/containerd.service/cri-containerd-{DOCKER_ID}.scope\n", f"containerd:{DOCKER_ID[:12]}"),
        (f"0::/crio-{DOCKER_ID}.scope\n", f"crio:{DOCKER_ID[:12]}"),
        (
            "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
            f"{POD_UID.replace('-', '_')}.slice/cri-containerd-{DOCKER_ID}.scope\n",
            f"k8s:{POD_UID}",
        ),
        (f"11:devices:/kubepods/besteffort/pod{POD_UID}/{DOCKER_ID}\n", f"k8s:{POD_UID}"),
        ("0::/user.slice/user-1000.slice/session-3.scope\n", None),
        ("", None),
    ],
)
def test_container_is_read_from_the_cgroup_path(cgroup: str, expected: str | None) -> None:
    assert container_from_cgroup(cgroup) == expected


READY = "import time; print('ready', flush=True); time.sleep(600)"


@pytest.fixture
def settled_process() -> Iterator[subprocess.Popen[bytes]]:
    """A process that has finished starting (its memory no longer moves)."""
    process = subprocess.Popen([sys.executable, "-c", READY], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    yield process
    process.kill()
    process.wait()


def test_a_live_process_gets_its_user_command_start_time_and_memory(settled_process: subprocess.Popen[bytes]) -> None:
    info = ProcessInfo()
    facts = info.lookup([settled_process.pid])[settled_process.pid]
    assert facts is not None
    assert facts.static.user == pwd.getpwuid(os.getuid()).pw_name
    assert facts.static.name == psutil.Process(settled_process.pid).name()
    assert facts.static.command == f"{sys.executable} -c {READY}"
    assert facts.static.started == psutil.Process(settled_process.pid).create_time()
    # The kernel's RSS counters are cached per CPU and each cache lags by up to 64 pages:
    # equal within that, for every CPU.
    assert facts.host_memory is not None
    lag = 64 * os.sysconf("SC_PAGE_SIZE") * (os.cpu_count() or 1)
    assert abs(facts.host_memory - psutil.Process(settled_process.pid).memory_info().rss) <= lag
    # CPU % needs two readings at least MIN_SPAN_S apart: none on the first tick, a figure on the next.
    assert facts.cpu_percent is None
    time.sleep(MIN_SPAN_S)
    again = info.lookup([settled_process.pid])[settled_process.pid]
    assert again is not None and again.cpu_percent == 0.0
    assert again.static is facts.static  # static facts come from the cache
    assert len(info) == 1


def test_a_pid_that_leaves_the_gpu_lists_leaves_the_cache(settled_process: subprocess.Popen[bytes]) -> None:
    info = ProcessInfo()
    info.lookup([settled_process.pid])
    assert len(info) == 1
    info.lookup([])
    assert len(info) == 0


def test_a_process_that_died_or_was_never_visible_is_none(settled_process: subprocess.Popen[bytes]) -> None:
    info = ProcessInfo()
    info.lookup([settled_process.pid])
    settled_process.kill()
    settled_process.wait()
    missing_pid = NO_SUCH_PID
    assert info.lookup([settled_process.pid, missing_pid]) == {settled_process.pid: None, missing_pid: None}
    assert len(info) == 0


def test_a_pid_that_is_a_thread_of_another_process_is_not_that_process(
    threaded_process: tuple[subprocess.Popen[bytes], int],
) -> None:
    # /proc/TID answers as the thread's process does: NVML's PID from another namespace can be one.
    process, thread_id = threaded_process
    assert Path(f"/proc/{thread_id}/stat").exists()
    info = ProcessInfo()
    found = info.lookup([thread_id, process.pid])
    assert found[thread_id] is None
    facts = found[process.pid]
    assert facts is not None and facts.static.command is not None and "threading" in facts.static.command
    assert len(info) == 1


def test_a_zombie_is_listed_as_defunct() -> None:
    child = subprocess.Popen(["true"])
    try:
        deadline = time.monotonic() + 10
        while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the child never became a zombie"
            time.sleep(0.01)
        facts = ProcessInfo().lookup([child.pid])[child.pid]
        assert facts is not None
        assert facts.static.name == "true <defunct>"
        assert facts.static.command == "true <defunct>"
    finally:
        child.wait()


def test_a_long_name_is_read_whole_as_psutil_reads_it(tmp_path: Path) -> None:
    # The kernel keeps 15 characters of a name; the full one comes from the command line.
    sleeper = tmp_path / "a_sleeper_with_a_long_name"
    sleeper.symlink_to(shutil.which("sleep") or "/bin/sleep")
    child = subprocess.Popen([str(sleeper), "600"])
    try:
        deadline = time.monotonic() + 10
        while psutil.Process(child.pid).name() != sleeper.name:  # until the exec is done
            assert time.monotonic() < deadline
            time.sleep(0.01)
        facts = ProcessInfo().lookup([child.pid])[child.pid]
        process = psutil.Process(child.pid)
        assert facts is not None
        assert facts.static.name == process.name() == "a_sleeper_with_a_long_name"
        assert facts.static.command == " ".join(process.cmdline()) == f"{sleeper} 600"
        assert facts.static.user == process.username()
        assert facts.static.started == process.create_time()
    finally:
        child.kill()
        child.wait()


# Waits on stdin, then uses the CPU until killed.
WAKES = "import sys; print('ready', flush=True); sys.stdin.readline()\nwhile True: pass"


def _quiet_for(info: ProcessInfo, pid: int) -> None:
    """Look at ``pid`` until it counts as quiet: its first look, its first CPU reading, then
    QUIET_READINGS readings that find it idle."""
    for _ in range(QUIET_READINGS + 2):
        time.sleep(MIN_SPAN_S)
        facts = info.lookup([pid])[pid]
        assert facts is not None
    assert facts.cpu_percent == 0.0


def test_a_process_idle_on_the_cpu_is_read_every_few_ticks_and_shows_its_work_once_it_wakes() -> None:
    child = subprocess.Popen([sys.executable, "-c", WAKES], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None and child.stdout.readline() == b"ready\n"
    try:
        info = ProcessInfo()
        _quiet_for(info, child.pid)
        child.stdin.write(b"go\n")
        child.stdin.flush()
        shown = []
        for _ in range(QUIET_READ_EVERY):
            time.sleep(0.2)
            facts = info.lookup([child.pid])[child.pid]
            assert facts is not None
            shown.append(facts.cpu_percent)
        # Its work shows at its next reading (its tick comes at most QUIET_READ_EVERY ticks on).
        busy = [index for index, cpu in enumerate(shown) if cpu]
        assert busy, f"no CPU use shown in {QUIET_READ_EVERY} ticks: {shown}"
        assert shown[: busy[0]] == [0.0] * busy[0]
    finally:
        child.kill()
        child.wait()


def test_a_quiet_process_read_again_word_for_word_keeps_its_facts_without_its_stat_being_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    child = subprocess.Popen([sys.executable, "-c", WAKES], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None and child.stdout.readline() == b"ready\n"
    try:
        info = ProcessInfo()
        _quiet_for(info, child.pid)
        last = info.lookup([child.pid])[child.pid]
        parsed: list[bytes] = []
        parse = procinfo.parse_stat
        monkeypatch.setattr(procinfo, "parse_stat", lambda data: parsed.append(data) or parse(data))
        # Its stat file says what it said when it was found idle: each reading keeps the same facts, unparsed.
        seen = [info.lookup([child.pid])[child.pid] for _ in range(2 * QUIET_READ_EVERY)]
        assert seen == [last] * len(seen) and all(facts is last for facts in seen)
        assert parsed == []
        child.stdin.write(b"go\n")
        child.stdin.flush()
        time.sleep(0.2)
        # Once it works, the text differs: parsed (at each reading from then on), its CPU use shown.
        shown = [info.lookup([child.pid])[child.pid] for _ in range(QUIET_READ_EVERY)]
        assert parsed
        assert any(facts is not None and facts.cpu_percent for facts in shown), shown
    finally:
        child.kill()
        child.wait()


def test_a_quiet_process_that_exits_is_gone_by_its_next_reading() -> None:
    child = subprocess.Popen([sys.executable, "-c", READY], stdout=subprocess.PIPE)
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    info = ProcessInfo()
    _quiet_for(info, child.pid)
    last = info.lookup([child.pid])[child.pid]
    child.kill()
    child.wait()
    # Between its readings it keeps the facts it was last read with; its next reading finds it gone.
    seen = [info.lookup([child.pid])[child.pid] for _ in range(QUIET_READ_EVERY)]
    assert None in seen
    gone = seen.index(None)
    assert seen[:gone] == [last] * gone and gone < QUIET_READ_EVERY


def _stat_files_held(pids: list[int]) -> set[int]:
    """The PIDs among ``pids`` whose /proc/PID/stat this test process holds open."""
    held = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        for pid in pids:
            if target == f"/proc/{pid}/stat":
                held.add(pid)
    return held


def test_stat_files_are_held_open_up_to_the_budget_and_closed_when_their_processes_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(procinfo, "_files_to_hold", lambda: 2)
    children = [subprocess.Popen(["sleep", "600"]) for _ in range(3)]
    pids = [child.pid for child in children]
    try:
        info = ProcessInfo()
        info.lookup(pids)
        held = _stat_files_held(pids)
        assert len(held) == 2
        time.sleep(MIN_SPAN_S)
        # Read through a held file or opened afresh, each reading is the same.
        again = info.lookup(pids)
        assert [facts and facts.cpu_percent for facts in map(again.get, pids)] == [0.0, 0.0, 0.0]

        # A reaped process's held file answers no more: it is gone, and its file closed.
        ended = next(child for child in children if child.pid in held)
        ended.kill()
        ended.wait()
        assert info.lookup(pids)[ended.pid] is None
        assert _stat_files_held(pids) == held - {ended.pid}
        assert len(info) == 2

        info.lookup([])
        assert _stat_files_held(pids) == set()
    finally:
        for child in children:
            child.kill()
            child.wait()
