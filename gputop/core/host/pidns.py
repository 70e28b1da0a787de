"""Whether gputop runs in the host's PID namespace: NVML lists GPU processes by their host PIDs, so
from any other namespace they are not found in /proc (the process panel and ``gputop doctor`` ask).

Three signs, each read from /proc and each tolerated missing:

- ``NSpid`` in /proc/self/status with more than one entry: gputop has a PID in a namespace below
  another (seen where the /proc mounted is an ancestor namespace's);
- /proc/self/ns/pid differs from PID 1's (where PID 1's is readable: it needs root);
- /proc/self/ns/pid is not the kernel's initial PID namespace, whose inode number is fixed
  (``PROC_PID_INIT_INO`` in the kernel's include/linux/proc_ns.h). This is the sign a container
  with its own /proc gives: there NSpid has one entry and PID 1 is the container's own.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

PROC_PID_INIT_INO = 0xEFFFFFFC  # the host's PID namespace, fixed since Linux 3.8


@dataclass(frozen=True, slots=True)
class PidNamespace:
    """What gputop found: ``host`` is None where /proc does not say."""

    host: bool | None
    evidence: str  # what was read, in words


def _nspid(proc: str) -> list[bytes] | None:
    try:
        with open(f"{proc}/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"NSpid:"):
                    return line.split()[1:]
    except OSError:
        return None
    return None  # before Linux 4.1


def _namespace_inode(proc: str, pid: str) -> int | None:
    try:
        link = os.readlink(f"{proc}/{pid}/ns/pid")  # "pid:[4026531836]"
    except OSError:
        return None
    try:
        return int(link[link.index("[") + 1 : link.rindex("]")])
    except ValueError:
        return None


def read_pid_namespace(proc: str = "/proc") -> PidNamespace:
    """Read the three signs now (the doctor); ``in_host_pid_namespace`` keeps the answer."""
    nspid = _nspid(proc)
    if nspid is not None and len(nspid) > 1:
        pids = " ".join(n.decode() for n in nspid)
        return PidNamespace(False, f"NSpid in /proc/self/status lists {len(nspid)} PIDs ({pids})")
    own = _namespace_inode(proc, "self")
    first = _namespace_inode(proc, "1")
    if own is not None and first is not None and own != first:
        return PidNamespace(False, f"/proc/self/ns/pid is pid:[{own}], PID 1's is pid:[{first}]")
    if own is None:
        return PidNamespace(None, "/proc/self/ns/pid is not readable")
    if own != PROC_PID_INIT_INO:
        return PidNamespace(False, f"/proc/self/ns/pid is pid:[{own}], not the host's pid:[{PROC_PID_INIT_INO}]")
    return PidNamespace(True, f"/proc/self/ns/pid is the host's pid:[{PROC_PID_INIT_INO}]")


@functools.cache
def in_host_pid_namespace() -> bool | None:
    """True in the host's PID namespace, False in another, None where /proc does not say.

    Read once: a process does not change PID namespace.
    """
    return read_pid_namespace().host
