"""Host facts about GPU processes, read from /proc (gputop runs where NVIDIA's Linux driver does).

Facts that never change for a process (user, command line, start time,
container) are cached per ``(pid, create_time)``; only CPU % and RSS are read
each tick, from one read of /proc/PID/stat. That file is held open from the
first look (up to half the limit on open files) and read again from its start:
one call a reading instead of three, and once the process is reaped it fails
whoever has the PID since. A PID that leaves the GPU lists leaves the cache,
and its file is closed.

A process found idle on the CPU (no CPU time used, the same RSS) at its last
``QUIET_READINGS`` readings is read only every ``QUIET_READ_EVERY``-th tick
(staggered by PID) until a reading finds it busy again: on a machine with
thousands of GPU processes most wait, and each read of /proc costs about
10 us of kernel time. Its CPU % then covers the whole time since its last
reading.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gputop.core.host.containers import ContainerNames
from gputop.core.host.pidns import in_host_pid_namespace
from gputop.core.host.procfs import (
    CLOCK_TICKS,
    MIN_SPAN_S,
    Users,
    boot_time,
    command_line,
    decode,
    is_thread_of_another_process,
    parent_command,
    parse_stat,
    read_all,
    read_attribution,
    read_environ,
    read_proc,
    status_number,
)
from gputop.core.host.slurm import slurm_job
from gputop.core.host.visibility import why_not_visible
from gputop.core.model import Job, ProcessSample


@dataclass(frozen=True, slots=True)
class _StaticFacts:
    started: float
    user: str | None
    name: str | None
    command: str | None
    container: str | None
    container_name: str | None
    parent_pid: int | None
    parent_command: str | None
    # Its owners (see core.host.ownership): read once, as a process does not change container or job.
    container_runtime: str | None = None
    container_id: str | None = None
    pod_uid: str | None = None
    job: Job | None = None


class _Tracked:
    __slots__ = ("facts", "start_ticks", "cpu_ticks", "read_at", "last", "quiet", "quiet_stat", "stat_file")

    def __init__(self, facts: _StaticFacts, start_ticks: int, cpu_ticks: int, stat_file: int | None) -> None:
        self.facts = facts
        self.start_ticks = start_ticks
        self.cpu_ticks = cpu_ticks
        self.read_at = time.monotonic()
        self.last: HostFacts | None = None  # what the last reading gave
        self.quiet = 0  # readings in a row that found it idle
        # The stat file's text at the last reading that found it idle: the same text again is the same
        # verdict (the same CPU ticks, RSS, state and start), known without parsing it.
        self.quiet_stat: bytes | None = None
        self.stat_file = stat_file  # /proc/PID/stat held open, or None: opened at each reading

    def close(self, _close: Callable[[int], None] = os.close) -> None:
        # os.close bound here: __del__ may run at interpreter exit, when module globals may be gone.
        if self.stat_file is not None:
            _close(self.stat_file)
            self.stat_file = None

    def __del__(self) -> None:
        # Its file goes with it, whenever the last reference does: a sampler closed while its thread
        # is still reading must not close a file under that thread.
        self.close()


QUIET_READINGS = 2
QUIET_READ_EVERY = 4

# At most this share of the limit on open files (less a reserve) is taken by stat files held open;
# past it, the others are opened at each reading.
_HELD_FILES_SHARE = 0.5
_HELD_FILES_RESERVE = 64



def _files_to_hold() -> int:
    """How many stat files a ProcessInfo may hold open, from the soft limit on open files."""
    import resource  # POSIX only, as /proc is

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 16
    return max(0, int(min(soft, 1 << 16) * _HELD_FILES_SHARE) - _HELD_FILES_RESERVE)


def _read_stat(pid: int, held: int | None) -> bytes:
    """/proc/PID/stat's text (parse_stat: state, CPU ticks, start time, RSS); empty if gone.

    One read of /proc/PID/stat gives everything a tick needs, where psutil reads two files. ``held``
    is the file held open for the process: read again from its start, it costs one call where
    opening costs three (half the kernel's time), and it fails once the process has been reaped,
    whoever has its PID since.
    """
    try:
        return read_proc(pid, "stat") if held is None else os.pread(held, 2048, 0)
    except OSError:
        return b""


def _first_look_in_proc(
    pid: int, users: Users, containers: ContainerNames, parents: dict[int, str | None], hold: bool
) -> tuple[_Tracked, int] | None:
    """What psutil's first look finds, read straight from /proc: a third of the files, no password lookups.

    Returns the tracked process (with its stat file held open when ``hold``) and its RSS; None if it
    is gone or not visible.
    """
    try:
        stat_file = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    found = None
    try:
        found = _first_look_at(pid, stat_file, users, containers, parents)
    finally:
        if found is None or not hold:
            os.close(stat_file)
    if found is None:
        return None
    static, stat = found
    return _Tracked(static, stat[2], stat[1], stat_file if hold else None), stat[3]


def _first_look_at(
    pid: int, stat_file: int, users: Users, containers: ContainerNames, parents: dict[int, str | None]
) -> tuple[_StaticFacts, tuple[bytes, int, int, int]] | None:
    try:
        stat = os.read(stat_file, 2048)
        status = read_proc(pid, "status", 4096)
    except OSError:
        return None
    if not stat or is_thread_of_another_process(pid, status):
        return None
    fields = parse_stat(stat)
    state, start_ticks = fields[0], fields[2]
    uid = status_number(status, b"Uid:")
    # The same arithmetic as psutil's create_time(), so (pid, started) matches what the kill path reads.
    started = start_ticks / CLOCK_TICKS + boot_time()
    name = decode(stat[stat.find(b"(") + 1 : stat.rfind(b")")])
    if state == b"Z":
        name = command = f"{name} <defunct>"
    else:
        try:
            arguments = command_line(read_all(pid, "cmdline"))
        except PermissionError:
            arguments = []
        except OSError:
            return None
        if len(name) >= 15 and arguments:
            # The kernel keeps 15 characters of the name: the command line has all of it.
            full = os.path.basename(arguments[0])
            if full.startswith(name):
                name = full
        command = " ".join(arguments) or name
    user = None if uid is None else users.name(uid)
    owners = read_attribution(pid)
    container = None if owners is None else owners.label
    # The environment is read only for a process in a job: it is the one place the job's name is.
    job = slurm_job(owners, read_environ(pid) if owners and owners.job_id else None, users.name, user)
    parent_pid = int(stat[stat.rfind(b")") + 2 :].split()[1])
    if parent_pid not in parents:
        parents[parent_pid] = parent_command(parent_pid)
    static = _StaticFacts(
        started=started,
        user=user,
        name=name,
        command=command,
        container=container,
        container_name=containers.name(container),
        parent_pid=parent_pid or None,
        parent_command=parents[parent_pid],
        container_runtime=None if owners is None else owners.container_runtime,
        container_id=None if owners is None else owners.container_id,
        pod_uid=None if owners is None else owners.pod_uid,
        job=job,
    )
    return static, fields


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
            pid=process.pid,
            gpu_index=process.gpu_index,
            type=process.type,
            gpu_memory=process.gpu_memory,
            sm_utilization=process.sm_utilization,
            mig_index=process.mig_index,
            sm_last_active=process.sm_last_active,
            started=static.started,
            user=static.user,
            name=static.name,
            command=static.command,
            cpu_percent=self.cpu_percent,
            host_memory=self.host_memory,
            container=static.container,
            container_name=static.container_name,
            visible=True,
            parent_pid=static.parent_pid,
            parent_command=static.parent_command,
            stale=process.stale,
            container_runtime=static.container_runtime,
            container_id=static.container_id,
            pod_uid=static.pod_uid,
            job=static.job,
        )


class ProcessInfo:
    """Joins NVML's GPU processes with what the host knows about them."""

    def __init__(self, containers: ContainerNames | None = None) -> None:
        self._tracked: dict[int, _Tracked] = {}
        self._users = Users()
        self.containers = ContainerNames() if containers is None else containers
        self._ahead: dict[int, HostFacts | None] = {}
        self._tick = 0  # lookups so far: which quiet processes are read this tick
        self._files_left = _files_to_hold()  # how many more stat files may be held open
        # Parents' command lines read this tick: a launcher's workers are often first seen together.
        self._parents: dict[int, str | None] = {}

    def __len__(self) -> int:
        """How many processes are cached."""
        return len(self._tracked)

    def _forget(self, pid: int) -> None:
        tracked = self._tracked.pop(pid)
        if tracked.stat_file is not None:
            tracked.close()
            self._files_left += 1

    def read_ahead(self, pids: Iterable[int]) -> None:
        """Read these PIDs' facts now, for the next lookup() (while the GPUs are being read)."""
        self._ahead = self._facts(pids)

    def lookup(self, pids: Iterable[int]) -> dict[int, HostFacts | None]:
        """Host facts per PID for this tick; None where the process is not visible from here."""
        wanted = set(pids)
        ahead, self._ahead = self._ahead, {}
        for gone in self._tracked.keys() - wanted:
            self._forget(gone)
        found = {pid: ahead[pid] for pid in wanted if pid in ahead}
        if len(found) < len(wanted):
            found.update(self._facts(wanted - found.keys()))
        self._tick += 1
        self._parents = {}
        return found

    def not_visible_reason(self, pid: int) -> str | None:
        """Why ``pid`` has no host facts (``core.host.visibility``); asked once per process that has none."""
        return why_not_visible(pid, in_host_pid_namespace())

    def _facts(self, pids: Iterable[int]) -> dict[int, HostFacts | None]:
        # The quiet processes' turn is decided here rather than in _look: most of thousands wait
        # their turn each tick, and a method call apiece would cost more than their check.
        tracked_now, tick, look = self._tracked.get, self._tick, self._look
        found: dict[int, HostFacts | None] = {}
        for pid in pids:
            tracked = tracked_now(pid)
            if tracked is not None and tracked.quiet >= QUIET_READINGS and (tick + pid) % QUIET_READ_EVERY:
                found[pid] = tracked.last
            else:
                found[pid] = look(pid, tracked)
        return found

    def _look(self, pid: int, tracked: _Tracked | None) -> HostFacts | None:
        if tracked is None:
            found = _first_look_in_proc(pid, self._users, self.containers, self._parents, self._files_left > 0)
            if found is None:
                return None
            if found[0].stat_file is not None:
                self._files_left -= 1
            self._tracked[pid] = found[0]
            found[0].last = facts = HostFacts(found[0].facts, None, found[1])  # CPU % needs a second reading
            return facts
        held = tracked.stat_file
        data = _read_stat(pid, held)
        if data and data == tracked.quiet_stat:
            now = time.monotonic()
            if now > tracked.read_at:  # idle still, as below, the text left unparsed (2 us of 10 a reading)
                tracked.read_at = now
                tracked.quiet += 1
                return tracked.last
        stat = parse_stat(data) if data else None
        if stat is None or stat[2] != tracked.start_ticks:
            # Gone, or the PID now belongs to another process (a held file cannot tell which): look
            # again from scratch.
            self._forget(pid)
            return None if stat is None and held is None else self._look(pid, None)
        state, cpu_ticks, _, rss = stat
        now = time.monotonic()
        elapsed = now - tracked.read_at
        last = tracked.last
        if (
            last is not None
            and cpu_ticks == tracked.cpu_ticks
            and last.cpu_percent == 0.0
            and last.host_memory == rss
            and elapsed > 0
            and state != b"Z"
        ):
            # Idle as at the last reading: the same facts, so whatever was built from them can be kept.
            tracked.read_at = now
            tracked.quiet += 1
            tracked.quiet_stat = data
            return last
        tracked.quiet_stat = None
        if elapsed < MIN_SPAN_S:
            # Too soon after the last reading for a CPU figure (its ticks may not have moved yet, and a busy
            # process would read 0.0): the last figure stands (None before a first one), the baseline stays.
            memory = rss if state != b"Z" else None
            if last is not None and last.host_memory == memory:
                return last
            tracked.last = facts = HostFacts(tracked.facts, None if last is None else last.cpu_percent, memory)
            return facts
        tracked.quiet = 0
        cpu_percent = None
        if elapsed > 0 and state != b"Z":
            cpu_percent = round(100.0 * (cpu_ticks - tracked.cpu_ticks) / CLOCK_TICKS / elapsed, 1)
        tracked.cpu_ticks, tracked.read_at = cpu_ticks, now
        tracked.last = facts = HostFacts(tracked.facts, cpu_percent, rss if state != b"Z" else None)
        return facts
