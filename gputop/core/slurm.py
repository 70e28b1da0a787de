"""A process's Slurm job: the id and step its cgroup names, and what the job's environment adds.

slurmstepd exports ``SLURM_JOB_NAME``, ``SLURM_JOB_USER``, ``SLURM_JOB_PARTITION`` and
``SLURM_JOB_ACCOUNT`` into every task. They are taken only from an environment whose
``SLURM_JOB_ID`` is the job of the cgroup: a process that carries another job's environment (started
from inside one job, then adopted into another) says nothing about this one.
"""

from __future__ import annotations

from collections.abc import Callable

from gputop.core.model import Job
from gputop.core.ownership import Attribution

_FIELDS = {
    b"SLURM_JOB_NAME": "name",
    b"SLURM_JOB_USER": "user",
    b"SLURM_JOB_PARTITION": "partition",
    b"SLURM_JOB_ACCOUNT": "account",
}
_JOB_ID_KEYS = (b"SLURM_JOB_ID", b"SLURM_JOBID")


def environment_fields(environ: bytes, job_id: str) -> dict[str, str]:
    """The job's fields in /proc/PID/environ (NUL-separated), or none when it names another job."""
    values: dict[bytes, bytes] = {}
    for entry in environ.split(b"\0"):
        key, separator, value = entry.partition(b"=")
        if separator and key.startswith(b"SLURM_JOB"):
            values[key] = value
    ids = {values[key] for key in _JOB_ID_KEYS if key in values}
    if ids != {job_id.encode()}:
        return {}
    return {field: values[key].decode("utf-8", "replace") for key, field in _FIELDS.items() if values.get(key)}


def slurm_job(
    attribution: Attribution | None,
    environ: bytes | None,
    user_name: Callable[[int], str],
    process_user: str | None,
) -> Job | None:
    """The job a process runs in, or None outside a Slurm job.

    ``job.user``: ``SLURM_JOB_USER``, else the ``uid_N`` of a v1 path, else the process's user.
    ``environ`` is /proc/PID/environ, None when unreadable (another user's process, without root).
    """
    if attribution is None or attribution.job_id is None:
        return None
    fields = environment_fields(environ, attribution.job_id) if environ else {}
    user = fields.get("user")
    if user is None and attribution.job_uid is not None:
        user = user_name(attribution.job_uid)
    return Job(
        scheduler="slurm",
        id=attribution.job_id,
        step=attribution.job_step,
        name=fields.get("name"),
        user=user if user is not None else process_user,
        partition=fields.get("partition"),
        account=fields.get("account"),
    )
