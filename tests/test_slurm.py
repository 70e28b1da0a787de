"""A process's Slurm job: the cgroup's id and step, the job's environment, and who the job's user is."""

from __future__ import annotations

from pathlib import Path

from gputop.core.model import GpuSample, HostSample, Job, ProcessSample, Snapshot
from gputop.core.ownership import attribution_from_cgroup
from gputop.core.record import Recorder, read_recording
from gputop.core.slurm import slurm_job

V1_STEP = "4:memory:/slurm/uid_2101171/job_280678/step_0/task_0\n"
V2_STEP = "0::/system.slice/slurmstepd.scope/job_280678/step_extern/user\n"


def environ(**variables: str) -> bytes:
    return b"".join(f"{key}={value}".encode() + b"\0" for key, value in variables.items())


def names(uid: int) -> str:
    return {2101171: "bob"}.get(uid, str(uid))


def test_the_jobs_user_is_slurm_job_user_else_the_v1_uid_else_the_processs_user() -> None:
    v1, v2 = attribution_from_cgroup(V1_STEP), attribution_from_cgroup(V2_STEP)
    with_user = environ(SLURM_JOB_ID="280678", SLURM_JOB_USER="alice", PATH="/usr/bin")
    without = environ(SLURM_JOB_ID="280678", SLURM_JOB_NAME="bert")
    job = slurm_job(v1, with_user, names, "root")
    assert job is not None and (job.id, job.step, job.user) == ("280678", "0", "alice")
    job = slurm_job(v1, without, names, "root")
    assert job is not None and (job.user, job.name) == ("bob", "bert")
    job = slurm_job(v2, without, names, "carol")
    assert job is not None and (job.step, job.user) == ("extern", "carol")


def test_every_field_the_environment_gives_and_none_it_does_not() -> None:
    full = environ(SLURM_JOB_ID="280678", SLURM_JOB_NAME="train", SLURM_JOB_USER="alice",
                   SLURM_JOB_PARTITION="gpu", SLURM_JOB_ACCOUNT="proj42", SLURM_JOBID="280678")
    assert slurm_job(attribution_from_cgroup(V2_STEP), full, names, "root") == Job(
        scheduler="slurm", id="280678", step="extern", name="train", user="alice", partition="gpu", account="proj42"
    )
    # Unreadable (another user's process, gputop not root): what the cgroup says, and the process's user.
    assert slurm_job(attribution_from_cgroup(V2_STEP), None, names, "dave") == Job(
        scheduler="slurm", id="280678", step="extern", user="dave"
    )


def test_an_environment_carried_from_another_job_says_nothing_of_this_one() -> None:
    other = environ(SLURM_JOB_ID="99", SLURM_JOB_NAME="not-this-one", SLURM_JOB_USER="mallory")
    job = slurm_job(attribution_from_cgroup(V1_STEP), other, names, "root")
    assert job == Job(scheduler="slurm", id="280678", step="0", user="bob")


def test_no_job_without_a_slurm_cgroup_whatever_the_environment_says() -> None:
    inherited = environ(SLURM_JOB_ID="280678", SLURM_JOB_NAME="train")
    assert slurm_job(attribution_from_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), inherited,
                     names, "alice") is None
    assert slurm_job(None, inherited, names, "alice") is None


def test_the_owners_of_a_process_survive_a_recording_and_its_replay(tmp_path: Path) -> None:
    job = Job(scheduler="slurm", id="1234", step="batch", name="train", user="alice", partition="gpu", account=None)
    process = ProcessSample(
        pid=4242, gpu_index=0, type="C", gpu_memory=1 << 30, visible=True, user="alice", started=1.0,
        container="k8s:6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b", container_name="ml/trainer-0",
        container_runtime="containerd", container_id="5e" * 32, pod_uid="6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b",
        job=job,
    )
    snapshot = Snapshot(timestamp=10.0, hostname="node", host=HostSample(),
                        gpus=(GpuSample(index=0, processes=(process, ProcessSample(pid=1, gpu_index=0, type="G"))),))
    path = str(tmp_path / "run.jsonl")
    recorder = Recorder(path)
    recorder.write(snapshot)
    recorder.close()
    [replayed] = read_recording(path).snapshots
    assert replayed.gpus[0].processes == snapshot.gpus[0].processes
