"""The processes above the GPU processes, up to their session, for the tree (``t``).

A GPU process's launcher (torchrun, a ``bash -c`` wrapper, a job script) holds no GPU memory, so
NVML never lists it: it is read here from /proc, only while the tree is shown. The walk up from a
GPU process stops at its session (a shell, sshd, tmux, screen): everything above that is named on
the session's line, not given lines of its own, as it is the same for every job of the session.

Each ancestor carries its start time, so that signalling a launcher goes through the same
(pid, start time) check as signalling a GPU process.
"""

from __future__ import annotations

import functools
import pwd
from collections.abc import Iterable
from dataclasses import dataclass, replace

from gputop.core.host.procfs import CLOCK_TICKS, boot_time, command_line, decode, parse_stat, read_all, read_proc

# Names (the kernel's 15 characters) of the processes a user's jobs run under: the walk stops there.
SESSION_NAMES = frozenset({"sshd", "tmux", "tmux: server", "screen", "SCREEN", "login", "mosh-server"})
# Shells: a session when interactive (no script, no -c); a `bash -c` or `sh run.sh` wrapper is a launcher.
SHELL_NAMES = frozenset({"bash", "sh", "dash", "zsh", "fish", "ksh", "tcsh", "csh"})
# A chain longer than this is cut (a loop made by PID reuse mid-walk cannot run away).
_MAX_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Ancestor:
    """One process above a GPU process, as the tree shows it."""

    pid: int
    parent_pid: int | None
    started: float | None
    name: str | None
    command: str | None
    uid: int | None
    session: bool = False  # a shell, sshd, tmux or screen: the tree's walk up stops here
    above: tuple[str, ...] = ()  # a session's own ancestors' names (nearest first), up to PID 1


def _read(pid: int) -> Ancestor | None:
    """One process from /proc; None when it cannot be read (gone, another namespace)."""
    try:
        stat = read_proc(pid, "stat")
        status = read_proc(pid, "status", 4096)
    except OSError:
        return None
    try:
        arguments = command_line(read_all(pid, "cmdline", 1 << 16))
    except OSError:
        arguments = []
    name = decode(stat[stat.find(b"(") + 1 : stat.rfind(b")")])
    fields = parse_stat(stat)
    parent_pid = int(stat[stat.rfind(b")") + 2 :].split()[1])
    uid = None
    for line in status.splitlines():
        if line.startswith(b"Uid:"):
            uid = int(line.split()[1])
            break
    return Ancestor(
        pid=pid,
        parent_pid=parent_pid or None,
        started=fields[2] / CLOCK_TICKS + boot_time(),
        name=name,
        command=" ".join(arguments) or name,
        uid=uid,
        session=_is_session(name, arguments),
    )


def _is_session(name: str, arguments: list[str]) -> bool:
    """sshd, tmux, screen, login, or an interactive shell (``-bash``, ``zsh -l``: options only, no -c)."""
    if name in SESSION_NAMES:
        return True
    if name.lstrip("-") not in SHELL_NAMES:
        return False
    options = arguments[1:]
    return all(option.startswith("-") for option in options) and "-c" not in options


class AncestryReader:
    """Reads the ancestors of GPU processes; one read per process, kept while its start time holds."""

    def __init__(self) -> None:
        self._known: dict[int, Ancestor] = {}
        self._reached: set[int] = set()

    def _get(self, pid: int) -> Ancestor | None:
        known = self._known.get(pid)
        if known is not None:
            try:  # the same PID may be another process now: its start time says
                fields = parse_stat(read_proc(pid, "stat"))
            except OSError:
                return None
            if fields[2] / CLOCK_TICKS + boot_time() == known.started:
                return known
        found = _read(pid)
        if found is not None:
            self._known[pid] = found
            self._reached.add(pid)
        return found

    def read(self, parent_pids: Iterable[int | None], gpu_pids: Iterable[int]) -> dict[int, Ancestor]:
        """Every process above ``parent_pids`` (the GPU processes' parents) up to its session or PID 1,
        by PID; a GPU process (``gpu_pids``) ends a walk, as it has its own line."""
        on_gpu = set(gpu_pids)
        found: dict[int, Ancestor] = {}
        self._reached = set()
        for start in set(parent_pids):
            pid = start
            for _ in range(_MAX_DEPTH):
                if pid is None or pid <= 1 or pid in on_gpu or pid in found:
                    break
                ancestor = self._get(pid)
                if ancestor is None:
                    break
                self._reached.add(pid)
                if ancestor.session:
                    ancestor = self._with_above(ancestor)
                found[pid] = ancestor
                if ancestor.session:
                    break
                pid = ancestor.parent_pid
        # Forget what no walk reached: those processes have left the tree.
        self._known = {pid: self._known[pid] for pid in self._known.keys() & self._reached}
        return found

    def _with_above(self, session: Ancestor) -> Ancestor:
        """The session with the names of the processes above it (tmux, sshd), collapsed onto its line."""
        names: list[str] = []
        pid = session.parent_pid
        for _ in range(_MAX_DEPTH):
            if pid is None or pid <= 1:
                break
            above = self._get(pid)
            if above is None:
                break
            self._reached.add(pid)
            names.append(above.name or str(pid))
            pid = above.parent_pid
        return replace(session, above=tuple(names))


@functools.lru_cache(maxsize=256)
def user_name(uid: int | None) -> str | None:
    """The user's name, or the number where the host has no name for it; None when unknown."""
    if uid is None:
        return None
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
