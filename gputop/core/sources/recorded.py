"""A source that answers with the snapshot a replay is at: nothing on it can be signalled."""

from __future__ import annotations

from gputop.core.host.procdetail import ProcessDetail
from gputop.core.host.signals import Outcome, SignalResult, signal_name
from gputop.core.model import GpuSample, HostSample, ProcessIdentity
from gputop.core.recording.replay import Replay


class ReplaySource:
    """GPUs and host as recorded at the replay's position."""

    name = "replay"
    simulated = True

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    def open(self) -> None:
        pass

    def close(self) -> None:
        pass

    @property
    def driver_version(self) -> str | None:
        return self.replay.current.driver_version

    @property
    def cuda_driver_version(self) -> str | None:
        return self.replay.current.cuda_driver_version

    def sample(self) -> tuple[GpuSample, ...]:
        return self.replay.current.gpus

    def sample_host(self) -> HostSample | None:
        return self.replay.current.host

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        message = f"PID {identity[0]} is in a recording: nothing was signalled"
        return SignalResult(identity, signal_name(signal_number), Outcome.FAILED, message)

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        return ProcessDetail(identity[0], gone="a recording: only what was recorded is known, /proc is not read")
