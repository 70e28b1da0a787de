"""The one JSON codec of a snapshot, its reading half: recordings and replays come back through this.

``snapshot_from_dict`` is the inverse of ``snapshot_json.snapshot_to_dict``, through the same field
tables (``snapshot_fields``). Fields that documents written by older gputops lack come back as None (or
their old meaning), never as a guess.
"""

from __future__ import annotations

from typing import Any

from gputop.core.model import HostSample, ProcessSample, Snapshot
from gputop.core.output.snapshot_fields import HOST_FIELDS, PROCESS_FIELDS, decode, gpu_from_dict


def process_from_dict(data: dict[str, Any], gpu_index: int) -> ProcessSample:
    return ProcessSample(gpu_index=gpu_index, **decode(data, PROCESS_FIELDS))


def snapshot_from_dict(data: dict[str, Any]) -> Snapshot:
    """The inverse of ``snapshot_to_dict``."""
    return Snapshot(
        timestamp=float(data["timestamp"]),
        hostname=str(data["hostname"]),
        host=HostSample(**decode(data["host"], HOST_FIELDS)),
        gpus=tuple(gpu_from_dict(g) for g in data["gpus"]),
        driver_version=data["driver_version"],
        cuda_driver_version=data.get("cuda_driver_version"),
        source=str(data.get("source", "nvml")),
    )
