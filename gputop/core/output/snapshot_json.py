"""The one JSON codec of a snapshot, its writing half: ``--json``, recordings and the exporter's tests write this.

``snapshot_to_dict`` encodes (optionally with forecasts and alerts), ``dumps`` writes a document as
text; ``snapshot_decode`` reads it back (recordings, replays). Both go through the field tables of
``snapshot_fields``, one per record. The schema: docs/json.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from gputop.core.analysis.alerts import AlertEvent
from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.analysis.diagnosis.codec import add_diagnoses
from gputop.core.analysis.forecast import FORECAST_NOT_YET, GROWTH_NOT_YET, Forecast, Forecasts
from gputop.core.format import safe_json
from gputop.core.model import GpuSample, ProcessSample, Snapshot
from gputop.core.output.snapshot_fields import GPU_FIELDS, HOST_FIELDS, PROCESS_FIELDS, encode

# 2: activity (GPM), energy, NVLink and the PCIe link (issue 29); schema 1 documents still read back.
JSON_SCHEMA_VERSION = 2


def process_to_dict(process: ProcessSample) -> dict[str, Any]:
    return encode(process, PROCESS_FIELDS)


def gpu_to_dict(gpu: GpuSample) -> dict[str, Any]:
    return encode(gpu, GPU_FIELDS)


def forecast_to_dict(forecast: Forecast) -> dict[str, Any]:
    return {"seconds_to_full": forecast.seconds_to_full, "growth_rate": forecast.growth_rate}


def alert_to_dict(event: AlertEvent) -> dict[str, Any]:
    return {
        "time": event.time,
        "gpu": event.gpu_index,
        "mig_device": event.mig_index,
        "kind": event.kind,
        "message": event.message,
        "cleared": event.cleared,
        "subject": event.subject,
        "updated": event.updated,
    }


def _add_forecasts(document: dict[str, Any], snapshot: Snapshot, forecasts: Forecasts) -> None:
    """Per GPU and MIG device ``forecast``, per process ``growth_rate`` (0.0: no steady growth; None: not known yet)."""
    for gpu, gpu_document in zip(snapshot.gpus, document["gpus"], strict=True):
        gpu_document["forecast"] = forecast_to_dict(forecasts.gpus.get(gpu.index, FORECAST_NOT_YET))
        for mig, mig_document in zip(gpu.mig_devices, gpu_document["mig_devices"], strict=True):
            forecast = forecasts.migs.get((gpu.index, mig.index), FORECAST_NOT_YET)
            mig_document["forecast"] = forecast_to_dict(forecast)
            for process, process_document in zip(mig.processes, mig_document["processes"], strict=True):
                growth = forecasts.processes.get(process.identity, GROWTH_NOT_YET)
                process_document["growth_rate"] = growth.growth_rate
        for process, process_document in zip(gpu.all_processes(), gpu_document["processes"], strict=True):
            growth = forecasts.processes.get(process.identity, GROWTH_NOT_YET)
            process_document["growth_rate"] = growth.growth_rate


def snapshot_to_dict(
    snapshot: Snapshot,
    forecasts: Forecasts | None = None,
    alerts: Iterable[AlertEvent] | None = None,
    diagnoses: Diagnoses | None = None,
) -> dict[str, Any]:
    """The ``--json`` document (see the README for the schema).

    With ``forecasts``, every GPU and MIG device gets a ``forecast`` and every
    process a ``growth_rate``; with ``diagnoses``, every GPU a ``verdict``, GPUs
    and MIG devices ``unattributed_memory`` and processes ``idle_seconds``;
    with ``alerts``, the document lists them.
    """
    document = _snapshot_document(snapshot)
    if forecasts is not None:
        _add_forecasts(document, snapshot, forecasts)
    if diagnoses is not None:
        add_diagnoses(document, snapshot, diagnoses)
    if alerts is not None:
        document["alerts"] = [alert_to_dict(event) for event in alerts]
    return document


def _snapshot_document(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "schema": JSON_SCHEMA_VERSION,
        "timestamp": snapshot.timestamp,
        "hostname": snapshot.hostname,
        "source": snapshot.source,
        "driver_version": snapshot.driver_version,
        "cuda_driver_version": snapshot.cuda_driver_version,
        "host": encode(snapshot.host, HOST_FIELDS),
        "gpus": [gpu_to_dict(g) for g in snapshot.gpus],
    }


def dumps(document: dict[str, Any], *, indent: int | None = None) -> str:
    """A document as JSON text: UTF-8 kept, terminal controls escaped; one line without ``indent``."""
    separators = (",", ":") if indent is None else None
    return safe_json(json.dumps(document, indent=indent, ensure_ascii=False, separators=separators))
