"""Host facts about GPU processes, from psutil and /proc.

Facts that never change for a process (user, command line, start time,
container) are cached per ``(pid, create_time)``; only CPU % and RSS are read
each tick. A PID that leaves the GPU lists leaves the cache.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass

import psutil

from gputop.core.model import ProcessSample

_DOCKER = re.compile(r"docker[-/]([0-9a-f]{64})")
_CONTAINERD = re.compile(r"cri-containerd-([0-9a-f]{64})")
_CRIO = re.compile(r"crio-([0-9a-f]{64})")
_K8S_POD = re.compile(r"pod([0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12})")


def container_from_cgroup(text: str) -> str | None:
    """The container a process runs in, from the text of /proc/PID/cgroup.

    Kubernetes pods give ``k8s:<pod uid>``; plain Docker ``docker:<id12>``;
    containerd and CRI-O ``containerd:<id12>`` and ``crio:<id12>``.
    """
    pod = _K8S_POD.search(text)
    if pod:
        return "k8s:" + pod.group(1).replace("_", "-")
    for pattern, label in ((_CONTAINERD, "containerd"), (_CRIO, "crio"), (_DOCKER, "docker")):
        match = pattern.search(text)
        if match:
            return f"{label}:{match.group(1)[:12]}"
    return None


def read_container(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as handle:
            return container_from_cgroup(handle.read())
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class _StaticFacts:
    started: float
    user: str | None
    name: str | None
    command: str | None
    container: str | None


class _Tracked:
    __slots__ = ("process", "facts", "start_ticks", "cpu_ticks", "read_at")

    def __init__(self, process: psutil.Process, facts: _StaticFacts) -> None:
        self.process = process
        self.facts = facts
        self.start_ticks: int | None = None
        self.cpu_ticks = 0
        self.read_at = 0.0


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_HAVE_PROC_STAT = os.path.exists("/proc/self/stat")


def _read_stat(pid: int) -> tuple[bytes, int, int, int] | None:
    """State, CPU ticks (user + system), start time in ticks since boot, RSS in bytes; None if gone.

    One read of /proc/PID/stat gives everything a tick needs, where psutil reads two files.
    """
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        data = os.read(fd, 2048)
    except OSError:
        return None
    finally:
        os.close(fd)
    fields = data[data.rfind(b")") + 2 :].split()
    # Fields after the command: state(3) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24)
    return fields[0], int(fields[11]) + int(fields[12]), int(fields[19]), int(fields[21]) * _PAGE_SIZE


def _first_look(pid: int) -> _Tracked | None:
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            started = process.create_time()
            try:
                user: str | None = process.username()
            except (KeyError, psutil.AccessDenied):
                user = None
            name = process.name()
            if process.status() == psutil.STATUS_ZOMBIE:
                name = f"{name} <defunct>"
                command = name
            else:
                try:
                    command = " ".join(process.cmdline()) or name
                except psutil.AccessDenied:
                    command = name
                process.cpu_percent(None)  # primes the CPU counter; the first figure comes next tick
    except (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError):
        return None
    return _Tracked(process, _StaticFacts(started, user, name, command, read_container(pid)))


@dataclass(frozen=True, slots=True)
class HostFacts:
    """What the host knows about one process this tick."""

    static: _StaticFacts
    cpu_percent: float | None
    host_memory: int | None

    def apply(self, process: ProcessSample) -> ProcessSample:
        """The GPU process with these facts filled in."""
        static = self.static
        # Built directly rather than with dataclasses.replace: this runs for every process every tick.
        return ProcessSample(
            process.pid,
            process.gpu_index,
            process.type,
            process.gpu_memory,
            process.sm_utilization,
            process.mig_index,
            static.started,
            static.user,
            static.name,
            static.command,
            self.cpu_percent,
            self.host_memory,
            static.container,
            True,
        )


class ProcessInfo:
    """Joins NVML's GPU processes with what the host knows about them."""

    def __init__(self) -> None:
        self._tracked: dict[int, _Tracked] = {}

    def __len__(self) -> int:
        """How many processes are cached."""
        return len(self._tracked)

    def lookup(self, pids: Iterable[int]) -> dict[int, HostFacts | None]:
        """Host facts per PID for this tick; None where the process is not visible from here."""
        wanted = set(pids)
        for gone in self._tracked.keys() - wanted:
            del self._tracked[gone]
        return {pid: self._look(pid) for pid in wanted}

    def _look(self, pid: int) -> HostFacts | None:
        tracked = self._tracked.get(pid)
        if tracked is None:
            tracked = _first_look(pid)
            if tracked is None:
                return None
            self._tracked[pid] = tracked
            if _HAVE_PROC_STAT:
                stat = _read_stat(pid)
                if stat is None:
                    del self._tracked[pid]
                    return None
                tracked.start_ticks, tracked.cpu_ticks = stat[2], stat[1]
                tracked.read_at = time.monotonic()
                return HostFacts(tracked.facts, None, stat[3])
            try:
                rss: int | None = tracked.process.memory_info().rss
            except psutil.Error:
                rss = None
            return HostFacts(tracked.facts, None, rss)
        if _HAVE_PROC_STAT:
            return self._look_in_proc(pid, tracked)
        try:
            with tracked.process.oneshot():
                cpu_percent: float | None = tracked.process.cpu_percent(None)
                rss = tracked.process.memory_info().rss
        except psutil.ZombieProcess:
            cpu_percent, rss = None, None
        except psutil.NoSuchProcess:
            del self._tracked[pid]
            return None
        except psutil.AccessDenied:
            cpu_percent, rss = None, None
        return HostFacts(tracked.facts, cpu_percent, rss)

    def _look_in_proc(self, pid: int, tracked: _Tracked) -> HostFacts | None:
        stat = _read_stat(pid)
        if stat is None or stat[2] != tracked.start_ticks:
            # Gone, or the PID now belongs to another process: look again from scratch.
            del self._tracked[pid]
            return None if stat is None else self._look(pid)
        state, cpu_ticks, _, rss = stat
        now = time.monotonic()
        elapsed = now - tracked.read_at
        cpu_percent = None
        if elapsed > 0 and state != b"Z":
            cpu_percent = round(100.0 * (cpu_ticks - tracked.cpu_ticks) / _CLOCK_TICKS / elapsed, 1)
        tracked.cpu_ticks, tracked.read_at = cpu_ticks, now
        return HostFacts(tracked.facts, cpu_percent, rss if state != b"Z" else None)
