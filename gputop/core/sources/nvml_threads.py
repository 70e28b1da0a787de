"""The threads NVML's GPUs are read on: each GPU's two lanes, and the lane the GPUs share in turn;
and what a GPU's reads of a tick make of it (``GpuThreads.result``).

A GPU that answers quickly is read, PCIe counters and all, on the lane the GPUs read in turn share
(``TurnLanes``): the lane that has just read one GPU goes on to the next without sleeping, where a
lane of its own per GPU would be one wake-up of a sleeping thread per GPU and tick. A GPU slower
than its turn, or not read in turn, is read on its own two lanes (lanes.py), so that a call that
hangs blocks only its own GPU: a GPU stuck in its turn keeps the shared lane it is stuck on, and the
next tick's turns are read on another.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gputop.core.model import GpuSample
from gputop.core.sources.lanes import Lane, Ticket
from gputop.core.sources.nvml_device import NvmlDevice
from gputop.core.sources.nvml_gateway import DeviceLost, Gateway

# A GPU's two reads: its figures (with the PCIe counters when read on one thread), and its PCIe counters.
Reads = tuple["Ticket[GpuSample] | None", "Ticket[tuple[float | None, float | None]] | None"]


class TurnLanes:
    """The lanes the GPUs read in turn share: one, and another while a GPU is stuck on it."""

    def __init__(self, on_done: Callable[[], None]) -> None:
        self._on_done = on_done
        self._lanes: list[Lane] = []

    def lane(self) -> Lane:
        """An idle lane: the first one there is (the others idle are stopped), else a new one."""
        idle = [lane for lane in self._lanes if not lane.busy]
        for spare in idle[1:]:
            spare.stop()
            self._lanes.remove(spare)
        if idle:
            return idle[0]
        lane = Lane("gputop-gpus", self._on_done)
        self._lanes.append(lane)
        return lane

    @property
    def busy(self) -> bool:
        """A round is still on one of the lanes: a call of it may be out, or be made yet."""
        return any(lane.busy for lane in self._lanes)

    def stop(self) -> None:
        for lane in self._lanes:
            lane.stop()
        self._lanes = []


@dataclass(slots=True)
class GpuThreads:
    """One GPU: what is remembered about it, its two lanes, and its read in turn while it is out."""

    device: NvmlDevice
    lane: Lane  # everything but the PCIe counters
    pcie_lane: Lane
    in_turn: tuple[Lane, Ticket[Any]] | None = None  # the shared lane and the ticket of its last read in turn
    # Its last sample read: one read that reads the same is given as it, whichever lanes read it (a GPU
    # read in turn one tick and on its own lanes the next is one object while nothing moved).
    shown: GpuSample | None = None

    @property
    def busy(self) -> bool:
        """A call to this GPU is still out (nothing more is asked of it until it comes back)."""
        return self.lane.busy or self.pcie_lane.busy or (self.in_turn is not None and not self.in_turn[1].done)

    def lane_of(self, ticket: Ticket[Any] | None) -> Lane:
        """The lane a read of this GPU runs on: that of ``ticket``, else the one still busy with it."""
        if self.in_turn is not None and (self.in_turn[1] is ticket or (ticket is None and not self.in_turn[1].done)):
            return self.in_turn[0]
        if ticket is None:
            return self.lane if self.lane.busy else self.pcie_lane
        return self.lane

    def read(self, here: Lane | None = None) -> Reads:
        """Start reading the GPU: in turn on ``here``, the lane the GPUs read in turn share (a ticket
        its round runs there, with the PCIe counters), else on its two lanes; nothing when a call to
        it is still out."""
        if self.busy:
            return None, None
        if here is not None:
            ticket = Ticket(self.device.sample_with_pcie)
            self.in_turn = (here, ticket)
            return ticket, None
        if self.device.handle is None:
            return self.lane.submit(self.device.sample_with_pcie), None
        return self.lane.submit(self.device.sample), self.pcie_lane.submit(self.device.pcie)

    def result(self, reads: Reads, gateway: Gateway, deadline_s: float) -> GpuSample:
        """The GPU's sample from the reads started this tick, once the wait for them is over: as
        read, or as not answering (naming the call still out) when a read did not come back."""
        main, pcie = reads
        if main is not None and main.done and (pcie is None or pcie.done):
            try:
                return self._shown(self._joined(main, pcie))
            except Exception as error:  # noqa: BLE001 - one GPU's fault stays on that GPU
                stuck = self.pcie_lane if pcie is not None and pcie.error is not None else self.lane_of(main)
                return self.device.failed(error, gateway.last_call(stuck.thread_id))
        stuck = self.lane_of(None)
        since = stuck.started_at
        if since is None and self.device.last is not None and not self.busy:
            return self._shown(self.device.last)  # a read that had missed earlier deadlines came back just now
        call = gateway.last_call(stuck.thread_id) or "NVML"
        return self.device.not_answering(
            time.time() if since is None else since, f"{call} did not answer within {deadline_s:g}s"
        )

    def _joined(self, main: Ticket[GpuSample], pcie: Ticket[tuple[float | None, float | None]] | None) -> GpuSample:
        """The GPU's sample from its two reads, both done; raises what a read raised unexpectedly."""
        if pcie is None:
            return main.outcome()  # read with its PCIe counters, on one thread
        if isinstance(pcie.error, DeviceLost):
            return self.device.lost(str(pcie.error))
        sample = main.outcome()
        if sample.lost or not sample.answering:
            return sample
        rx, tx = pcie.outcome()
        # No counter reading: the rates GPM gave in the main read (if any) stand.
        return dataclasses.replace(
            sample, pcie_rx=sample.pcie_rx if rx is None else rx, pcie_tx=sample.pcie_tx if tx is None else tx
        )

    def _shown(self, sample: GpuSample) -> GpuSample:
        # As the device keeps its sample: the same object while nothing moved (nvml_device._remember).
        shown = self.shown
        if sample is not shown and sample != shown:
            self.shown = shown = sample
        return shown
