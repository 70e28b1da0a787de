"""``gputop doctor --capture``: sample this machine as ``gputop record`` does, through a recording
gateway, and make the capture document (anonymised unless asked not to)."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import os
import platform
import socket
import time
from dataclasses import dataclass
from typing import Any

from gputop import __version__
from gputop.core.analysis.foresight import Watcher
from gputop.core.capture.anonymize import REPLACED, Names, anonymize_document, without_home
from gputop.core.capture.capture_file import Capture
from gputop.core.capture.recorder import CallLog, RecordingSource
from gputop.core.model import Snapshot
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.sampler import Sampler, TickLoop
from gputop.core.settings import Settings
from gputop.core.sources.base import SourceUnavailable


@dataclass(frozen=True, slots=True)
class CaptureOptions:
    seconds: float
    interval_s: float
    anonymize: bool = True
    keep_names: bool = False


@dataclass(frozen=True, slots=True)
class Taken:
    """The capture's document, and what to tell the user about it."""

    document: dict[str, Any]
    ticks: int
    gpus: int
    failure: str | None  # why NVML could not be opened (the capture then holds nvmlInit's answer)


def _binding_version() -> str | None:
    try:
        return importlib.metadata.version("nvidia-ml-py")
    except importlib.metadata.PackageNotFoundError:
        return None


def take_capture(options: CaptureOptions, settings: Settings, doctor: dict[str, Any] | None = None) -> Taken:
    """Sample for ``options.seconds`` (Ctrl+C ends it early), writing down every NVML call."""
    capture = Capture()
    log = CallLog(capture)
    source = RecordingSource(settings.driver_deadline_s, log)
    sampler = Sampler(source)
    watcher = Watcher(settings.thresholds)
    names = None if options.keep_names else Names()
    started = time.time()
    gpus = 0
    failure = None

    def write(snapshot: Snapshot) -> None:
        nonlocal gpus
        if names is not None:
            snapshot = names.snapshot(snapshot)
        foresight = watcher.update(snapshot)
        capture.ticks[-1].json = snapshot_to_dict(snapshot, foresight.forecasts, foresight.events, foresight.diagnoses)
        gpus = max(gpus, len(snapshot.gpus))

    def reraise(error: BaseException) -> None:
        raise error

    try:
        sampler.open()
    except SourceUnavailable as error:
        failure = str(error)
    else:
        try:
            TickLoop(sampler, options.interval_s, write, reraise, duration_s=options.seconds).run()
        except KeyboardInterrupt:
            pass
        finally:
            sampler.close()
    hostname = socket.gethostname()
    capture.facts = {
        "gputop": __version__,
        "nvidia_ml_py": _binding_version(),
        "python": platform.python_version(),
        "driver_version": source.driver_version,
        "cuda_driver_version": source.cuda_driver_version,
        "taken": started,
        "interval_s": options.interval_s,
        "seconds": options.seconds,
        "thresholds": dataclasses.asdict(settings.thresholds),
        "driver_deadline_s": settings.driver_deadline_s,
        "hostname": hostname,
        "anonymized": list(REPLACED) if options.anonymize else [],
        "names_kept": options.keep_names,
        "open_failure": failure,
        # Its paths (the library's, the binding's) name the user in their home folder.
        "doctor": doctor if doctor is None or options.keep_names else without_home(doctor, os.path.expanduser("~")),
    }
    document = log.document()
    if options.anonymize:
        document = anonymize_document(document, hostname)
    return Taken(document, len(capture.ticks), gpus, failure)
