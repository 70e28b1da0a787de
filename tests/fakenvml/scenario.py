"""Build scenario files for the fake NVML library (format: see fake_nvml.c).

Values are in NVML's own units (bytes, mW, KB/s, percent, MHz), so tests can
check gputop's conversions. A field set to None is left out, and its NVML
getter answers NVML_ERROR_NOT_SUPPORTED.

    Scenario().gpu(name="NVIDIA A100-SXM4-40GB", memory_total=40 * GiB)
              .gpu(power_mw=None)                      # GPU 1: no power reading
              .process(gpu=0, pid=4242, used=3 * GiB, kind="CG")
              .error("nvmlDeviceGetFanSpeed", "NOT_SUPPORTED", gpu=1)
              .delay("nvmlDeviceGetMemoryInfo", 20.0, gpu=1)   # GPU 1 hangs for 20 s
              .write(path)
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import pynvml

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB
NOT_AVAILABLE = "na"  # used= value that NVML reports as NVML_VALUE_NOT_AVAILABLE
# Linux never hands out a PID at or above PID_MAX_LIMIT (2**22 on 64-bit), whatever pid_max is set
# to: made-up processes start here, so no real process or thread on the test machine answers for them.
NO_SUCH_PID = 1 << 22


@dataclass(frozen=True)
class GpuSpec:
    """One physical GPU; uuid and pci default from its index, free from the rest."""

    name: str | None = "NVIDIA H100 80GB HBM3"
    uuid: str | None = None
    pci: str | None = None
    memory_total: int | None = 80 * GiB
    memory_used: int | None = 1 * GiB
    memory_free: int | None = None
    memory_reserved: int | None = 512 * MiB
    util_gpu: int | None = 0
    util_memory: int | None = 0
    encoder: int | None = 0
    decoder: int | None = 0
    temperature: int | None = 35
    temperature_slowdown: int | None = 87
    temperature_shutdown: int | None = 92
    fan: int | None = 30
    power_mw: int | None = 70_000
    power_limit_mw: int | None = 700_000
    clock_sm: int | None = 345
    clock_mem: int | None = 2619
    pstate: int | None = 0
    pcie_rx_kbs: int | None = 0
    pcie_tx_kbs: int | None = 0
    mig_mode: int | None = 0
    max_mig: int | None = 7
    # diagnosis: max clocks, the clock event reason bitmask, uncorrected ECC counts,
    # row remapping (None: the GPU retires pages instead), retired pages pending.
    clock_sm_max: int | None = 1980
    clock_mem_max: int | None = 2619
    clocks_event_reasons: int | None = 0x1
    ecc_volatile: int | None = 0
    ecc_aggregate: int | None = 0
    remap_corrected: int | None = 0
    remap_uncorrected: int | None = 0
    remap_pending: int | None = 0
    remap_failure: int | None = 0
    retired_pending: int | None = None
    persistence_mode: int | None = 1  # 0: off, so the driver is set up again at each first open
    # activity (GPM: gpm=1 and the figures in percent or MiB/s), energy (mJ), the PCIe link,
    # NVLink (links present, version, a bitmask of links down, error counters on one link,
    # throughput counters in KiB); None: NOT_SUPPORTED.
    gpm: int | None = None
    sm_active: float | None = None
    sm_occupancy: float | None = None
    tensor_active: float | None = None
    dram_active: float | None = None
    fp64_active: float | None = None
    fp32_active: float | None = None
    fp16_active: float | None = None
    gpm_pcie_rx_mibs: float | None = None
    gpm_pcie_tx_mibs: float | None = None
    gpm_nvlink_rx_mibs: float | None = None
    gpm_nvlink_tx_mibs: float | None = None
    energy_mj: int | None = None
    graphics_active: float | None = None  # GPM, percent
    memory_temp: int | None = None  # the memory temperature field, °C
    pcie_replay: int | None = None  # the PCIe replay counter
    pcie_gen: int | None = None
    pcie_gen_max: int | None = None
    pcie_width: int | None = None
    pcie_width_max: int | None = None
    nvlink_count: int | None = None
    nvlink_version: int | None = None
    nvlink_down: int | None = None
    nvlink_crc: int | None = None
    nvlink_replay: int | None = None
    nvlink_recovery: int | None = None
    nvlink_error_link: int | None = None
    nvlink_rx_kib: int | None = None
    nvlink_tx_kib: int | None = None


@dataclass(frozen=True)
class MigSpec:
    """One MIG device, in slot `slot` of GPU `gpu`."""

    gpu: int
    slot: int
    name: str | None = "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
    uuid: str | None = None
    memory_total: int | None = 10 * GiB
    memory_used: int | None = 0
    memory_free: int | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = 0
    # GPM figures of the MIG device (its GPU needs gpm=1), percent.
    sm_active: float | None = None
    sm_occupancy: float | None = None
    tensor_active: float | None = None
    dram_active: float | None = None


@dataclass(frozen=True)
class ProcessSpec:
    """A process on a GPU (or one of its MIG devices); kind letters C, G, M (MPS)."""

    gpu: int
    pid: int
    used: int | str = 0
    kind: str = "C"
    mig: int | None = None
    sm: int | None = None
    mem: int | None = None
    sm_time: int | None = None


@dataclass(frozen=True)
class XidSpec:
    """One critical XID event on GPU `gpu`, delivered once to each event set registered for it."""

    gpu: int
    code: int


@dataclass(frozen=True)
class ErrorRule:
    """Make `fn` (a symbol, its unversioned name, or "*") return `code`."""

    fn: str
    code: int
    gpu: int | None = None
    mig: int | None = None


@dataclass(frozen=True)
class FieldErrorRule:
    """Make nvmlDeviceGetFieldValues answer `ids` ("*": every field id) with `code` in their entries."""

    ids: str
    code: int
    gpu: int | None = None
    scope: int | None = None


@dataclass(frozen=True)
class DelayRule:
    """Make a call of `fn` that begins within [start, until) sleep `ms`, or until `until`."""

    fn: str
    ms: int | None = None
    gpu: int | None = None
    start: float | None = None
    until: float | None = None


# pynvml's nvmlInit() calls nvmlInitWithFlags; these are every way in.
INIT_FUNCTIONS = "nvmlInit,nvmlInitWithFlags"


def error_code(code: int | str) -> int:
    """An NVML error code from a number or a name such as "GPU_IS_LOST"."""
    if isinstance(code, int):
        return code
    return int(getattr(pynvml, "NVML_ERROR_" + code.upper()))


@dataclass
class Scenario:
    """What the fake driver reports; chain the methods, then write()."""

    driver: str = "550.54.15"
    cuda: int | None = 12040
    init_error: int | None = None
    # "success": a process list asked for its size (no buffer) answers SUCCESS with the count set,
    # as some NVML builds do, instead of INSUFFICIENT_SIZE.
    size_probe: str | None = None
    gpus: list[GpuSpec] = field(default_factory=list)
    migs: list[MigSpec] = field(default_factory=list)
    processes: list[ProcessSpec] = field(default_factory=list)
    errors: list[ErrorRule] = field(default_factory=list)
    delays: list[DelayRule] = field(default_factory=list)
    xids: list[XidSpec] = field(default_factory=list)
    field_errors: list[FieldErrorRule] = field(default_factory=list)

    def gpu(self, spec: GpuSpec | None = None, **fields: object) -> Scenario:
        """Add the next GPU: GpuSpec defaults, changed by `fields`."""
        index = len(self.gpus)
        gpu = replace(spec or GpuSpec(), **fields)  # type: ignore[arg-type]
        if gpu.uuid is None:
            gpu = replace(gpu, uuid=f"GPU-{index:08x}-0000-4000-8000-fa4e00000000")
        if gpu.pci is None:
            gpu = replace(gpu, pci=f"00000000:{0x18 + index:02X}:00.0")
        if gpu.memory_free is None and gpu.memory_total is not None:
            taken = (gpu.memory_used or 0) + (gpu.memory_reserved or 0)
            gpu = replace(gpu, memory_free=gpu.memory_total - taken)
        self.gpus.append(gpu)
        return self

    def mig(self, gpu: int, slot: int, **fields: object) -> Scenario:
        """Add a MIG device; remember to give its GPU mig_mode=1."""
        mig = replace(MigSpec(gpu=gpu, slot=slot), **fields)  # type: ignore[arg-type]
        if mig.uuid is None:
            mig = replace(mig, uuid=f"MIG-{gpu:04x}{slot:04x}-0000-4000-8000-fa4e00000000")
        if mig.gpu_instance_id is None:
            mig = replace(mig, gpu_instance_id=slot + 1)
        if mig.memory_free is None and mig.memory_total is not None:
            mig = replace(mig, memory_free=mig.memory_total - (mig.memory_used or 0))
        self.migs.append(mig)
        return self

    def process(
        self,
        gpu: int,
        pid: int,
        used: int | str = 0,
        kind: str = "C",
        *,
        mig: int | None = None,
        sm: int | None = None,
        mem: int | None = None,
        sm_time: int | None = None,
    ) -> Scenario:
        """Add a process; used=NOT_AVAILABLE for no reading, sm= for a utilization sample."""
        self.processes.append(ProcessSpec(gpu, pid, used, kind, mig, sm, mem, sm_time))
        return self

    def error(
        self, fn: str, code: int | str, *, gpu: int | None = None, mig: int | None = None
    ) -> Scenario:
        """Make `fn` fail with `code` (int or name like "NOT_SUPPORTED") on one GPU or all."""
        self.errors.append(ErrorRule(fn, error_code(code), gpu, mig))
        return self

    def refuse_fields(
        self,
        ids: Sequence[int] | str = "*",
        code: int | str = "NOT_SUPPORTED",
        *,
        gpu: int | None = None,
        scope: int | None = None,
    ) -> Scenario:
        """Make nvmlDeviceGetFieldValues answer these field ids ("*": all; in `scope` alone if given)
        with `code` in their own entries, on one GPU or all, while the call succeeds and the classic
        calls still answer: a driver that knows the call but not the field ids."""
        listed = ids if isinstance(ids, str) else ",".join(str(int(field_id)) for field_id in ids)
        self.field_errors.append(FieldErrorRule(listed, error_code(code), gpu, scope))
        return self

    def xid(self, gpu: int, code: int) -> Scenario:
        """Add an XID event; keep earlier ones in the list, the fake delivers each only once to a set."""
        self.xids.append(XidSpec(gpu, code))
        return self

    def delay(
        self,
        fn: str,
        seconds: float | None = None,
        *,
        gpu: int | None = None,
        start: float | None = None,
        until: float | None = None,
    ) -> Scenario:
        """Make `fn` (as for error(); "*" is every call) sleep `seconds` before answering.

        Only calls that begin within [start, until) (times since the epoch) are
        delayed; without `seconds` such a call sleeps until `until`, as a
        driver that hangs until then. Without `gpu` it applies to every call,
        system calls and nvmlInit included. The first matching delay counts.
        """
        if seconds is None and until is None:
            raise ValueError("a delay needs seconds, or until to sleep to")
        ms = None if seconds is None else round(seconds * 1000)
        self.delays.append(DelayRule(fn, ms, gpu, start, until))
        return self

    def stall(self, gpu: int | None, seconds: float, fn: str = "*", *, start: float | None = None) -> Scenario:
        """A hang: calls of `fn` on `gpu` (None: every call) beginning in the next `seconds` block until it ends."""
        begins = time.time() if start is None else start
        return self.delay(fn, gpu=gpu, start=begins, until=begins + seconds)

    def lost(self, gpu: int, code: int | str = "GPU_IS_LOST") -> Scenario:
        """Make every call on `gpu` fail, as a GPU that fell off the bus does."""
        return self.error("*", code, gpu=gpu)

    def fail_init(self, code: int | str = "DRIVER_NOT_LOADED") -> Scenario:
        """Make nvmlInit fail."""
        self.init_error = error_code(code)
        return self

    def render(self) -> str:
        """The scenario file's text."""
        lines = ["# fake NVML scenario, written by tests/fakenvml/scenario.py"]
        lines.append(f"driver {self.driver}")
        if self.cuda is not None:
            lines.append(f"cuda {self.cuda}")
        if self.init_error is not None:
            lines.append(f"init_error {self.init_error}")
        if self.size_probe is not None:
            lines.append(f"size_probe {self.size_probe}")
        lines += [_record("gpu", asdict(gpu)) for gpu in self.gpus]
        lines += [_record("mig", asdict(mig)) for mig in self.migs]
        lines += [_record("process", asdict(process)) for process in self.processes]
        lines += [_record("error", asdict(rule)) for rule in self.errors]
        lines += [_record("delay", asdict(rule)) for rule in self.delays]
        lines += [_record("xid", asdict(xid)) for xid in self.xids]
        lines += [_record("field_error", asdict(rule)) for rule in self.field_errors]
        return "\n".join(lines) + "\n"

    def write(self, path: Path | str) -> Path:
        """Write atomically, with an mtime newer than the file it replaces (so it is re-read)."""
        path = Path(path)
        previous = path.stat().st_mtime_ns if path.exists() else 0
        scratch = path.with_name(path.name + ".tmp")
        # surrogateescape: "\udcff" in a text writes the byte 0xff (a driver answering bytes that are not UTF-8).
        scratch.write_bytes(self.render().encode("utf-8", "surrogateescape"))
        mtime = max(time.time_ns(), previous + 1_000)
        os.utime(scratch, ns=(mtime, mtime))
        os.replace(scratch, path)
        return path


def build_scenario(gpus: int, procs_per_gpu: int, pids: Sequence[int] | None = None) -> Scenario:
    """`gpus` busy GPUs with `procs_per_gpu` processes each; `pids` (cycled) or made-up ones."""
    scenario = Scenario()
    for _ in range(gpus):
        scenario.gpu(util_gpu=90, memory_used=60 * GiB, power_mw=550_000, pcie_rx_kbs=800_000)
    for number in range(gpus * procs_per_gpu):
        pid = pids[number % len(pids)] if pids else NO_SUCH_PID + number
        kind = "CG" if number % 16 == 0 else "C"
        scenario.process(
            gpu=number // procs_per_gpu,
            pid=pid,
            used=256 * MiB + number,
            kind=kind,
            sm=number % 100,
        )
    return scenario


def _record(kind: str, fields: dict[str, object]) -> str:
    parts = [kind]
    for key, value in fields.items():
        if value is None:
            continue
        text = str(value)
        if any(bad in text for bad in '"\n'):
            raise ValueError(f"{key}={text!r}: quotes and newlines cannot be written")
        parts.append(f'{key}="{text}"' if " " in text or not text else f"{key}={text}")
    return " ".join(parts)
