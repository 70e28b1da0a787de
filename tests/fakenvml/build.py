"""Compile the fake libnvidia-ml.so.1, optionally without some symbols (an older driver)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

SOURCE = Path(__file__).with_name("fake_nvml.c")
BUILD_DIR = Path(__file__).resolve().parents[1] / "_build" / "fakenvml"
LIBRARY_NAME = "libnvidia-ml.so.1"

# Symbol sets to omit, named after the driver they imitate.
PROCESS_V3 = (
    "nvmlDeviceGetComputeRunningProcesses_v3",
    "nvmlDeviceGetGraphicsRunningProcesses_v3",
    "nvmlDeviceGetMPSComputeRunningProcesses_v3",
)
PROCESS_V2 = tuple(name.replace("_v3", "_v2") for name in PROCESS_V3)
MEMORY_V2 = ("nvmlDeviceGetMemoryInfo_v2",)
# A driver from before the _v2 process lists and memory info: only v1 symbols.
OLD_DRIVER = PROCESS_V3 + PROCESS_V2 + MEMORY_V2


def build_library(omit: Iterable[str] = (), build_dir: Path = BUILD_DIR) -> Path:
    """Return the directory holding a fake libnvidia-ml.so.1 without the `omit` symbols.

    Compiles with the system `cc` when the library is missing or older than
    fake_nvml.c; each set of omitted symbols gets its own directory.
    """
    omitted = sorted(set(omit))
    tag = "full"
    if omitted:
        tag = "omit-" + hashlib.sha1(" ".join(omitted).encode()).hexdigest()[:12]
    directory = build_dir / tag
    library = directory / LIBRARY_NAME
    if library.exists() and library.stat().st_mtime_ns >= SOURCE.stat().st_mtime_ns:
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    command = ["cc", "-shared", "-fPIC", "-O2", "-pthread", "-o"]
    with tempfile.TemporaryDirectory(dir=directory) as scratch:
        output = Path(scratch) / LIBRARY_NAME
        command += [str(output), str(SOURCE)]
        if omitted:
            # A version script makes the symbols local: dlsym() no longer finds them.
            script = Path(scratch) / "omit.map"
            script.write_text("{ global: *; local: " + "; ".join(omitted) + "; };\n")
            command.append(f"-Wl,--version-script={script}")
        subprocess.run(command, check=True, capture_output=True, text=True)
        # Atomic, so parallel test runs never load a half-written library.
        os.replace(output, library)
    return directory
