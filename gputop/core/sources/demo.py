"""A deterministic simulated machine, so gputop can be tried (and screenshotted) without a GPU.

Each call to ``sample()`` advances the simulation by one step; the same seed
gives the same sequence. Processes are simulated: signals act on the
simulation only. The hardware (and which GPU shows which diagnosis) is
``demo_machine``; the processes are ``demo_processes``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from gputop.core.host.procdetail import ProcessDetail
from gputop.core.host.signals import SignalResult
from gputop.core.model import Allocation, Energy, GpuSample, HostSample, MigSample, ProcessIdentity
from gputop.core.sources.demo_machine import (
    ENERGY_BEFORE_J,
    FEW_SMS_GPU,
    GIB,
    MIB,
    MIG_PROFILES,
    STALLED_GPU,
    UNATTRIBUTED,
    clock_reasons,
    gpu_uuid,
    has_gpm,
    health,
    is_mig,
    mig_uuid,
    model_of,
    nvlink,
    pcie_link,
)
from gputop.core.sources.demo_machine import activity as demo_activity
from gputop.core.sources.demo_processes import DemoProcesses, SimProcess

# What the kubelet's PodResources API says on this node: GPU 0 is the training pod's (its
# workers elsewhere run on devices it does not list: a demo's licence).
ALLOCATIONS = {0: Allocation(namespace="ml", pod="llama-train", container="trainer", resource="nvidia.com/gpu")}


class DemoSource:
    """The simulated machine behind ``gputop --demo``."""

    name = "demo"
    simulated = True

    def __init__(
        self,
        gpu_count: int = 4,
        seed: int = 7,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not 1 <= gpu_count <= 16:
            raise ValueError("the demo simulates 1 to 16 GPUs")
        self._gpu_count = gpu_count
        self._random = random.Random(seed)
        self._clock = clock
        self._step = 0
        self._processes = DemoProcesses(gpu_count, self._random, clock)
        self._phase = [self._random.uniform(0, math.tau) for _ in range(gpu_count)]
        self._temperature: dict[int, float] = {}
        self._opened = 0.0
        self._energy_j = [0.0] * gpu_count  # since the demo opened
        self._energy_at = 0.0  # when the energy was last counted

    @property
    def driver_version(self) -> str | None:
        return "560.35.03"

    @property
    def cuda_driver_version(self) -> str | None:
        return "12.6"

    def open(self) -> None:
        self._opened = self._energy_at = self._clock()
        self._processes.start(self._opened)

    def close(self) -> None:
        self._processes.clear()

    def sample(self) -> tuple[GpuSample, ...]:
        self._step += 1
        self._processes.advance(self._step)
        now = self._clock()
        elapsed, self._energy_at = max(0.0, now - self._energy_at), now
        return tuple(self._gpu(index, elapsed) for index in range(self._gpu_count))

    def _gpu(self, index: int, elapsed: float) -> GpuSample:
        model = model_of(index)
        processes = self._processes.on_gpu(index)
        wave = math.sin(self._step / 9 + self._phase[index])
        busy = bool(processes)
        utilization = max(0.0, min(100.0, (72 + 25 * wave) if busy else 0.0))
        utilization = round(utilization + (self._random.uniform(-3, 3) if busy else 0), 0)
        utilization = max(0.0, min(100.0, utilization))
        power = round(60 + (model.power_limit - 90) * utilization / 100 + self._random.uniform(-5, 5), 1)
        stalled = index == STALLED_GPU and busy
        if stalled:
            # A job spinning in a collective: the GPU is "busy" but draws next to nothing.
            utilization, power = 100.0, round(model.power_limit * 0.2 + power / 100, 1)
        if index == FEW_SMS_GPU and busy:
            # Tiny kernels back to back: always "busy", on few SMs, at under half the power.
            utilization, power = 98.0, round(model.power_limit * 0.42 + power / 100, 1)
        self._energy_j[index] += power * elapsed
        link_gen, link_gen_max, link_width, link_width_max = pcie_link(index, busy)
        # Its own jitter, not the machine's random numbers: those keep the sequence they had before.
        jitter = 2 * math.sin(self._step * 1.7 + index) if busy else 0.0
        # A card's temperature follows its load slowly, as its heat sink does.
        few_sms = index == FEW_SMS_GPU and busy
        heat = 20.0 if stalled else 45.0 if few_sms else utilization
        settled = 34 + (model.slowdown - 38) * heat / 100
        previous = self._temperature.get(index, settled)
        self._temperature[index] = previous + 0.08 * (settled - previous)
        temperature = round(self._temperature[index], 0)
        used_by_processes = sum(p.shown_memory for p in processes)
        reserved = 512 * MIB
        ghost = UNATTRIBUTED.get(index, 0)
        used = min(model.memory_total - reserved, used_by_processes + 600 * MIB + ghost)
        mig_devices: tuple[MigSample, ...] = ()
        plain = processes
        if is_mig(index):
            mig_devices = tuple(
                self._mig(index, slot, [p for p in processes if p.mig == slot], utilization)
                for slot in range(len(MIG_PROFILES))
            )
            plain = [p for p in processes if p.mig is None]
        return GpuSample(
            index=index,
            name=model.name,
            uuid=gpu_uuid(index),
            pci_bus_id=f"00000000:{0x18 + index * 0x10:02X}:00.0",
            memory_total=model.memory_total,
            memory_used=used,
            memory_free=model.memory_total - used - reserved,
            memory_reserved=reserved,
            utilization_gpu=utilization,
            utilization_memory=round(utilization * 0.6, 0),
            utilization_encoder=0.0,
            utilization_decoder=0.0,
            temperature=temperature,
            temperature_slowdown=model.slowdown,
            temperature_shutdown=model.shutdown,
            # The HBM boards' memory sensor (a few degrees above the core); the GDDR cards have none.
            memory_temperature=temperature + 3 if "A100" in model.name or has_gpm(index) else None,
            fan_speed=round(30 + utilization * 0.5, 0) if model.has_fan else None,
            power_draw=power,
            power_limit=model.power_limit,
            clock_sm=int(model.sm_clock_max * (0.5 + utilization / 200)) if busy else 210,
            clock_memory=model.memory_clock,
            clock_sm_max=model.sm_clock_max,
            clock_memory_max=model.memory_clock,
            clock_event_reasons=clock_reasons(busy, stalled, power, model.power_limit),
            pstate=0 if busy else 8,
            pcie_rx=round(utilization * 1.3e8, 0),
            pcie_tx=round(utilization * 4.1e7, 0),
            pcie_link_gen=link_gen,
            pcie_link_gen_max=link_gen_max,
            pcie_link_width=link_width,
            pcie_link_width_max=link_width_max,
            pcie_replay_errors=0,
            activity=demo_activity(index, utilization, stalled, jitter),
            energy=Energy(
                since_driver_load_j=round(ENERGY_BEFORE_J + self._energy_j[index], 1),
                since_start_j=round(self._energy_j[index], 1),
            ),
            nvlink=nvlink(index, utilization),
            mig_mode=is_mig(index),
            health=health(index, self._opened),
            mig_devices=mig_devices,
            processes=tuple(DemoProcesses.sample(p, utilization) for p in plain),
            allocation=ALLOCATIONS.get(index),
        )

    def _mig(self, gpu: int, slot: int, processes: list[SimProcess], utilization: float) -> MigSample:
        profile, total = MIG_PROFILES[slot]
        used = min(total, sum(p.shown_memory for p in processes) + 40 * MIB)
        return MigSample(
            index=slot,
            uuid=mig_uuid(gpu, slot),
            name=f"{model_of(gpu).name} MIG {profile}",
            gpu_instance_id=slot + 1,
            compute_instance_id=0,
            memory_total=total,
            memory_used=used,
            memory_free=total - used,
            processes=tuple(DemoProcesses.sample(p, utilization) for p in processes),
        )

    def sample_host(self) -> HostSample | None:
        wave = math.sin(self._step / 7)
        return HostSample(
            cpu_percent=round(38 + 12 * wave + self._random.uniform(-2, 2), 1),
            memory_total=1024 * GIB,
            memory_used=int((412 + 20 * wave) * GIB),
            swap_total=64 * GIB,
            swap_used=int(1.5 * GIB),
            load_average=(round(24 + 4 * wave, 2), 22.5, 20.1),
            net_rx_rate=round(1.2e8 + 3e7 * wave, 0),
            net_tx_rate=round(4.5e7 - 1e7 * wave, 0),
            net_interfaces=("eth0",),
        )

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        return self._processes.signal(identity, signal_number)

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        """What /proc would say about a simulated process."""
        return self._processes.detail(identity)
