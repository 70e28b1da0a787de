"""Why a process the GPU lists has no host facts: ``ProcessSample.not_visible_reason``.

- ``exited``: the PID is past ``pid_max`` (no process can have it), or it is not in /proc while
  gputop shares the host's PID namespace (NVML lists host PIDs, so it is gone, not hidden);
- ``pid_namespace``: gputop runs in another PID namespace (a container without ``--pid=host``), where
  the host's PIDs are not found, or name other processes;
- ``permission``: /proc/PID is there but cannot be read (``hidepid=noaccess``, a security module).

None where gputop cannot tell: /proc does not say which namespace it is in, or /proc is mounted
``hidepid=invisible`` and hides other users' processes from this one.
"""

from __future__ import annotations

import os
from typing import Final

EXITED: Final = "exited"
PID_NAMESPACE: Final = "pid_namespace"
PERMISSION: Final = "permission"
REASONS = (EXITED, PID_NAMESPACE, PERMISSION)

# The reason in words; every output says these (the panel, the process screen, --once, the diagnoses).
_REASON_WORDS = {
    EXITED: "exited",
    PID_NAMESPACE: "other PID namespace",
    PERMISSION: "permission denied",
}
UNKNOWN_REASON = "reason unknown"
# What the panel, the process screen and --once say in place of the command.
_WORDS = {reason: f"(not visible: {words})" for reason, words in _REASON_WORDS.items()}
UNKNOWN_WORDS = "(not visible from here)"

# hidepid values that take other users' PIDs out of /proc altogether (the kernel's words, and the
# numbers older kernels print).
_HIDING = frozenset({"invisible", "ptraceable", "2", "4"})


def not_visible_words(reason: str | None) -> str:
    """The words shown for a process that is not visible, for its reason (None: unknown)."""
    return _WORDS.get(reason or "", UNKNOWN_WORDS)


def reason_words(reason: str | None) -> str:
    """The reason alone in words ("exited", "other PID namespace"...; None: "reason unknown")."""
    return _REASON_WORDS.get(reason or "", UNKNOWN_REASON)


def pid_max(proc: str = "/proc") -> int | None:
    """The kernel's limit on PIDs (every PID is below it); None where unreadable."""
    try:
        with open(f"{proc}/sys/kernel/pid_max", "rb") as limit:
            return int(limit.read())
    except (OSError, ValueError):
        return None


def proc_hides_pids(proc: str = "/proc") -> bool:
    """Whether /proc may leave out other users' processes for this one (``hidepid``, not root)."""
    if os.geteuid() == 0:
        return False
    hidden = False
    try:
        with open(f"{proc}/self/mountinfo", "rb") as mounts:
            for line in mounts:
                fields = line.decode(errors="replace").split()
                # ID, parent, device, root, mount point, options, [optional fields], -, type, source, super options
                if len(fields) < 10 or fields[4] != proc or fields[-3] != "proc":
                    continue
                # The last mount on /proc is the one seen: it decides.
                hidden = any(
                    option.partition("=")[2] in _HIDING
                    for option in fields[-1].split(",")
                    if option.startswith("hidepid=")
                )
    except OSError:
        return False
    return hidden


def why_not_visible(pid: int, host_namespace: bool | None, proc: str = "/proc") -> str | None:
    """The reason /proc gave no facts for ``pid`` (see the module's words); None where unknown."""
    limit = pid_max(proc)
    if pid <= 0 or (limit is not None and pid >= limit):
        return EXITED
    try:
        os.stat(f"{proc}/{pid}")
        with open(f"{proc}/{pid}/status", "rb") as status:
            status.read(64)
    except PermissionError:
        return PERMISSION
    except OSError:
        if host_namespace and proc_hides_pids(proc):
            return None  # hidden from this user, or gone: /proc does not say which
    # Not there, or there as a thread of another process (a PID of another namespace can be a
    # TID here), or it came and went meanwhile.
    if host_namespace is None:
        return None
    return EXITED if host_namespace else PID_NAMESPACE
