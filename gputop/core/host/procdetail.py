"""Everything the host says about one process, read from /proc on demand (the process screen).

Nothing here runs every tick: the process screen asks once when it opens, and
again only when the user asks. Each fact that cannot be read carries the reason
instead (another user's environment, a process that left, another PID namespace),
so the screen can say why rather than show a blank. (The container's name comes
with the sample: see containers.)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import psutil

from gputop.core.host.permission import denied
from gputop.core.model import ProcessIdentity

# A start time read twice can differ by rounding; anything more is another process.
_START_TOLERANCE_S = 0.05
# Environment variables that say which GPUs a process uses and how it talks to the others.
_GPU_ENVIRONMENT = re.compile(
    r"^(CUDA_|NCCL_|NVIDIA_|TORCH_NCCL_|(LOCAL_RANK|RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT)$)"
)
# Names whose values are likely secrets (HF_TOKEN, AWS_SECRET_ACCESS_KEY, WANDB_API_KEY, PGPASSWORD...):
# masked on screen until the user asks to see them, so a glance over a shoulder or a screenshot leaks none.
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL", re.IGNORECASE)
MASK = "••••••"  # the same width whatever the value: its length is not told either


@dataclass(frozen=True, slots=True)
class Relative:
    """A parent or child: enough to name it."""

    pid: int
    name: str | None
    command: str | None
    user: str | None


@dataclass(frozen=True, slots=True)
class Readable:
    """A fact that may not be readable: ``value`` when it was, else ``reason`` says why."""

    value: tuple[str, ...] | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class ProcessDetail:
    """The whole of one process, as far as this host can see it."""

    pid: int
    gone: str | None = None  # why nothing could be read (exited, PID reused, not visible)
    arguments: tuple[str, ...] = ()
    user: str | None = None
    cwd: Readable = Readable()
    ancestors: tuple[Relative, ...] = ()  # parent first, up to PID 1
    children: tuple[Relative, ...] = ()
    environment: Readable = Readable()  # "NAME=value" of every variable, sorted by name
    devices: Readable = Readable()  # the /dev/nvidia* files it holds open

    @property
    def command(self) -> str:
        return " ".join(self.arguments)

    @property
    def gpu_environment(self) -> Readable:
        """The variables that say which GPUs it uses and how it talks to the others (or why unreadable)."""
        if self.environment.value is None:
            return self.environment
        return Readable(tuple(item for item in self.environment.value if _GPU_ENVIRONMENT.match(variable_name(item))))


def variable_name(variable: str) -> str:
    """``NAME`` of ``NAME=value``."""
    return variable.partition("=")[0]


def is_secret(name: str) -> bool:
    """Whether a variable's value is likely a secret, by its name."""
    return _SECRET_NAME.search(name) is not None


def masked(variable: str) -> str:
    """``NAME=value`` with the value hidden when the name says it is likely a secret."""
    name, equals, _value = variable.partition("=")
    return f"{name}{equals}{MASK}" if equals and is_secret(name) else variable


def _why(error: BaseException, pid: int) -> str:
    """Why a fact of process ``pid`` could not be read."""
    if isinstance(error, psutil.AccessDenied | PermissionError):
        return f"not readable ({denied(pid, 'read')})"
    if isinstance(error, psutil.NoSuchProcess | FileNotFoundError | ProcessLookupError):
        return "the process has exited"
    return f"not readable ({getattr(error, 'strerror', None) or error})"



def _relative(process: psutil.Process) -> Relative:
    with process.oneshot():
        try:
            name: str | None = process.name()
        except psutil.Error:
            name = None
        try:
            command: str | None = " ".join(process.cmdline()) or name
        except psutil.Error:
            command = name
        try:
            user: str | None = process.username()
        except (psutil.Error, KeyError):
            user = None
    return Relative(process.pid, name, command, user)


def _environment(process: psutil.Process) -> Readable:
    """A process's whole environment (/proc/PID/environ, as it was at exec), or why it cannot be read."""
    try:
        variables = process.environ()
    except (psutil.Error, OSError) as error:
        return Readable(reason=_why(error, process.pid))
    return Readable(tuple(f"{name}={value}" for name, value in sorted(variables.items())))


def _devices(pid: int) -> Readable:
    """The NVIDIA device files among the process's open files (/proc/PID/fd)."""
    folder = f"/proc/{pid}/fd"
    try:
        descriptors = os.listdir(folder)
    except OSError as error:
        return Readable(reason=_why(error, pid))
    found: set[str] = set()
    for descriptor in descriptors:
        try:
            target = os.readlink(f"{folder}/{descriptor}")
        except OSError:
            continue  # closed while listed
        if target.startswith("/dev/nvidia"):
            found.add(target)
    return Readable(tuple(sorted(found)))


def read_process_detail(identity: ProcessIdentity) -> ProcessDetail:
    """Everything /proc says about the process with this identity (pid, start time)."""
    pid, started = identity
    if started is None:
        return ProcessDetail(pid, gone="not visible from here (no start time): nothing to read")
    try:
        process = psutil.Process(pid)
        if abs(process.create_time() - started) > _START_TOLERANCE_S:
            return ProcessDetail(pid, gone=f"PID {pid} now belongs to another process: the one shown has exited")
        arguments = tuple(process.cmdline())
        user = process.username()
    except psutil.NoSuchProcess:
        return ProcessDetail(pid, gone=f"PID {pid} has exited")
    except (psutil.Error, KeyError, OSError) as error:
        return ProcessDetail(pid, gone=_why(error, pid))
    try:
        cwd = Readable((process.cwd(),))
    except (psutil.Error, OSError) as error:
        cwd = Readable(reason=_why(error, pid))
    try:
        ancestors = tuple(_relative(parent) for parent in process.parents())
        children = tuple(_relative(child) for child in process.children())
    except psutil.Error:
        ancestors = children = ()
    environment = _environment(process)
    return ProcessDetail(
        pid,
        arguments=arguments,
        user=user,
        cwd=cwd,
        ancestors=ancestors,
        children=children,
        environment=environment,
        devices=_devices(pid),
    )
