"""Real cgroups, as root: a sleeping process moved into cgroups named as each runtime names them,
read back through gputop's ProcessInfo (the cgroup file, the environment, the cache)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.host.procinfo import ProcessInfo
from gputop.core.model import Job, ProcessSample

CONTAINER_ID = "5ebf11e02dbde102cda4b76bc0e3849a65f9edac7a12bdabfd34db01b9556101"
POD_UID = "6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b"
SLURM_ENV = {
    "SLURM_JOB_ID": "1234",
    "SLURM_JOB_NAME": "train-llm",
    "SLURM_JOB_USER": "alice",
    "SLURM_JOB_PARTITION": "gpu",
    "SLURM_JOB_ACCOUNT": "proj42",
}


def _mounts(fstype: str) -> list[tuple[str, str]]:
    """(mount point, super options) of each mounted filesystem of this type."""
    found = []
    with open("/proc/self/mountinfo") as mountinfo:
        for line in mountinfo:
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if tail and tail[0] == fstype:
                found.append((fields[4], tail[-1]))
    return found


def _unified_root() -> Path | None:
    mounts = _mounts("cgroup2")
    return Path(mounts[0][0]) if mounts else None


def _v1_root() -> Path | None:
    # Any v1 hierarchy does: pids is small and common; name=systemd where it is the only one.
    for point, options in _mounts("cgroup"):
        if "pids" in options.split(",") or "name=systemd" in options:
            return Path(point)
    return None


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    env = dict(os.environ, **SLURM_ENV)
    process = subprocess.Popen(["sleep", "600"], env=env)
    yield process
    process.kill()
    process.wait()


class Cgroups:
    """Makes cgroup directories under one hierarchy, moves processes in, and removes it all after."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.top = root / f"gputop-test-{uuid.uuid4().hex[:8]}"
        self.made: list[Path] = []

    def move(self, pid: int, relative: str) -> str:
        path = self.top / relative
        try:
            for part in [self.top, *[self.top / p for p in Path(relative).parents][::-1][1:], path]:
                if not part.exists():
                    part.mkdir()
                    self.made.append(part)
            (path / "cgroup.procs").write_text(str(pid))
        except OSError as error:
            pytest.skip(f"the cgroup filesystem at {self.root} is not writable here: {error}")
        return "/" + str(path.relative_to(self.root))

    def remove(self, pid: int) -> None:
        with contextlib.suppress(OSError):  # already gone
            (self.root / "cgroup.procs").write_text(str(pid))
        for path in reversed(self.made):
            path.rmdir()


@pytest.fixture
def cgroups(request: pytest.FixtureRequest, sleeper: subprocess.Popen[bytes]) -> Iterator[Cgroups]:
    if os.geteuid() != 0:
        pytest.skip("creating cgroups needs root")
    root = _unified_root() if request.param == "v2" else _v1_root()
    if root is None:
        pytest.skip(f"no cgroup {request.param} hierarchy is mounted here")
    made = Cgroups(root)
    yield made
    sleeper.kill()
    sleeper.wait()
    made.remove(sleeper.pid)


def _sample(pid: int) -> ProcessSample:
    facts = ProcessInfo().lookup([pid])[pid]
    assert facts is not None
    return facts.apply(ProcessSample(pid=pid, gpu_index=0, type="C"))


@pytest.mark.parametrize("cgroups", ["v2"], indirect=True)
def test_a_process_in_a_kind_pods_container_cgroup_is_that_container_in_that_pod(
    cgroups: Cgroups, sleeper: subprocess.Popen[bytes]
) -> None:
    path = cgroups.move(
        sleeper.pid,
        "kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
        f"kubelet-kubepods-besteffort-pod{POD_UID.replace('-', '_')}.slice/cri-containerd-{CONTAINER_ID}.scope",
    )
    assert f"0::{path}\n" in Path(f"/proc/{sleeper.pid}/cgroup").read_text()
    sample = _sample(sleeper.pid)
    assert (sample.container, sample.container_runtime, sample.container_id, sample.pod_uid, sample.job) == (
        f"k8s:{POD_UID}", "containerd", CONTAINER_ID, POD_UID, None,
    )


@pytest.mark.parametrize("cgroups", ["v2"], indirect=True)
def test_a_process_in_a_slurm_v2_step_is_in_that_job_with_its_environment(
    cgroups: Cgroups, sleeper: subprocess.Popen[bytes]
) -> None:
    cgroups.move(sleeper.pid, "system.slice/slurmstepd.scope/job_1234/step_0/user/task_0")
    sample = _sample(sleeper.pid)
    assert sample.job == Job(
        scheduler="slurm", id="1234", step="0", name="train-llm", user="alice", partition="gpu", account="proj42"
    )
    assert sample.container is None and sample.pod_uid is None


@pytest.mark.parametrize("cgroups", ["v1"], indirect=True)
def test_a_process_in_a_slurm_v1_batch_step_is_in_that_job(cgroups: Cgroups, sleeper: subprocess.Popen[bytes]) -> None:
    cgroups.move(sleeper.pid, "slurm/uid_1000/job_1234/step_batch/task_0")
    sample = _sample(sleeper.pid)
    assert sample.job is not None
    assert (sample.job.id, sample.job.step, sample.job.user, sample.job.name) == ("1234", "batch", "alice", "train-llm")


@pytest.mark.parametrize("cgroups", ["v1"], indirect=True)
def test_a_process_in_a_v1_docker_cgroup_is_that_container(cgroups: Cgroups, sleeper: subprocess.Popen[bytes]) -> None:
    cgroups.move(sleeper.pid, f"docker/{CONTAINER_ID}")
    sample = _sample(sleeper.pid)
    assert (sample.container, sample.container_runtime, sample.container_id, sample.job) == (
        f"docker:{CONTAINER_ID[:12]}", "docker", CONTAINER_ID, None,
    )


@pytest.mark.parametrize("cgroups", ["v2"], indirect=True)
def test_a_process_in_a_service_cgroup_has_no_owner(cgroups: Cgroups, sleeper: subprocess.Popen[bytes]) -> None:
    cgroups.move(sleeper.pid, "system.slice/sshd.service")
    sample = _sample(sleeper.pid)
    assert (sample.container, sample.container_id, sample.pod_uid, sample.job) == (None, None, None, None)


def test_a_process_at_its_cgroup_namespace_root_is_named_by_the_files_bound_into_it(tmp_path: Path) -> None:
    """As inside a container with a private cgroup namespace: ``0::/``, and Docker's hostname file bound
    over /etc/hostname in the process's own mount namespace."""
    root = _unified_root()
    if os.geteuid() != 0 or root is None or not (root / "cgroup.procs").exists():
        pytest.skip("needs root and a unified cgroup hierarchy")
    hostname = tmp_path / "docker" / "containers" / CONTAINER_ID / "hostname"
    hostname.parent.mkdir(parents=True)
    hostname.write_text("c0ffee\n")
    script = f"mount --bind {hostname} /etc/hostname && echo ready && exec sleep 600"
    try:
        process = subprocess.Popen(["unshare", "--mount", "sh", "-c", script], stdout=subprocess.PIPE)
    except FileNotFoundError:
        pytest.skip("no unshare(1) here")
    try:
        assert process.stdout is not None
        if process.stdout.readline() != b"ready\n":
            pytest.skip("cannot make a mount namespace here")
        try:
            (root / "cgroup.procs").write_text(str(process.pid))
        except OSError as error:
            pytest.skip(f"the cgroup filesystem at {root} is not writable here: {error}")
        assert "0::/\n" in Path(f"/proc/{process.pid}/cgroup").read_text()
        sample = _sample(process.pid)
        assert (sample.container, sample.container_runtime, sample.container_id) == (
            f"docker:{CONTAINER_ID[:12]}", "docker", CONTAINER_ID,
        )
    finally:
        process.kill()
        process.wait()


@pytest.mark.parametrize("cgroups", ["v2"], indirect=True)
def test_json_once_and_once_by_job_on_the_fake_driver_with_real_slurm_cgroups(
    cgroups: Cgroups, sleeper: subprocess.Popen[bytes], fake_nvml: FakeNvml
) -> None:
    """The real command, its GPU processes real ones in Slurm steps' cgroups. Job 1234 has a process on
    each GPU, job 99 one on GPU 0, and one process is in no job. GPU 0 is split by SM % (60 + 20), GPU 1
    by memory (6 + 2 GiB: the driver gives no SM % there)."""
    others = [subprocess.Popen(["sleep", "600"]) for _ in range(3)]
    try:
        batch, step1, free = others
        cgroups.move(sleeper.pid, "system.slice/slurmstepd.scope/job_1234/step_0/user/task_0")
        cgroups.move(batch.pid, "system.slice/slurmstepd.scope/job_99/step_batch/user/task_0")
        cgroups.move(step1.pid, "system.slice/slurmstepd.scope/job_1234/step_1/user/task_0")
        fake_nvml.write(
            Scenario()
            .gpu(memory_total=80 * GiB, memory_used=41 * GiB, power_mw=400_000)
            .gpu(memory_total=48 * GiB, memory_used=9 * GiB, power_mw=100_000)
            .process(gpu=0, pid=sleeper.pid, used=30 * GiB, sm=60)
            .process(gpu=0, pid=batch.pid, used=10 * GiB, sm=20)
            .process(gpu=1, pid=step1.pid, used=6 * GiB)
            .process(gpu=1, pid=free.pid, used=2 * GiB)
        )
        run = [sys.executable, "-m", "gputop"]
        result = subprocess.run([*run, "--json"], capture_output=True, text=True, timeout=60, env=fake_nvml.env())
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        first = document["gpus"][0]["processes"][0]
        assert {key: first[key] for key in ("pid", "container", "container_runtime", "container_id", "pod_uid",
                                            "job")} == {
            "pid": sleeper.pid, "container": None, "container_runtime": None, "container_id": None, "pod_uid": None,
            "job": {"scheduler": "slurm", "id": "1234", "step": "0", "name": "train-llm", "user": "alice",
                    "partition": "gpu", "account": "proj42"},
        }
        assert document["gpus"][1]["processes"][1]["job"] is None
        owners = document["owners"]
        assert owners["job"] == [
            {"name": "1234", "gpus": [0, 1], "gpu_memory": 36 * GiB, "memory_share": 36 / 128, "sm_share": 0.6,
             "power_share_w": 375.0, "energy_since_start_j": None, "idle_memory": 0, "processes": 2},
            {"name": "99", "gpus": [0], "gpu_memory": 10 * GiB, "memory_share": 10 / 128, "sm_share": 0.2,
             "power_share_w": 100.0, "energy_since_start_j": None, "idle_memory": 0, "processes": 1},
        ]
        assert (owners["pod"], owners["container"]) == ([], [])
        assert [(entry["name"], entry["processes"]) for entry in owners["user"]] == [("root", 4)]
        result = subprocess.run([*run, "--once", "--by", "job", "--width", "100"], capture_output=True, text=True,
                                timeout=60, env=fake_nvml.env())
        assert result.returncode == 0, result.stderr
        assert [line.split()[:9] for line in result.stdout.splitlines()] == [
            ["JOB", "GPUS", "GPU-MEM", "MEM%", "SM", "POWER", "ENERGY", "IDLE-MEM", "PROCS"],
            ["1234", "0,1", "36.0GiB", "28%", "60%", "375W", "N/A", "-", "2"],
            ["99", "0", "10.0GiB", "8%", "20%", "100W", "N/A", "-", "1"],
        ]
        result = subprocess.run([*run, "--once", "--width", "100"], capture_output=True, text=True, timeout=60,
                                env=fake_nvml.env())
        assert result.returncode == 0, result.stderr
        [row] = [line for line in result.stdout.splitlines() if line.split()[1:2] == [str(batch.pid)]]
        assert row.endswith("  [job 99.batch] sleep 600")
    finally:
        for process in others:
            process.kill()
            process.wait()
