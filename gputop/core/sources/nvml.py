"""GPUs and their processes from the NVIDIA driver, through nvidia-ml-py (pynvml).

Every NVML call goes through the one `Gateway` (nvml_gateway.py). The GPUs are
read by `NvmlDevice.sample` (nvml_device.py) on threads of their own (lanes,
lanes.py; nvml_threads.py), one after another while each answers within its
turn, all at once from the first that does not, so that a call that hangs
blocks only its own GPU. A sample waits for the GPUs up to the driver
deadline; a GPU whose read has not come back by then is listed as not
answering (no figures, its last processes marked stale) and is not asked
again until that read returns, so calls never pile up behind a hung one.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pynvml

from gputop.core.host.signals import SignalResult
from gputop.core.model import GpuSample, HostSample, ProcessIdentity
from gputop.core.sources.base import SourceUnavailable
from gputop.core.sources.lanes import Lane, Round, Ticket
from gputop.core.sources.nvml_device import NvmlDevice
from gputop.core.sources.nvml_events import XidEvents
from gputop.core.sources.nvml_gateway import CUDA_VERSIONS, DeviceLost, Gateway, unavailable
from gputop.core.sources.nvml_static import STATIC_RETRY_SAMPLES
from gputop.core.sources.nvml_threads import GpuThreads, Reads, TurnLanes

if TYPE_CHECKING:
    from gputop.core.host.procdetail import ProcessDetail

__all__ = ["DEFAULT_DEADLINE_S", "STATIC_RETRY_SAMPLES", "NvmlSource", "cuda_version_text"]

T = TypeVar("T")

DEFAULT_DEADLINE_S = 2.0
# Closing (quitting) never waits longer than this for the event set to be freed and nvmlShutdown to answer.
CLOSE_WAIT_S = 0.3
# GPUs are read one after another while each answers within this; the first that takes longer
# sets all the rest going at once, each on its own threads (see NvmlSource._take_turns).
TURN_S = 0.005


def cuda_version_text(version: int) -> str:
    """NVML's CUDA driver version integer as "major.minor": 12040 -> "12.4"."""
    return f"{version // 1000}.{version % 1000 // 10}"


class NvmlSource:
    """The real GPUs, through NVML.

    ``deadline_s`` is how long a sample waits for a GPU before listing it as
    not answering. ``on_init_slow`` decides what happens when nvmlInit takes
    longer than that: without it ``open()`` gives up with SourceUnavailable;
    with it, it is called once (with the deadline) and ``open()`` waits on.
    """

    name = "nvml"
    simulated = False

    def __init__(
        self,
        deadline_s: float = DEFAULT_DEADLINE_S,
        on_init_slow: Callable[[float], None] | None = None,
        gateway: Gateway | None = None,
    ) -> None:
        self._gateway = gateway or Gateway()
        self._deadline_s = deadline_s
        self._on_init_slow = on_init_slow
        self._answered = threading.Condition()
        # The tickets threads wait for under it: a lane that answers wakes them only when one of these is done.
        self._waits: list[Sequence[Ticket[Any]]] = []
        self._closing = False
        self._system: Lane | None = None
        self._gpus: list[GpuThreads] = []
        self._turn_lanes = TurnLanes(self._notify)  # the GPUs that answer in their turn are read on these
        self._counting: tuple[Lane, Ticket[int | None]] | None = None  # the last count of the GPUs, and its lane
        self._beside: tuple[int, Callable[[], object]] | None = None  # (thread, what it reads meanwhile): beside()
        self._quick: set[int] = set()  # GPUs that answered within TURN_S when last read in turn
        self._xids: XidEvents | None = None
        self._xid_poll: Ticket[None] | None = None  # the last poll of the XID events (nvml_events.py)
        # The poll's own lane, once the turns are broken: the count has the system lane then.
        self._events_lane: Lane | None = None
        self._open = False
        self._driver_version: str | None = None
        self._cuda_driver_version: str | None = None

    @property
    def driver_version(self) -> str | None:
        return self._driver_version

    @property
    def cuda_driver_version(self) -> str | None:
        return self._cuda_driver_version

    @property
    def gateway(self) -> Gateway:
        return self._gateway

    @property
    def deadline_s(self) -> float:
        return self._deadline_s

    def open(self) -> None:
        """Initialise NVML; SourceUnavailable (one line) when there is no usable driver."""
        self._closing = False
        self._system = Lane("gputop-nvml", self._notify)
        ticket = self._system.submit(self._gateway.init)
        if ticket is None or not self._wait([ticket], time.monotonic() + self._deadline_s):
            if self._on_init_slow is None:
                self._stop_lanes()
                raise SourceUnavailable(
                    unavailable(f"nvmlInit did not answer within {self._deadline_s:g}s")
                )
            self._on_init_slow(self._deadline_s)
            self._wait([ticket] if ticket else [], math.inf)
        if ticket is not None and ticket.error is not None:
            self._stop_lanes()
            raise ticket.error
        self._open = True
        driver = self._ask(lambda: self._system_call(pynvml.nvmlSystemGetDriverVersion))
        self._driver_version = None if driver is None else str(driver)
        cuda = self._ask(lambda: self._system_versions("cuda", CUDA_VERSIONS))
        self._cuda_driver_version = None if cuda is None else cuda_version_text(int(cuda))

    def close(self) -> None:
        """Shut NVML down; safe to call twice, and never longer than CLOSE_WAIT_S whatever the driver is doing.

        The XID event set is freed and NVML shut down on the system lane, unless a call is still out;
        past the wait that goes on there without us (a process that is ending does not need nvmlShutdown).
        """
        if not self._open:
            return
        self._open = False
        with self._answered:
            self._closing = True
            self._answered.notify_all()
        until = time.monotonic() + CLOSE_WAIT_S
        xids, self._xids = self._xids, None
        if self._xid_poll is not None:
            # A poll takes microseconds (the first, registering the GPUs, a little more): waited for,
            # within the close's time, so that NVML is shut down after it.
            self._wait([self._xid_poll], until, closing=True)
        gpus = self._gpus
        if self._system is not None and not self._calls_out(gpus):
            ticket = self._system.submit(lambda: self._shut_down(xids, gpus))
            if ticket is not None:
                self._wait([ticket], until, closing=True)
        self._stop_lanes()

    def _shut_down(self, xids: XidEvents | None, gpus: Sequence[GpuThreads]) -> None:
        """The event set freed and nvmlShutdown, unless a call is still out (it could hang or crash)."""
        if self._calls_out(gpus):
            return
        if xids is not None:
            xids.close()
        self._gateway.shutdown()

    def _calls_out(self, gpus: Sequence[GpuThreads]) -> bool:
        """A call to the driver has not come back, or may be made yet (a GPU's, the count's, the XID
        events' poll, or a round's on its lane)."""
        return (
            self._turn_lanes.busy
            or any(gpu.busy for gpu in gpus)
            or any(
                ticket is not None and not ticket.done
                for ticket in (None if self._counting is None else self._counting[1], self._xid_poll)
            )
        )

    @contextlib.contextmanager
    def beside(self, meanwhile: Callable[[], object]) -> Iterator[None]:
        """Within it, sample() on this thread calls ``meanwhile()`` once on this thread: while a GPU
        slower than its turn is read, else once the GPUs have answered (a thread busy beside the
        GPUs' makes each of their calls wait for the interpreter's lock: a wake-up each, for nothing,
        where they answer at once). What it raises, sample() raises once the GPUs' reads are done."""
        self._beside = (threading.get_ident(), meanwhile)
        try:
            yield
        finally:
            self._beside = None

    def sample(self) -> tuple[GpuSample, ...]:
        """One sample of every GPU; a GPU that stops answering is listed as lost or not answering.

        SourceUnavailable when the GPUs cannot be counted within the deadline and none is known yet.
        """
        beside, meanwhile = self._beside, None
        if beside is not None and beside[0] == threading.get_ident():
            self._beside, meanwhile = None, beside[1]
        if not self._open or self._system is None:
            raise RuntimeError("NvmlSource.sample() before open()")
        until = time.monotonic() + self._deadline_s
        gpus = list(self._gpus)  # close() may empty the list meanwhile
        if self._xids is not None:
            self._xids.publish()  # the GPUs' events known from the tick after they were registered
        reads: list[Reads] = [(None, None)] * len(gpus)
        system = self._system

        def step(at: int) -> Callable[[Lane | None], list[Ticket[Any]]]:
            def start(here: Lane | None) -> list[Ticket[Any]]:
                # A GPU that answered in turn last time is read on the round's lane, its PCIe counters
                # too; one slower than that on its own lanes, its PCIe counters on a lane of their own.
                if self._closing:
                    return []
                gpu = gpus[at]
                reads[at] = gpu.read(here if here is not None and gpu.device.index in self._quick else None)
                return [ticket for ticket in reads[at] if ticket is not None]

            return start

        def count_step(here: Lane | None) -> list[Ticket[Any]]:
            # In turn, on the round's lane, once the GPUs are read: no thread woken for it.
            if self._closing or (self._counting is not None and not self._counting[1].done):
                return []  # the last count is still out: not asked again
            ticket = Ticket(self._count) if here is not None else system.submit(self._count)
            self._counting = None if ticket is None else (here or system, ticket)
            return [] if ticket is None else [ticket]

        def xid_step(here: Lane | None) -> list[Ticket[Any]]:
            # Last, on the round's lane (no thread woken for it, nor one woken when it answers: the
            # round waits for it while the turns hold); once they are broken, on a lane of its own
            # (on the system lane, busy with the count, it was refused every tick the turns broke).
            # Its events are joined to the GPUs' samples below. Not asked again while the last poll
            # is out, nor once close() has begun.
            xids, polled = self._xids, self._xid_poll
            if xids is None or self._closing or (polled is not None and not polled.done):
                return []
            if here is None and self._events_lane is None:
                self._events_lane = Lane("gputop-events", self._notify)
            ticket = Ticket(xids.poll) if here is not None else (self._events_lane or system).submit(xids.poll)
            self._xid_poll = ticket
            return [] if ticket is None else [ticket]

        # The GPUs in turn, then the count (a driver slow to count then delays no GPU), then the XID
        # events: a poll that hangs in the driver holds up no tick, not waited for once its turn is over.
        turns = Round(
            [*map(step, range(len(gpus))), count_step, xid_step],
            TURN_S,
            self._wait,
            optional=frozenset({len(gpus) + 1}),
            tell=self._tell_waiting,
        )
        failure = self._take_turns(turns, until, meanwhile)
        for at, quick in enumerate(turns.quick[: len(gpus)]):
            if quick is not None:
                (self._quick.add if quick else self._quick.discard)(gpus[at].device.index)
        counting = self._counting
        if counting is not None and counting[1].done:
            count = counting[1].outcome()
            if self._xids is None and count:
                # Its first poll (the GPUs registered) now, beside the first reads: events from the next tick.
                self._xids = XidEvents(self._gateway, count)
                self._xid_poll = system.submit(self._xids.poll)
            while count is not None and len(self._gpus) < count:
                index = len(self._gpus)
                gpu = GpuThreads(
                    device=NvmlDevice(index=index, gateway=self._gateway, xid_events=self._xids),
                    lane=Lane(f"gputop-gpu{index}", self._notify),
                    pcie_lane=Lane(f"gputop-gpu{index}-pcie", self._notify),
                )
                self._gpus.append(gpu)
                gpus.append(gpu)
                reads.append(gpu.read())
        elif not gpus and not self._closing:
            # No GPU known yet and the driver does not say how many there are: not "0 GPUs".
            lane = system if counting is None else counting[0]
            call = self._gateway.last_call(lane.thread_id) or "nvmlDeviceGetCount"
            raise SourceUnavailable(unavailable(f"{call} did not answer within {self._deadline_s:g}s"))
        self._wait([ticket for pair in reads for ticket in pair if ticket is not None], until)
        if failure is not None:
            raise failure
        samples = [gpu.result(read, self._gateway, self._deadline_s) for gpu, read in zip(gpus, reads, strict=True)]
        polled = self._xid_poll
        if polled is not None and polled.done:  # the events the driver held once the GPUs had been read
            samples = [gpu.device.with_new_events(sample) for gpu, sample in zip(gpus, samples, strict=True)]
        return tuple(samples)

    def _take_turns(self, turns: Round, until: float, meanwhile: Callable[[], object] | None) -> BaseException | None:
        """Read in turn (lanes.Round) until every read is done, ``until`` passes, or close() is called;
        what ``meanwhile`` raised is returned once they are (none left behind to refuse the next tick's).

        Sixteen threads read at once fight over the interpreter's lock at every NVML call: where the
        driver answers in microseconds that costs more CPU than the reads (at 8 GPUs, 8.8 ms a tick
        against 3.3 ms read in one thread). A driver that takes milliseconds a call, as a real one
        does, is read in parallel after TURN_S, as if all had started together. This thread wakes
        when the round is over, or when the turn of the step being read runs out."""
        # Each step starts nothing once close() has begun, and close() shuts nothing down while a
        # round's lane is busy: a round started as close() begins makes no call after its shutdown.
        over = turns.start(self._turn_lanes.lane(), min(TURN_S, until - time.monotonic()))
        while over is False:
            if self._closing or time.monotonic() >= until or turns.overdue():
                break
            over = turns.over(min(until, turns.turn_ends()) - time.monotonic())
        failure = None if meanwhile is None or not turns.broken else _failure(meanwhile)
        if turns.broken:  # every step started (optional ones not waited for): their reads
            self._wait(turns.tickets, until)
        turns.stop()  # given up at the deadline or the close: nothing more starts
        if meanwhile is not None and not turns.broken:
            failure = _failure(meanwhile)
        return failure

    def sample_host(self) -> HostSample | None:
        return None

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        """NVML's processes are real: the caller signals them itself."""
        return None

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        """NVML's processes are real: the caller reads /proc itself."""
        return None

    def _count(self) -> int | None:
        try:
            count = self._system_call(pynvml.nvmlDeviceGetCount)
            return None if count is None else int(count)
        except Exception:  # noqa: BLE001 - an answer gputop cannot read: as if it did not come
            return None

    def _system_call(self, fn: Callable[[], T]) -> T | None:
        try:
            return self._gateway.call(fn)
        except DeviceLost:
            return None

    def _system_versions(self, family: str, versions: Sequence[Callable[[], T]]) -> T | None:
        try:
            return self._gateway.call_versions(family, versions)
        except DeviceLost:
            return None

    def _ask(self, job: Callable[[], T]) -> T | None:
        """job() on the system lane, waited for up to the deadline; None when it does not come back."""
        if self._system is None:
            return None
        ticket = self._system.submit(job)
        if ticket is None or not self._wait([ticket], time.monotonic() + self._deadline_s):
            return None
        return ticket.outcome()

    def _notify(self) -> None:
        """A lane answered: a thread waiting wakes only when what it waits for is all there (not once per lane)."""
        with self._answered:
            if any(map(_all_done, self._waits)):
                self._answered.notify_all()

    def _tell_waiting(self) -> None:
        """A round's lane is done with it: a thread waiting for its tickets is told (none, in a round
        whose turns held: the sampling thread waits for the round itself)."""
        if self._waits:
            self._notify()

    def _wait(self, tickets: Sequence[Ticket[Any]], until: float, closing: bool = False) -> bool:
        """Wait until every ticket is done (True), `until` (monotonic) passes, or close() is called."""
        if _all_done(tickets):
            return True  # the reads of a tick whose turns held: no lock taken
        with self._answered:
            self._waits.append(tickets)
            try:
                while not _all_done(tickets):
                    if self._closing and not closing:
                        return False
                    remaining = until - time.monotonic()
                    if remaining <= 0:
                        return False
                    self._answered.wait(None if math.isinf(remaining) else remaining)
            finally:
                self._waits.remove(tickets)
        return True

    def _stop_lanes(self) -> None:
        for gpu in self._gpus:
            gpu.lane.stop()
            gpu.pcie_lane.stop()
        self._turn_lanes.stop()
        for lane in (self._system, self._events_lane):
            if lane is not None:
                lane.stop()
        self._gpus, self._system, self._events_lane = [], None, None


def _all_done(tickets: Sequence[Ticket[Any]]) -> bool:
    return all(ticket.done for ticket in tickets)


def _failure(job: Callable[[], object]) -> Exception | None:
    """Run job(); what it raised, or None."""
    try:
        job()
    except Exception as error:  # noqa: BLE001 - raised by the caller once the GPUs' reads are done
        return error
    return None

