"""A capture as a GPU source (``gputop --nvml-capture FILE``): gputop on another machine's NVML answers.

The GPUs are read by the NVML source itself (``NvmlSource``, the device code, every fallback),
through a gateway answered from the capture (core/capture/player.py): no NVML library is needed.
What is not NVML comes from each tick's recorded ``--json``: the host's figures, the processes'
host facts (user, command, CPU, container, ...), the kubelet's allocations, the tick's time and the
host's name. Each sample is the capture's next tick; after the last, the last one again.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from gputop.core.capture.capture_file import Capture, CaptureError, read_capture
from gputop.core.capture.player import Player, ReplayGateway
from gputop.core.host.signals import Outcome, SignalResult, signal_name
from gputop.core.model import GpuSample, HostSample, ProcessIdentity, ProcessSample, Snapshot
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.nvml import NvmlSource

if TYPE_CHECKING:
    from gputop.core.host.procdetail import ProcessDetail

# What the sampler joins to a process from /proc; a capture has them from its recorded --json.
HOST_FACTS = (
    "started", "user", "name", "command", "cpu_percent", "host_memory", "container", "container_name",
    "visible", "parent_pid", "parent_command", "not_visible_reason", "container_runtime", "container_id",
    "pod_uid", "job",
)
DEFAULT_INTERVAL_S = 1.0


class CaptureSource(NvmlSource):
    """The captured machine's GPUs, read by the NVML source from the capture, tick by tick; nothing on
    it can be signalled."""

    name = "capture"
    simulated = True  # its processes' host facts come with it: /proc here is not that machine's

    def __init__(self, capture: Capture, path: str, deadline_s: float) -> None:
        self.capture = capture
        self.path = path
        self.player = Player(capture)
        # The captured machine's deadline: a call slower than it there is as slow here, and as late.
        deadline_s = _number(capture.facts.get("driver_deadline_s")) or deadline_s
        super().__init__(deadline_s, gateway=ReplayGateway(self.player))
        self._recorded: list[Snapshot | None] = [_decoded(tick.json) for tick in capture.ticks]
        self._interval_s = _number(capture.facts.get("interval_s")) or DEFAULT_INTERVAL_S
        self._start = _number(capture.facts.get("taken"))

    @property
    def hostname(self) -> str | None:
        """The captured host's name (a stand-in when the capture is anonymised)."""
        return self.capture.hostname

    def open(self) -> None:
        try:
            super().open()
        except SourceUnavailable as error:  # the captured machine's own failure, replayed
            raise SourceUnavailable(f"{self.path} (a capture): {error}") from None

    def close(self) -> None:
        self.player.closed.set()
        super().close()

    def clock(self) -> float:
        """The time of the tick being replayed, as recorded; past the last, one interval a tick on."""
        tick = self.player.tick
        known = [(at, snapshot.timestamp) for at, snapshot in enumerate(self._recorded, 1) if snapshot is not None]
        before = [pair for pair in known if pair[0] <= tick]
        if before:
            at, timestamp = before[-1]
            return timestamp + (tick - at) * self._interval_s
        if known:
            return known[0][1] - (known[0][0] - tick) * self._interval_s
        return (self._start or 0.0) + tick * self._interval_s

    def sample(self) -> tuple[GpuSample, ...]:
        self.player.next_tick()
        gpus = super().sample()
        recorded = self._current()
        if recorded is None:
            return gpus
        by_index = {gpu.index: gpu for gpu in recorded.gpus}
        return tuple(_with_recorded(gpu, by_index.get(gpu.index)) for gpu in gpus)

    def sample_host(self) -> HostSample | None:
        recorded = self._current()
        return HostSample() if recorded is None else recorded.host

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        message = f"PID {identity[0]} is in a capture of another machine: nothing was signalled"
        return SignalResult(identity, signal_name(signal_number), Outcome.FAILED, message)

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        from gputop.core.host.procdetail import ProcessDetail

        return ProcessDetail(identity[0], gone="a capture of another machine: only what was recorded is known")

    def _current(self) -> Snapshot | None:
        if not self._recorded:
            return None
        return self._recorded[min(max(self.player.tick, 1), len(self._recorded)) - 1]


def open_capture(path: str, deadline_s: float) -> CaptureSource:
    """The capture in ``path`` as a source; SourceUnavailable (one line) when it cannot be read."""
    try:
        return CaptureSource(read_capture(path), path, deadline_s)
    except CaptureError as error:
        raise SourceUnavailable(str(error)) from None


def _decoded(document: dict[str, Any] | None) -> Snapshot | None:
    if document is None:
        return None
    try:
        return snapshot_from_dict(document)
    except (ValueError, KeyError, TypeError):
        return None  # the tick's processes are shown without host facts


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _with_recorded(gpu: GpuSample, recorded: GpuSample | None) -> GpuSample:
    """The GPU as NVML's answers give it, with what the recorded tick says beyond NVML."""
    if recorded is None:
        return gpu
    facts = {(p.mig_index, p.pid): p for p in recorded.all_processes()}
    return dataclasses.replace(
        gpu,
        processes=tuple(_process(p, facts) for p in gpu.processes),
        mig_devices=tuple(
            dataclasses.replace(mig, processes=tuple(_process(p, facts) for p in mig.processes))
            for mig in gpu.mig_devices
        ),
        allocation=recorded.allocation,
    )


def _process(process: ProcessSample, facts: dict[tuple[int | None, int], ProcessSample]) -> ProcessSample:
    recorded = facts.get((process.mig_index, process.pid))
    if recorded is None:
        return process
    return dataclasses.replace(process, **{name: getattr(recorded, name) for name in HOST_FACTS})
