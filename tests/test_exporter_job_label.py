"""``gputop export --job-label``: a job label on the per-process series, only when asked."""

from __future__ import annotations

from dataclasses import replace

from prometheus_client.exposition import generate_latest

from gputop.cli_args import build_parser
from gputop.core.exporter import SnapshotCollector, make_registry
from gputop.core.model import GpuSample, HostSample, Job, ProcessSample, Snapshot

TRAIN = ProcessSample(pid=101, gpu_index=0, type="C", gpu_memory=1024, user="alice", name="python", visible=True,
                      job=Job(scheduler="slurm", id="1234", step="0"))
SNAPSHOT = Snapshot(timestamp=1.0, hostname="node-1", host=HostSample(), gpus=(
    GpuSample(index=0, uuid="GPU-0", processes=(TRAIN, replace(TRAIN, pid=102, job=None))),
))


def process_lines(job_label: bool) -> list[str]:
    collector = SnapshotCollector(job_label=job_label)
    collector.update(SNAPSHOT)
    text = generate_latest(make_registry(collector)).decode()
    return [line for line in text.splitlines() if line.startswith("gputop_process_gpu_memory_bytes{")]


def test_the_job_label_is_the_jobs_id_and_empty_outside_a_job() -> None:
    assert process_lines(job_label=True) == [
        'gputop_process_gpu_memory_bytes{command="python",container="",container_name="",gpu="0",hostname="node-1",'
        'job="1234",pid="101",user="alice"} 1024.0',
        'gputop_process_gpu_memory_bytes{command="python",container="",container_name="",gpu="0",hostname="node-1",'
        'job="",pid="102",user="alice"} 1024.0',
    ]


def test_without_the_option_no_job_label() -> None:
    assert all("job=" not in line for line in process_lines(job_label=False))
    assert build_parser().parse_args(["export"]).job_label is False
    assert build_parser().parse_args(["export", "--job-label"]).job_label is True
