"""Reading /proc: a process's files, the fields gputop takes from them, and the names they give.

The low-level half of procinfo.py (which keeps what it reads per process from tick to tick): one
``os.read`` a file where psutil builds an object and reads several, because thousands of GPU
processes are read each tick.
"""

from __future__ import annotations

import os
import sys

import psutil

from gputop.core.host.ownership import (
    Attribution,
    attribution_from_cgroup,
    attribution_from_mountinfo,
    in_namespace_root,
)


def container_from_cgroup(text: str) -> str | None:
    """The container label of a process from the text of /proc/PID/cgroup (see ``ownership``).

    Kubernetes pods give ``k8s:<pod uid>``; other containers ``<runtime>:<id12>`` (``docker``,
    ``containerd``, ``crio``, ``podman``, ``ecs``, ``garden``).
    """
    found = attribution_from_cgroup(text)
    return None if found is None else found.label


def read_attribution(pid: int) -> Attribution | None:
    """The container, pod and job of a process, from /proc/PID/cgroup; from mountinfo for one at the
    root of its cgroup namespace. None when none is named, or the files are unreadable."""
    try:
        text = read_all(pid, "cgroup").decode("utf-8", "replace")
    except OSError:
        return None
    found = attribution_from_cgroup(text)
    if found is None and in_namespace_root(text):
        try:
            found = attribution_from_mountinfo(read_all(pid, "mountinfo").decode("utf-8", "replace"))
        except OSError:
            return None
    return found


def read_environ(pid: int) -> bytes | None:
    """/proc/PID/environ, None when unreadable (another user's process)."""
    try:
        return read_all(pid, "environ", 1 << 18)
    except OSError:
        return None


CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# The shortest interval a CPU % or a rate is computed over: the sampler's shortest tick (0.1 s) with room
# for its jitter. Over a few milliseconds the kernel's tick counters (CLOCK_TICKS a second) have not
# moved, and a busy process or host would read 0 %.
MIN_SPAN_S = 0.08
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def read_proc(pid: int, name: str, size: int = 2048) -> bytes:
    """The start of /proc/PID/NAME; raises OSError."""
    fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


_CHUNK = 4096


def read_all(pid: int, name: str, limit: int = 1 << 20) -> bytes:
    """/proc/PID/NAME up to ``limit`` bytes; raises OSError.

    Read a page at a time: asking os.read for the whole limit at once allocates that much for each
    of thousands of processes at start (a command line is rarely over a page).
    """
    fd = os.open(f"/proc/{pid}/{name}", os.O_RDONLY)
    try:
        chunks = [os.read(fd, _CHUNK)]
        size = len(chunks[0])
        while len(chunks[-1]) == _CHUNK and size < limit:
            chunks.append(os.read(fd, min(_CHUNK, limit - size)))
            size += len(chunks[-1])
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def parse_stat(data: bytes) -> tuple[bytes, int, int, int]:
    fields = data[data.rfind(b")") + 2 :].split(None, 22)  # no further than rss: this runs for every process
    # Fields after the command: state(3) ... utime(14) stime(15) ... starttime(22) vsize(23) rss(24)
    return fields[0], int(fields[11]) + int(fields[12]), int(fields[19]), int(fields[21]) * PAGE_SIZE


def decode(data: bytes) -> str:
    return data.decode(sys.getfilesystemencoding(), "surrogateescape")


def command_line(raw: bytes) -> list[str]:
    """/proc/PID/cmdline as psutil splits it (processes that rewrite it may use spaces)."""
    data = decode(raw)
    if not data:
        return []
    separator = "\x00" if data.endswith("\x00") else " "
    if data.endswith(separator):
        data = data[:-1]
    arguments = data.split(separator)
    if separator == "\x00" and len(arguments) == 1 and " " in data:
        arguments = data.split(" ")
    return arguments


def status_number(status: bytes, key: bytes) -> int | None:
    """The first number of a /proc/PID/status line (``Uid:``, ``Tgid:``); None when absent."""
    start = status.find(b"\n" + key)
    if start < 0:
        return None
    start += len(key) + 1
    fields = status[start : status.find(b"\n", start)].split()
    return int(fields[0]) if fields else None


def is_thread_of_another_process(pid: int, status: bytes | None = None) -> bool:
    """Whether /proc/PID is a thread of some other process rather than a process of its own.

    /proc answers for a thread's ID too, though it lists only processes: a PID that NVML reports
    from another PID namespace can be a thread here, and its facts (and its signals) are another
    process's. ``status`` is /proc/PID/status when already read.
    """
    if status is None:
        try:
            status = read_proc(pid, "status", 4096)
        except OSError:
            return False
    group = status_number(status, b"Tgid:")
    return group is not None and group != pid


class Users:
    """User names by uid, looked up once each (psutil asks the password database for every process)."""

    def __init__(self) -> None:
        self._names: dict[int, str] = {}

    def name(self, uid: int) -> str:
        name = self._names.get(uid)
        if name is None:
            import pwd  # POSIX only, as /proc is: imported where it is used

            try:
                name = pwd.getpwuid(uid).pw_name
            except KeyError:
                name = str(uid)
            self._names[uid] = name
        return name


_BOOT_TIME: float | None = None


def boot_time() -> float:
    global _BOOT_TIME
    if _BOOT_TIME is None:
        _BOOT_TIME = psutil.boot_time()
    return _BOOT_TIME


def parent_command(pid: int) -> str | None:
    """The command line of a process's parent (read once, for the process tree); None when unreadable."""
    if pid <= 0:
        return None
    try:
        return " ".join(command_line(read_all(pid, "cmdline", 1 << 16))) or None
    except OSError:
        return None
