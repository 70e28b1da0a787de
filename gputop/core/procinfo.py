"""Host facts about GPU processes, from psutil and /proc.

Facts that never change for a process (user, command line, start time,
container) are cached per ``(pid, create_time)``; only CPU % and RSS are read
each tick. A PID that leaves the GPU lists leaves the cache.
"""

from __future__ import annotations

import dataclasses
import re
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
    __slots__ = ("process", "facts")

    def __init__(self, process: psutil.Process, facts: _StaticFacts) -> None:
        self.process = process
        self.facts = facts


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
        return dataclasses.replace(
            process,
            started=static.started,
            user=static.user,
            name=static.name,
            command=static.command,
            cpu_percent=self.cpu_percent,
            host_memory=self.host_memory,
            container=static.container,
            visible=True,
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
            try:
                rss: int | None = tracked.process.memory_info().rss
            except psutil.Error:
                rss = None
            return HostFacts(tracked.facts, None, rss)
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
