"""The doctor's checks of this host that need no driver: device files, the PID namespace, whether /proc
shows other users' processes, container names and the terminal's colours."""

from __future__ import annotations

import glob
import os
import socket
from collections.abc import Mapping
from pathlib import Path

from gputop.core.doctor.findings import ERROR, OK, UNKNOWN, WARNING, Finding
from gputop.core.host.containers import DOCKER_SOCKET, PODS_DIR
from gputop.core.host.permission import me
from gputop.core.host.pidns import read_pid_namespace

SOCKET_TIMEOUT_S = 1.0


def device_files(nvml_answers: bool, pattern: str = "/dev/nvidia*") -> Finding:
    """The NVIDIA device files: without them no driver call can reach a GPU."""
    found = sorted(glob.glob(pattern))
    if found:
        return Finding("device_files", "device files", OK, ", ".join(found))
    return Finding(
        "device_files",
        "device files",
        WARNING if nvml_answers else ERROR,
        "no /dev/nvidia* device files",
        "the NVIDIA kernel module is not loaded (`sudo modprobe nvidia`, or install the driver), or this"
        " container was started without the GPUs (`docker run --gpus all`, or request `nvidia.com/gpu`"
        " in Kubernetes)",
    )


def pid_namespace() -> Finding:
    """gputop in the host's PID namespace, or not: NVML lists GPU processes by host PID."""
    title = "PID namespace"
    found = read_pid_namespace()
    if found.host:
        return Finding("pid_namespace", title, OK, f"the host's ({found.evidence})")
    if found.host is None:
        return Finding("pid_namespace", title, UNKNOWN, found.evidence)
    return Finding(
        "pid_namespace",
        title,
        WARNING,
        f"not the host's ({found.evidence}): GPU processes show as \"not visible: other PID namespace\","
        " without user or command, and cannot be signalled",
        "run the container with `--pid=host` (Kubernetes: `hostPID: true`)",
    )


_DOCKER_ADVICE = "run gputop as root or as a member of the `docker` group"
_PODS_ADVICE = "run gputop as root (the kubelet's pod folders are root's)"


def _exists(path: str) -> bool | OSError:
    """Whether ``path`` is there; the error where a folder above it cannot be entered."""
    try:
        os.stat(path)
    except FileNotFoundError:
        return False
    except OSError as error:
        return error
    return True


def _docker(path: str) -> tuple[str, str, str | None] | None:
    there = _exists(path)
    if isinstance(there, OSError):
        return (WARNING, f"{path}: {there.strerror}, so Docker containers are named by ID only", _DOCKER_ADVICE)
    if not there:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.settimeout(SOCKET_TIMEOUT_S)
        try:
            connection.connect(path)
            connection.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            answer = connection.recv(64)
        except PermissionError:
            return (WARNING, f"{path}: permission denied, so Docker containers are named by ID only", _DOCKER_ADVICE)
        except OSError as error:
            return (WARNING, f"{path}: Docker does not answer ({error.strerror or error})",
                    "start Docker, or ignore this where no GPU process runs in a Docker container")
    if not answer.startswith(b"HTTP/"):
        return (WARNING, f"{path}: not Docker's Engine API", None)
    return (OK, f"{path}: Docker answers", None)


def _pods(path: str) -> tuple[str, str, str | None] | None:
    there = _exists(path)
    if there is False:
        return None
    try:
        os.listdir(path)
    except OSError as error:
        return (WARNING, f"{path}: {error.strerror or error}, so Kubernetes pods are named by UID only", _PODS_ADVICE)
    return (OK, f"{path}: readable", None)


def container_names(docker_socket: str = DOCKER_SOCKET, pods_dir: str = PODS_DIR) -> Finding:
    """Whether a container's ID can be turned into its name: Docker's socket, the kubelet's pod folders."""
    answers = [found for found in (_docker(docker_socket), _pods(pods_dir)) if found is not None]
    if not answers:
        return Finding("container_names", "container names", OK,
                       f"neither {docker_socket} nor {pods_dir} here: no containers to name")
    status = WARNING if any(status == WARNING for status, _, _ in answers) else OK
    advice = "; ".join(advice for _, _, advice in answers if advice) or None
    return Finding("container_names", "container names", status, "; ".join(text for _, text, _ in answers), advice)


def colours(environ: Mapping[str, str]) -> Finding:
    """COLORTERM: what tells Textual the terminal shows 24-bit colour; ssh does not forward it by default."""
    title = "terminal colours"
    value = environ.get("COLORTERM")
    if value:
        return Finding("colorterm", title, OK, f"COLORTERM={value}")
    if any(environ.get(name) for name in ("SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY")):
        return Finding(
            "colorterm",
            title,
            WARNING,
            "COLORTERM is not set in this SSH session: gputop's colours fall back to 256",
            "ssh does not forward COLORTERM: add `SendEnv COLORTERM` to ~/.ssh/config where ssh starts and"
            " `AcceptEnv COLORTERM` to the server's sshd_config, or `export COLORTERM=truecolor` here if"
            " your terminal shows 24-bit colour",
        )
    return Finding("colorterm", title, OK, "COLORTERM is not set: the terminal is taken to show 256 colours")


def _proc_options(mountinfo: str) -> dict[str, str] | None:
    """The super options of the proc filesystem seen on /proc (``hidepid``, ``gid``), or None.

    Mounts stacked on /proc are listed in the order they were made: the last one is the one seen.
    """
    found = None
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) > 4 and fields[4] == "/proc" and tail and tail[0] == "proc":
            options = tail[-1].split(",") if len(tail) >= 3 else []
            found = dict(option.partition("=")[::2] for option in options)
    return found


def proc_visibility(
    mountinfo: str | None = None, euid: int | None = None, groups: tuple[int, ...] | None = None, user: str = ""
) -> Finding:
    """Whether /proc shows gputop other users' processes: ``hidepid`` hides them from all but root and
    the group named by ``gid=``, and their GPU processes then have no user, command or signal."""
    title = "other users' processes"
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError as error:
            return Finding("proc_visibility", title, UNKNOWN, f"/proc/self/mountinfo: {error.strerror or error}")
    options = _proc_options(mountinfo)
    if options is None:
        return Finding("proc_visibility", title, UNKNOWN, "no proc filesystem mounted on /proc")
    hidepid = options.get("hidepid", "0")
    if hidepid in ("0", "off"):
        return Finding("proc_visibility", title, OK, "/proc shows every user's processes")
    euid = os.geteuid() if euid is None else euid
    groups = tuple(os.getgroups()) + (os.getegid(),) if groups is None else groups
    exempt_group = options.get("gid")
    mount = f"/proc is mounted with hidepid={hidepid}" + (f",gid={exempt_group}" if exempt_group else "")
    if euid == 0:
        return Finding("proc_visibility", title, OK, f"{mount}, but gputop runs as root and sees every process")
    if exempt_group is not None and exempt_group.isdigit() and int(exempt_group) in groups:
        return Finding("proc_visibility", title, OK, f"{mount}, and gputop's user is in group {exempt_group}")
    who = user or me()
    return Finding(
        "proc_visibility",
        title,
        WARNING,
        f"{mount}: gputop, as {who}, sees only its own processes; other users' GPU processes show N/A as"
        " their user and command, and cannot be signalled",
        "run gputop as root, or have /proc remounted with a group gputop's user is in"
        " (`mount -o remount,hidepid=2,gid=GROUP /proc`)",
    )
