"""Who owns a process: its container, pod and Slurm job, read from /proc/PID/cgroup (and mountinfo).

A cgroup path names its owners as it nests them, outermost first:
``/system.slice/docker-<outer>.scope/kubelet.slice/.../kubelet-kubepods-besteffort-pod<uid>.slice/
cri-containerd-<inner>.scope``. The path is walked left to right and the innermost container wins,
with the pod it sits in. Each rule needs the context its runtime creates (a ``kubepods`` parent for a
pod, ``slurm``/``slurmstepd.scope`` for a job, ``ecs`` and ``garden`` parents): a host process or a
daemon (``/user.slice/...``, ``/system.slice/sshd.service``, ``/system.slice/docker.service``,
``/init.scope``) has no owner, and neither has a hex-named cgroup of some other tool.

A process in a private cgroup namespace sees itself at ``0::/``; the container's id is then in the
files its runtime bound into it (``/etc/hostname`` and friends), listed in /proc/PID/mountinfo.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEX64 = "[0-9a-f]{64}"
_UUID = "[0-9a-f]{8}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{4}[-_][0-9a-f]{12}"
# A pod's cgroup: ``pod<uid>`` (cgroupfs driver) or ``kubepods-<qos>-pod<uid>.slice`` (systemd driver),
# where the uid is a UUID (dashes become underscores in a slice name) or, for a static pod, the
# 32 hex digits of the kubelet's hash of its manifest.
_POD = re.compile(rf"(?:[a-z-]*-)?pod({_UUID}|[0-9a-f]{{32}})(?:\.slice)?")
# Container cgroups a runtime names after itself: ``<prefix>-<id>.scope`` (systemd driver) or
# ``<prefix>-<id>`` (cgroupfs).
_PREFIXED = re.compile(rf"(docker|cri-containerd|crio|libpod)-({_HEX64})(?:\.scope)?")
_PREFIX_RUNTIME = {"docker": "docker", "cri-containerd": "containerd", "crio": "crio", "libpod": "podman"}
# conmon, the monitor CRI-O and Podman start beside each container, runs on the host in a cgroup of its
# own next to the container's: it is in the pod, not in the container.
_CONMON = re.compile(rf"(?:crio|libpod)-conmon-{_HEX64}(?:\.scope)?")
_BARE_ID = re.compile(rf"({_HEX64})(?:\.scope)?")
# ECS on EC2 names the container by its Docker id; Fargate by ``<32 hex>-<number>``.
_ECS_ID = re.compile(rf"{_HEX64}|[0-9a-f]{{32}}-[0-9]+")
_FARGATE_ID = re.compile(r"[0-9a-f]{32}-[0-9]+")
_KUBE_ID = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.-]*")
_GARDEN_ID = re.compile(r"[0-9a-f]{8}(?:-[0-9a-f]{4}){3}[0-9a-z-]*")
# Every rule below needs one of these in the path: a text without any (a login session, a service) is
# passed over at once, as most host processes are when thousands are first seen together. (Substring
# tests: one regex alternating them all, hex ids included, takes ten times as long.)
_MARKERS = ("docker", "kubepods", "crio", "libpod", "containerd", "/ecs/", "garden", "slurm")
_ROOT_ID = re.compile(rf"/{_HEX64}")


def _may_name_an_owner(text: str) -> bool:
    for marker in _MARKERS:
        if marker in text:
            return True
    return _ROOT_ID.search(text) is not None


@dataclass(frozen=True, slots=True)
class Attribution:
    """The owners one cgroup path (or mount table) names; None where it names none."""

    container_runtime: str | None = None
    container_id: str | None = None
    pod_uid: str | None = None
    job_id: str | None = None
    job_step: str | None = None
    job_uid: int | None = None  # the ``uid_N`` of a Slurm cgroup v1 path

    @property
    def label(self) -> str | None:
        """The short container label of the process panel: ``k8s:<pod uid>``, else ``<runtime>:<id12>``."""
        if self.pod_uid is not None:
            return "k8s:" + self.pod_uid
        if self.container_id is not None:
            return f"{self.container_runtime or 'container'}:{self.container_id[:12]}"
        return None


def _is_slurm_root(part: str) -> bool:
    # v1: /slurm/ (or /slurm_<node>/ with several slurmd per host); v2: slurmstepd.scope (or <node>_slurmstepd.scope).
    return part == "slurm" or part.startswith("slurm_") or part.endswith("slurmstepd.scope")


class _Walk:
    """What the components of one path said so far, outermost first."""

    def __init__(self) -> None:
        self.runtime: str | None = None
        self.container_id: str | None = None
        self.pod: str | None = None
        self.pending_pod: str | None = None  # a pod seen since the last container
        self.kube = False
        self.slurm = False
        self.job: str | None = None
        self.step: str | None = None
        self.uid: int | None = None

    def container(self, runtime: str | None, ident: str) -> None:
        # The innermost container wins, with the pod seen since the one outside it (if any).
        self.runtime, self.container_id = runtime, ident
        self.pod, self.pending_pod = self.pending_pod, None

    def part(self, parts: list[str], index: int) -> None:
        part = parts[index]
        parent = parts[index - 1] if index else ""
        if "kubepods" in part:
            self.kube = True
        if _is_slurm_root(part):
            self.slurm = True
        if self.slurm and self._slurm(part):
            return
        pod = _POD.fullmatch(part) if self.kube else None
        if pod is not None:
            self.pending_pod = pod.group(1).replace("_", "-")
            return
        prefixed = _PREFIXED.fullmatch(part)
        bare = _BARE_ID.fullmatch(part)
        if _CONMON.fullmatch(part):
            return
        if prefixed is not None:
            self.container(_PREFIX_RUNTIME[prefixed.group(1)], prefixed.group(2))
        elif self.pending_pod is not None and _POD.fullmatch(parent) and _KUBE_ID.fullmatch(part):
            # cgroupfs driver: /kubepods/<qos>/pod<uid>/<container id>, the runtime unnamed.
            self.container(None, part)
        elif (_ecs_depth(parts, index) in (2, 3) and _ECS_ID.fullmatch(part)) or (
            parent == "ecs" and _FARGATE_ID.fullmatch(part)
        ):
            self.container("ecs", part)
        elif parent == "garden" and _GARDEN_ID.fullmatch(part):
            self.container("garden", part)
        elif bare is not None and parent in ("", "docker"):
            # Docker's cgroupfs driver (/docker/<id>), or its cgroup parent set to the root (/<id>).
            self.container("docker", bare.group(1))

    def _slurm(self, part: str) -> bool:
        name, _, value = part.partition("_")
        if not value:
            return False
        if name == "uid" and value.isdigit():
            self.uid = int(value)
        elif name == "job" and value.isdigit():
            self.job, self.step = value, None
        elif name == "step" and self.job is not None:
            self.step = value
        else:
            return False
        return True

    def attribution(self) -> Attribution | None:
        pod = self.pending_pod or self.pod
        runtime, ident = (None, None) if self.pending_pod else (self.runtime, self.container_id)
        if ident is None and pod is None and self.job is None:
            return None
        job = self.job
        return Attribution(
            container_runtime=runtime,
            container_id=ident,
            pod_uid=pod,
            job_id=job,
            job_step=self.step if job else None,
            job_uid=self.uid if job else None,
        )


def _ecs_depth(parts: list[str], index: int) -> int:
    """How far below an ``ecs`` component this one is (0 where none is above it).

    ECS on EC2 nests ``/ecs/<task>/<container>``, or with cgroup v1 ``/ecs/<cluster>/<task>/<container>``.
    """
    for depth in (2, 3):
        if index >= depth and parts[index - depth] == "ecs":
            return depth
    return 0


def _components(path: str) -> list[str]:
    """A path's components, a systemd driver's colon form expanded.

    containerd and CRI-O under the systemd cgroup driver name a container's cgroup
    ``<pod slice>:<runtime prefix>:<id>``; where that name is left as it is, unexpanded into a
    ``<prefix>-<id>.scope`` under the slice, the path reads ``.../kubepods-...-pod<uid>.slice:cri-containerd:<id>``.
    It is read as the slice, then ``<prefix>-<id>``.
    """
    parts: list[str] = []
    for part in path.split("/"):
        if not part:
            continue
        slice_name, colon, rest = part.partition(":")
        prefix, colon2, ident = rest.partition(":")
        if colon and colon2 and slice_name.endswith(".slice"):
            parts += [slice_name, f"{prefix}-{ident}"]
        else:
            parts.append(part)
    return parts


def attribution_from_path(path: str) -> Attribution | None:
    """The owners one cgroup path names (``/kubepods/besteffort/pod<uid>/<id>``); None for none."""
    parts = _components(path)
    walk = _Walk()
    for index in range(len(parts)):
        walk.part(parts, index)
    return walk.attribution()


def cgroup_paths(text: str) -> list[str]:
    """The paths of /proc/PID/cgroup, the unified hierarchy's (``0::``) first, each once."""
    unified: list[str] = []
    legacy: list[str] = []
    for line in text.splitlines():
        hierarchy, _, rest = line.partition(":")
        controllers, separator, path = rest.partition(":")
        if not separator or not path.startswith("/"):
            continue
        (unified if hierarchy == "0" and not controllers else legacy).append(path)
    ordered: list[str] = []
    for path in unified + legacy:
        if path not in ordered:
            ordered.append(path)
    return ordered


def attribution_from_cgroup(text: str) -> Attribution | None:
    """The owners /proc/PID/cgroup names: the first path that names any, unified hierarchy first.

    On a hybrid host Docker moves its containers in the v1 hierarchies only, leaving the unified
    path at the daemon's (``0::/system.slice/docker.service``): that path names no one and the v1
    paths are read next.
    """
    if not _may_name_an_owner(text):
        return None
    for path in cgroup_paths(text):
        found = attribution_from_path(path)
        if found is not None:
            return found
    return None


def in_namespace_root(text: str) -> bool:
    """Whether /proc/PID/cgroup shows the process at the root of the unified hierarchy (``0::/``):
    in a private cgroup namespace, or a host process at the root; only mountinfo can tell which."""
    return any(line.rstrip() == "0::/" for line in text.splitlines())


# Files a runtime binds into its containers, and the paths they come from (the mount's root within its
# filesystem, so the leading directories vary with where /var/lib or /run is mounted).
_BIND_TARGETS = frozenset({"/etc/hostname", "/etc/hosts", "/etc/resolv.conf", "/dev/termination-log"})
_DOCKER_FILE = re.compile(rf"/containers/({_HEX64})/(?:hostname|hosts|resolv\.conf)$")
_STORAGE_FILE = re.compile(rf"/overlay-containers/({_HEX64})/userdata/")
_KUBELET_POD = re.compile(rf"/kubelet/pods/({_UUID}|[0-9a-f]{{32}})/")
_CONTAINERD_SANDBOX = re.compile(r"/io\.containerd\.grpc\.v1\.cri/sandboxes/")


def attribution_from_mountinfo(text: str) -> Attribution | None:
    """The container and pod named by the files bound into a container (/proc/PID/mountinfo).

    Docker binds ``.../containers/<id>/hostname``; Podman and CRI-O (both on containers/storage)
    ``.../overlay-containers/<id>/userdata/hostname``, CRI-O's in a pod; the kubelet binds
    ``.../kubelet/pods/<uid>/etc-hosts``. containerd's hostname file is its pod sandbox's, whose id
    is not the container's: there the pod alone is known. A host's own mounts (the overlay layers
    under /var/lib/docker) are mounted elsewhere than these targets, and name no one.
    """
    runtime = ident = pod = None
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 5 or fields[4] not in _BIND_TARGETS:
            continue
        root = fields[3]
        if (match := _KUBELET_POD.search(root)) is not None:
            pod = match.group(1).replace("_", "-")
        elif (match := _STORAGE_FILE.search(root)) is not None:
            runtime, ident = "storage", match.group(1)
        elif (match := _DOCKER_FILE.search(root)) is not None:
            runtime, ident = "docker", match.group(1)
        elif _CONTAINERD_SANDBOX.search(root) is not None:
            runtime = "containerd"
    if runtime == "storage":
        runtime = "crio" if pod is not None else "podman"
    if ident is None and pod is None:
        return None
    return Attribution(container_runtime=runtime, container_id=ident, pod_uid=pod)
