"""Words for a GPU's state where its figures alone would mislead: why it is lost, MIG mode without instances.

Shared by the card, the detail screen and ``--once``, so they say the same thing.
"""

from __future__ import annotations

from gputop.core.analysis.diagnosis.xid import xid_text
from gputop.core.model import GpuSample

MIG_NO_INSTANCES = "MIG on · no instances"
LOST_UNEXPLAINED = "no longer answering (fallen off the bus?)"


def lost_reason(gpu: GpuSample) -> str:
    """Why a lost GPU is lost: the newest XID the driver sent about it, else the usual guess."""
    events = gpu.health.xid_events
    if not events:
        return LOST_UNEXPLAINED
    return xid_text(max(events, key=lambda event: event.time).code)


def mig_state(gpu: GpuSample) -> str | None:
    """``MIG on · no instances`` for a GPU in MIG mode with no MIG device: nothing can run on it."""
    return MIG_NO_INSTANCES if gpu.mig_mode and not gpu.mig_devices else None
