"""The demo machine: deterministic, varied, and its processes can be signalled."""

import signal
import subprocess
import sys

from gputop.core.analysis.owners import owner_rollup
from gputop.core.host.signals import Outcome
from gputop.core.model import HostSample, Job, Snapshot
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource


def run(source: DemoSource, steps: int) -> list:  # type: ignore[type-arg]
    source.open()
    return [source.sample() for _ in range(steps)]


def test_the_same_seed_gives_the_same_machine() -> None:
    first = run(DemoSource(gpu_count=4, seed=3, clock=lambda: 5000.0), 20)
    second = run(DemoSource(gpu_count=4, seed=3, clock=lambda: 5000.0), 20)
    assert first == second
    assert run(DemoSource(gpu_count=4, seed=4, clock=lambda: 5000.0), 20) != first


def test_the_demo_has_different_models_a_mig_gpu_and_processes_of_every_type() -> None:
    gpus = run(DemoSource(gpu_count=4, clock=lambda: 5000.0), 1)[-1]
    assert len({gpu.name for gpu in gpus}) == 3
    mig_gpu = gpus[2]
    assert mig_gpu.mig_mode is True
    assert [m.name for m in mig_gpu.mig_devices] == [
        "NVIDIA A100-SXM4-40GB MIG 3g.20gb",
        "NVIDIA A100-SXM4-40GB MIG 2g.10gb",
        "NVIDIA A100-SXM4-40GB MIG 1g.5gb",
    ]
    types = {p.type for gpu in gpus for p in gpu.all_processes()}
    assert types == {"C", "G", "C+G"}
    for gpu in gpus:
        assert gpu.memory_used is not None and gpu.memory_total is not None
        assert 0 < gpu.memory_used <= gpu.memory_total


def test_processes_start_and_end_over_time() -> None:
    history = run(DemoSource(gpu_count=4, clock=lambda: 5000.0), 60)
    pid_sets = [{p.pid for gpu in gpus for p in gpu.all_processes()} for gpus in history]
    assert pid_sets[-1] - pid_sets[0], "no process started"
    assert pid_sets[0] - pid_sets[-1], "no process ended"


def test_signalling_a_simulated_process_ends_it_and_a_second_signal_finds_it_gone() -> None:
    source = DemoSource(gpu_count=2, clock=lambda: 5000.0)
    gpus = run(source, 1)[-1]
    target = gpus[0].all_processes()[0]
    result = source.signal(target.identity, signal.SIGTERM)
    assert result is not None and result.outcome is Outcome.SENT
    assert result.message == f"SIGTERM sent to PID {target.pid} (simulated)"
    after = source.sample()
    assert target.pid not in {p.pid for gpu in after for p in gpu.all_processes()}
    again = source.signal(target.identity, signal.SIGKILL)
    assert again is not None and again.outcome is Outcome.GONE


def test_a_simulated_pid_with_another_start_time_is_refused() -> None:
    source = DemoSource(gpu_count=2, clock=lambda: 5000.0)
    target = run(source, 1)[-1][0].all_processes()[0]
    assert target.started is not None
    result = source.signal((target.pid, target.started + 10), signal.SIGTERM)
    assert result is not None and result.outcome is Outcome.REUSED
    assert target.pid in {p.pid for gpu in source.sample() for p in gpu.all_processes()}


def test_torchrun_is_a_launcher_with_two_workers_whose_detail_the_demo_simulates() -> None:
    source = DemoSource(gpu_count=4, clock=lambda: 5000.0)
    gpus = run(source, 1)[-1]
    workers = [p for gpu in gpus for p in gpu.all_processes() if p.parent_command is not None]
    assert [(p.gpu_index, p.command) for p in workers] == [
        (2, "python -u pretrain.py --local-rank 0"),
        (3, "python -u pretrain.py --local-rank 1"),
    ]
    assert {p.parent_command for p in workers} == {"torchrun --nproc-per-node 2 pretrain.py"}
    assert len({p.parent_pid for p in workers}) == 1
    detail = Sampler(source).process_detail(workers[1].identity)
    assert detail.gone is None
    assert detail.arguments == ("python", "-u", "pretrain.py", "--local-rank", "1")
    assert detail.ancestors[0].pid == workers[1].parent_pid
    assert [a.pid for a in detail.ancestors][-1] == 1
    assert detail.environment.value is not None
    assert "CUDA_VISIBLE_DEVICES=3" in detail.environment.value and "LOCAL_RANK=1" in detail.environment.value
    assert detail.devices.value == ("/dev/nvidia-uvm", "/dev/nvidia3", "/dev/nvidiactl")
    gone = Sampler(source).process_detail((workers[1].pid, 1.0))
    assert gone.gone == f"PID {workers[1].pid} now belongs to another process: the one shown has exited"


def test_the_demo_s_processes_have_owners_of_every_kind_and_gpu_0_is_allocated_to_the_pod() -> None:
    gpus = run(DemoSource(gpu_count=4, clock=lambda: 5000.0), 1)[-1]
    snapshot = Snapshot(timestamp=5000.0, hostname="demo", host=HostSample(), gpus=gpus)
    names = {by: [row.name for row in owner_rollup(snapshot, by)] for by in ("job", "pod", "container")}
    assert names == {
        "job": ["4242", "4317"],  # carol's finetune, frank's sweep (trial 17)
        "pod": ["ml/llama-train"],  # alice's training and her launcher's two workers
        "container": ["vllm-mistral", "containerd:a41f7c02e9d3"],  # bob's server and eval; the pod's container
    }
    carol = next(p for gpu in gpus for p in gpu.all_processes() if p.user == "carol")
    assert carol.job == Job(scheduler="slurm", id="4242", step="0", name="lora-ft", user="carol", partition="gpu",
                            account="nlp")
    assert [gpu.allocation.pod_name if gpu.allocation else None for gpu in gpus] == ["ml/llama-train", None, None, None]


def test_once_by_pod_prints_the_demo_s_pod() -> None:
    result = subprocess.run([sys.executable, "-m", "gputop", "--demo", "--once", "--by", "pod"], capture_output=True,
                            text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    table = result.stdout[result.stdout.index("POD "):].splitlines()
    assert len(table) == 2 and table[1].split()[:2] == ["ml/llama-train", "0,2,3"]
