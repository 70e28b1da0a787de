"""Where the real-GPU tier writes its capture of the machine, what it names it, and the note that says
to keep it in tests/captures/ (checked without a GPU in test_capture_note.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

# The folder the run's results go to: GPUTOP_GPU_RESULTS, else $OUT (a device machine's results
# folder), else the test's own temporary folder (its path is in the note).
RESULTS_ENV = ("GPUTOP_GPU_RESULTS", "OUT")
# What a kept capture may weigh (tests/test_captures.py checks every one in tests/captures/).
MOST_BYTES = 256 * 1024
NOTE_NAME = "CAPTURE-NOTE.txt"


def results_dir(fallback: Path, environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    for name in RESULTS_ENV:
        if env.get(name):
            folder = Path(env[name])
            folder.mkdir(parents=True, exist_ok=True)
            return folder
    return fallback


def capture_name(document: dict[str, Any]) -> str:
    """``nvidia-h200-550.54.15.json.gz``: the first GPU's model and the driver, as a file name."""
    names = [gpu.get("name") for tick in document.get("ticks", []) for gpu in (tick.get("json") or {}).get("gpus", [])]
    model = next((name for name in names if name), None) or "no-gpu"
    driver = document.get("driver_version") or "no-driver"
    return re.sub(r"[^a-z0-9.]+", "-", f"{model}-{driver}".lower()).strip("-") + ".json.gz"


def note(path: Path, size: int) -> str:
    """What the run says about its capture: keep it, or take a shorter one first."""
    if size <= MOST_BYTES:
        return (
            f"A capture of this machine's NVML answers, with the CUDA child running: {path} ({size:,} bytes). "
            f"Add it to tests/captures/ (cp {path} tests/captures/) and every default test run replays this "
            "driver's answers."
        )
    return (
        f"A capture of this machine's NVML answers: {path} is {size:,} bytes, over the {MOST_BYTES:,} a kept "
        "capture may weigh: take a shorter one (gputop doctor --capture FILE.json.gz --seconds 3) before adding "
        "it to tests/captures/."
    )
