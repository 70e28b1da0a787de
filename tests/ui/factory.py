"""Hand-made snapshots and sources for the UI tests: exact rows, no wall clock, no hostname."""

from __future__ import annotations

import signal as signal_module
from collections.abc import Iterable

from textual.widgets import Static

from gputop.core.host.procdetail import ProcessDetail
from gputop.core.host.signals import Outcome, SignalResult, signal_name
from gputop.core.host.visibility import PID_NAMESPACE
from gputop.core.model import GpuSample, HostSample, MigSample, ProcessIdentity, ProcessSample, Snapshot
from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource
from gputop.ui.app import GpuTopApp

GIB = 1024**3
NOW = 1_700_000_000.0
HOST = HostSample(
    cpu_percent=37.5,
    memory_total=512 * GIB,
    memory_used=200 * GIB,
    swap_total=16 * GIB,
    swap_used=1 * GIB,
    load_average=(12.0, 10.5, 9.25),
    net_rx_rate=50 * 1024**2,
    net_tx_rate=5 * 1024**2,
)


def proc(
    pid: int,
    gpu: int,
    memory_gib: float,
    user: str | None = "alice",
    command: str | None = "python train.py",
    *,
    cpu: float | None = 10.0,
    age_s: float | None = 60.0,
    started: float | None = None,
    container: str | None = None,
    mig: int | None = None,
    visible: bool = True,
    kind: str = "C",
    sm: float | None = 50.0,
) -> ProcessSample:
    if not visible:
        return ProcessSample(
            pid=pid, gpu_index=gpu, type=kind, gpu_memory=int(memory_gib * GIB), mig_index=mig,
            not_visible_reason=PID_NAMESPACE,
        )
    return ProcessSample(
        pid=pid,
        gpu_index=gpu,
        type=kind,
        gpu_memory=int(memory_gib * GIB),
        sm_utilization=sm,
        mig_index=mig,
        started=started if started is not None else (None if age_s is None else NOW - age_s),
        user=user,
        name=None if command is None else command.split()[0],
        command=command,
        cpu_percent=cpu,
        host_memory=2 * GIB,
        container=container,
        visible=True,
    )


def gpu(
    index: int,
    processes: Iterable[ProcessSample] = (),
    *,
    total_gib: float = 80,
    name: str = "NVIDIA H100 80GB HBM3",
    utilization: float = 50.0,
    temperature: float = 60.0,
    lost: bool = False,
    migs: tuple[MigSample, ...] = (),
) -> GpuSample:
    if lost:
        return GpuSample(index=index, name=name, lost=True)
    processes = tuple(processes)
    used = sum(p.gpu_memory or 0 for p in processes) + sum(m.memory_used or 0 for m in migs) + GIB // 2
    return GpuSample(
        index=index,
        name=name,
        uuid=f"GPU-{index:04d}",
        memory_total=int(total_gib * GIB),
        memory_used=used,
        utilization_gpu=utilization,
        utilization_memory=utilization / 2,
        temperature=temperature,
        temperature_slowdown=87.0,
        temperature_shutdown=92.0,
        power_draw=300.0,
        power_limit=700.0,
        clock_sm=1500,
        pstate=0,
        mig_mode=bool(migs),
        mig_devices=migs,
        processes=processes,
    )


def snapshot(*gpus: GpuSample, timestamp: float = NOW) -> Snapshot:
    return Snapshot(
        timestamp=timestamp,
        hostname="node-07",
        host=HOST,
        gpus=gpus,
        driver_version="560.35.03",
        cuda_driver_version="12.6",
        source="test",
    )


def two_gpu_snapshot(**changes: float) -> Snapshot:
    """GPU 0 (80 GiB) runs 101 and 102; GPU 1 (32 GiB) runs 203, 204 and 305 (not visible)."""
    return snapshot(
        gpu(
            0,
            [
                proc(101, 0, changes.get("m101", 40), "alice", "python train.py --bs 16", cpu=90, age_s=3600,
                     container="k8s:pod-a"),
                proc(102, 0, changes.get("m102", 20), "bob", "python -m vllm serve", cpu=150, age_s=7200,
                     container="docker:abc123"),
            ],
        ),
        gpu(
            1,
            [
                proc(203, 1, changes.get("m203", 4), "carol", "jupyter-lab --port 8888", cpu=5, age_s=60, kind="G"),
                proc(204, 1, changes.get("m204", 20), "alice", "python eval.py", cpu=30, age_s=600),
                proc(305, 1, 1, visible=False),
            ],
            total_gib=32,
            name="NVIDIA GeForce RTX 4090",
        ),
    )


class StaticSource:
    """A source whose processes are real ones: ``signal`` returns None, so the app uses send_signal."""

    name = "test"
    simulated = True
    driver_version = "560.35.03"
    cuda_driver_version = "12.6"

    def __init__(self, gpus: tuple[GpuSample, ...] = (), host: HostSample = HOST) -> None:
        self.gpus = gpus
        self.host = host
        # What the process screen reads for each process; the rest read as gone.
        self.details: dict[ProcessIdentity, ProcessDetail] = {}

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    def sample(self) -> tuple[GpuSample, ...]:
        return self.gpus

    def sample_host(self) -> HostSample | None:
        return self.host

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        return None

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        return self.details.get(identity, ProcessDetail(identity[0], gone=f"PID {identity[0]} has exited"))


class RecordingSource(StaticSource):
    """Records the signals it is asked to send, and reports them sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[tuple[ProcessIdentity, int]] = []

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        self.sent.append((identity, signal_number))
        name = signal_name(signal_number)
        return SignalResult(identity, name, Outcome.SENT, f"{name} sent to PID {identity[0]} (test)")


def make_app(source: StaticSource | None = None, *, readonly: bool = False, interval_s: float = 1.0) -> GpuTopApp:
    """An app fed by the test through ``apply_snapshot``: no sampler thread."""
    sampler = Sampler(source or RecordingSource())
    return GpuTopApp(sampler, RunConfig(interval_s=interval_s, readonly=readonly), start_sampler=False)


def demo_snapshots(gpu_count: int, count: int) -> list[Snapshot]:
    """``count`` successive snapshots of the deterministic demo machine, with a fixed clock."""
    clock = iter(NOW + step for step in range(10_000))
    source = DemoSource(gpu_count=gpu_count, seed=7, clock=lambda: NOW)
    source.open()
    snapshots = []
    for _ in range(count):
        gpus = source.sample()
        snapshots.append(
            Snapshot(
                timestamp=next(clock),
                hostname="gpu-node-07",
                host=source.sample_host() or HOST,
                gpus=gpus,
                driver_version=source.driver_version,
                cuda_driver_version=source.cuda_driver_version,
                source="demo",
            )
        )
    return snapshots


def notices(app: GpuTopApp) -> list[str]:
    """The text of each message to be seen now (each open screen's newest, on its message line)."""
    return [note.message for note in app.messages.shown()]


SIGTERM = int(signal_module.SIGTERM)
SIGKILL = int(signal_module.SIGKILL)


def screen_text(app: GpuTopApp) -> str:
    """What the terminal shows now, line by line."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


def kill_targets(app: GpuTopApp) -> str:
    """The processes the kill dialog on screen lists, as the user reads them."""
    return str(app.screen.query_one("#kill-targets", Static).content)


def newest(app: GpuTopApp) -> Snapshot | None:
    """The newest snapshot the app received (the one shown, unless the display is frozen)."""
    return None if app.tick is None else app.tick.snapshot
