"""What ``gputop doctor`` asks the driver, run as a child process (``python -m gputop.core.doctor.probe``).

A child because the driver may hang (the parent waits a short time and kills it), a CUDA stub library
prints a banner on stdout when loaded, and a shadowing ``pynvml`` may fail on import: none of that
reaches the doctor. Each step prints one line, ``gputop-probe {json}``, as soon as it is known, so a
step that hangs leaves the ones before it readable.
"""

from __future__ import annotations

import ctypes
import json
import sys
from typing import Any

MARK = "gputop-probe "
LIBRARY = "libnvidia-ml.so.1"


def _say(step: str, **found: Any) -> None:
    print(MARK + json.dumps({"step": step, **found}), flush=True)


def _loaded_path(name: str) -> str | None:
    """Where the dynamic loader found the library ``name``: its line in /proc/self/maps."""
    stem = name.split(".so")[0]
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.split(maxsplit=5)[-1].strip()
                if path.startswith("/") and path.rsplit("/", 1)[-1].startswith(stem + ".so"):
                    return path
    except OSError:
        return None
    return None


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


def main() -> int:
    try:
        ctypes.CDLL(LIBRARY)
    except OSError as error:
        _say("library", path=None, error=str(error))
    else:
        _say("library", path=_loaded_path(LIBRARY), error=None)
    from gputop.core.sources.binding import inspect_binding, quiet_import

    binding = inspect_binding()  # the check the commands make before they open NVML
    _say(
        "pynvml", file=binding.file, version=binding.version, error=binding.problem if binding.refused else None,
        warning=binding.problem if binding.warning_only else None, advice=binding.fix,
    )
    if binding.refused:
        return 0
    pynvml = quiet_import()
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        _say("init", code=getattr(error, "value", None), error=_describe(error))
        return 0
    except Exception as error:  # noqa: BLE001 - a pynvml that is not nvidia-ml-py
        _say("init", code=None, error=f"{type(error).__name__}: {error}")
        return 0
    _say("init", code=None, error=None)
    version = _ask(pynvml.nvmlSystemGetDriverVersion)
    _say("driver", version=None if version is None else _text(version))
    count = _ask(pynvml.nvmlDeviceGetCount)
    gpus = []
    for index in range(count if isinstance(count, int) else 0):
        handle = _ask(pynvml.nvmlDeviceGetHandleByIndex, index)
        name = None if handle is None else _ask(pynvml.nvmlDeviceGetName, handle)
        mode = None if handle is None else _ask(pynvml.nvmlDeviceGetPersistenceMode, handle)
        gpus.append({
            "index": index,
            "name": None if name is None else _text(name),
            "persistence_mode": mode if isinstance(mode, int) else None,
        })
    _say("gpus", count=count, gpus=gpus)
    _ask(pynvml.nvmlShutdown)
    return 0


def _describe(error: Exception) -> str:
    try:
        return str(error)
    except Exception:  # noqa: BLE001 - pynvml asks the library for the words
        return f"NVML error {getattr(error, 'value', '?')}"


def _ask(call: Any, *args: Any) -> Any:
    """``call(*args)``, or None when the driver does not answer it."""
    try:
        return call(*args)
    except Exception:  # noqa: BLE001 - any NVML error: no value
        return None


if __name__ == "__main__":
    sys.exit(main())
