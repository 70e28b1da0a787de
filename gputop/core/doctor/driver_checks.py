"""The doctor's checks of the driver, from what the probe child (``probe.py``) found: which
libnvidia-ml.so.1 the loader picks, whether nvmlInit answers (and why not), persistence mode."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from gputop.core.doctor.findings import ERROR, OK, UNKNOWN, WARNING, Finding
from gputop.core.doctor.probe import MARK

PROBE_TIMEOUT_S = 8.0
KERNEL_VERSION_FILE = "/proc/driver/nvidia/version"
# pynvml's codes for the errors the doctor words itself.
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
LIB_RM_VERSION_MISMATCH = 18


@dataclass(frozen=True)
class Probe:
    """What the probe child said, step by step; ``timed_out`` when it had to be killed."""

    steps: dict[str, dict[str, Any]] = field(default_factory=dict)
    timed_out: bool = False
    timeout_s: float = PROBE_TIMEOUT_S
    failure: str | None = None  # the child did not run as it should (its stderr's last line)

    @property
    def runnable(self) -> bool:
        """nvmlInit answered: gputop can run."""
        init = self.steps.get("init")
        return init is not None and init.get("error") is None


def run_probe(timeout_s: float = PROBE_TIMEOUT_S) -> Probe:
    """Run the probe child with this environment; kill it after ``timeout_s``."""
    child = subprocess.Popen(
        [sys.executable, "-m", "gputop.core.doctor.probe"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
    )
    timed_out = False
    try:
        out, err = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        timed_out = True
    steps: dict[str, dict[str, Any]] = {}
    for line in out.splitlines():
        if line.startswith(MARK):
            step = json.loads(line[len(MARK):])
            steps[str(step.pop("step"))] = step
    failure = None
    if not timed_out and child.returncode != 0:
        failure = (err.strip().splitlines() or [f"exit status {child.returncode}"])[-1]
    return Probe(steps, timed_out, timeout_s, failure)


def _version_of(path: str) -> str | None:
    """The driver version in a library's real file name (libnvidia-ml.so.550.54.15)."""
    found = re.search(r"\.so\.(\d+\.\d+(?:\.\d+)?)$", os.path.realpath(path))
    return found.group(1) if found else None


def kernel_module_version(path: str = KERNEL_VERSION_FILE) -> str | None:
    """The loaded kernel module's version, from the first line of /proc/driver/nvidia/version."""
    try:
        with open(path, encoding="utf-8", errors="replace") as version:
            first = version.readline()
    except OSError:
        return None
    found = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", first)
    return found.group(1) if found else None


def library(probe: Probe) -> Finding:
    """Which libnvidia-ml.so.1 the dynamic loader picks: none, the CUDA toolkit's stub, or the driver's."""
    title = "NVML library"
    step = probe.steps.get("library")
    if step is None:
        return Finding("library", title, UNKNOWN, _silent(probe, "loading libnvidia-ml.so.1"))
    path = step.get("path")
    if step.get("error"):
        return Finding(
            "library", title, ERROR, f"libnvidia-ml.so.1 was not found ({step['error']})",
            "install the NVIDIA driver's user-space libraries (e.g. libnvidia-compute-NNN or nvidia-utils-NNN,"
            " the same version as the kernel module); in a container, start it with the NVIDIA Container"
            " Toolkit (`--gpus all`)",
        )
    if path and os.path.basename(os.path.dirname(path)) == "stubs":
        where = "LD_LIBRARY_PATH" if os.path.dirname(path) in _library_path() else "the loader's path"
        return Finding(
            "library", title, ERROR,
            f"the CUDA toolkit's stub library comes first: {path} (from {where})",
            "the stub is for linking only and answers no GPU: remove its stubs/ folder from LD_LIBRARY_PATH"
            " (or /etc/ld.so.conf.d and run `ldconfig`) so that the driver's libnvidia-ml.so.1 is found",
        )
    version = _version_of(path) if path else None
    return Finding("library", title, OK, f"{path or 'libnvidia-ml.so.1'}" + (f" (driver {version})" if version else ""))


def binding(probe: Probe) -> Finding:
    """Which ``pynvml`` the probe imported, and what stops gputop from using it: the one check the commands
    make too (``core/sources/binding.py``), so that "cannot run" here is where they refuse."""
    title = "Python binding"
    step = probe.steps.get("pynvml")
    if step is None:
        return Finding("pynvml", title, UNKNOWN, _silent(probe, "importing pynvml"))
    if step.get("error"):
        return Finding("pynvml", title, ERROR, step["error"], step.get("advice"))
    if step.get("warning"):
        return Finding("pynvml", title, WARNING, step["warning"], step.get("advice"))
    return Finding("pynvml", title, OK, f"nvidia-ml-py {step.get('version')} ({step.get('file')})")


def _library_path() -> list[str]:
    return [os.path.normpath(part) for part in os.environ.get("LD_LIBRARY_PATH", "").split(":") if part]


def _silent(probe: Probe, doing: str) -> str:
    if probe.timed_out:
        return f"no answer within {probe.timeout_s:g}s while {doing}"
    return f"the probe stopped before {doing}" + (f": {probe.failure}" if probe.failure else "")


def driver(probe: Probe, kernel_version_file: str = KERNEL_VERSION_FILE) -> Finding:
    """Whether nvmlInit answers; when it does not, why, and what to do."""
    title = "NVIDIA driver"
    init = probe.steps.get("init")
    if init is None:
        if probe.timed_out and "pynvml" in probe.steps:
            return Finding(
                "driver", title, ERROR, f"nvmlInit did not answer within {probe.timeout_s:g}s: the driver may be hung",
                "look for NVRM or Xid lines in `sudo dmesg`; a GPU that fell off the bus needs a reset or a reboot",
            )
        if "library" in probe.steps and probe.steps["library"].get("error"):
            return Finding("driver", title, ERROR, "not reached: libnvidia-ml.so.1 was not found")
        pynvml_error = probe.steps.get("pynvml", {}).get("error")
        if pynvml_error:
            return Finding("driver", title, ERROR, f"not reached: {pynvml_error}")
        return Finding("driver", title, UNKNOWN, _silent(probe, "nvmlInit"))
    error = init.get("error")
    if error is None:
        return _answered(probe)
    code = init.get("code")
    if code == LIB_RM_VERSION_MISMATCH:
        kernel = kernel_module_version(kernel_version_file)
        path = probe.steps.get("library", {}).get("path")
        loaded = _version_of(path) if path else None
        return Finding(
            "driver", title, ERROR,
            f"Driver/library version mismatch: kernel module {kernel or 'unknown'}"
            f" ({kernel_version_file if kernel else kernel_version_file + ' not readable'}),"
            f" library {loaded or 'unknown'} ({path or 'libnvidia-ml.so.1'})",
            "the driver was upgraded while the old kernel module stayed loaded: reboot, or stop every GPU process"
            " and reload the modules (`sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe"
            " nvidia`)",
        )
    if code is None:  # not an NVML error: the binding is not nvidia-ml-py
        return Finding("driver", title, ERROR, f"nvmlInit failed: {error}", "see the Python binding above")
    if code == LIBRARY_NOT_FOUND:
        return Finding("driver", title, ERROR, "not reached: libnvidia-ml.so.1 was not found")
    advice = {
        DRIVER_NOT_LOADED: "the NVIDIA kernel module is not loaded: `sudo modprobe nvidia`, or install the driver",
        NO_PERMISSION: "this user may not open /dev/nvidia*: check their permissions (or run as root)",
    }.get(code if isinstance(code, int) else -1, "look for NVRM lines in `sudo dmesg`; `nvidia-smi` says the same")
    return Finding("driver", title, ERROR, f"nvmlInit failed: {error}", advice)


def _answered(probe: Probe) -> Finding:
    version = probe.steps.get("driver", {}).get("version")
    gpus = probe.steps.get("gpus")
    if gpus is None:
        silent = _silent(probe, "listing the GPUs")
        return Finding("driver", "NVIDIA driver", UNKNOWN, f"nvmlInit answered, then {silent}")
    count = gpus.get("count")
    counted = "the GPU count is unknown" if count is None else f"{count} GPU{'' if count == 1 else 's'}"
    return Finding("driver", "NVIDIA driver", OK if count else WARNING,
                   f"driver {version or 'version unknown'}, {counted}",
                   None if count else "NVML sees no GPU: compare `nvidia-smi -L` and `lspci | grep -i nvidia`")


def persistence(probe: Probe) -> Finding | None:
    """Persistence mode per GPU: off, each first open of the driver sets the GPUs up again (seconds)."""
    gpus = probe.steps.get("gpus", {}).get("gpus")
    if not gpus:
        return None
    off = [str(gpu["index"]) for gpu in gpus if gpu.get("persistence_mode") == 0]
    unknown = [str(gpu["index"]) for gpu in gpus if gpu.get("persistence_mode") is None]
    if off:
        return Finding(
            "persistence_mode", "persistence mode", WARNING,
            f"off on GPU {', '.join(off)}: the driver sets the GPUs up again whenever no program holds them,"
            " so gputop's first reading takes seconds",
            "`sudo nvidia-smi -pm 1`, or run nvidia-persistenced (its systemd service)",
        )
    if unknown:
        return Finding("persistence_mode", "persistence mode", UNKNOWN,
                       f"the driver does not say for GPU {', '.join(unknown)}")
    return Finding("persistence_mode", "persistence mode", OK, "on for every GPU")
