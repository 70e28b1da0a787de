"""The interface every GPU source offers to the sampler."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from gputop.core.host.signals import SignalResult
from gputop.core.model import GpuSample, HostSample, ProcessIdentity

if TYPE_CHECKING:  # the process screen's reader, imported when a process is opened
    from gputop.core.host.procdetail import ProcessDetail


class SourceUnavailable(Exception):
    """The source cannot be opened (no driver, no library). The message is one clear line."""


# After the one line that says NVML cannot be used: where to look next.
NEXT_STEP = "run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU"


def unavailable(what: str) -> str:
    """The one line gputop prints when NVML cannot be used."""
    return f"NVML is not available: {what} — {NEXT_STEP}"


class GpuSource(Protocol):
    """A source of GPU samples.

    ``sample()`` returns the GPUs with their processes; process host facts
    (user, command, ...) are left ``None`` unless ``simulated`` is true, in
    which case the source fills them in itself and the sampler does not ask
    psutil.
    """

    name: str
    simulated: bool

    def open(self) -> None:
        """Connect; raise SourceUnavailable with a one-line reason on failure."""

    def close(self) -> None:
        """Release the connection."""

    @property
    def driver_version(self) -> str | None: ...

    @property
    def cuda_driver_version(self) -> str | None: ...

    def sample(self) -> tuple[GpuSample, ...]:
        """One sample of every GPU."""
        ...

    def sample_host(self) -> HostSample | None:
        """Host figures, or None to let the sampler read the real host."""
        ...

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        """Signal a simulated process; None when the source's processes are real ones."""
        ...

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        """The whole of a simulated process; None when the source's processes are real ones (read /proc)."""
        ...


@runtime_checkable
class ReadsBeside(Protocol):
    """A source whose GPUs are read on threads of their own (NVML's lanes): the thread that samples
    it, which waits for them, reads the host meanwhile instead of on yet another thread."""

    def beside(self, meanwhile: Callable[[], object]) -> AbstractContextManager[None]:
        """Within it, a sample() on this thread calls ``meanwhile()`` once, on this thread, while the
        GPUs are read or after; what it raises is raised by that sample() once the GPUs' reads are done."""
        ...
