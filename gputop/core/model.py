"""Immutable snapshots: what one sample of the machine saw.

Units: bytes, degrees C, watts, percent, MHz for clocks, bytes/s for rates,
seconds since the epoch for times. A value the hardware does not provide is
``None``, never 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

# (pid, create_time): the identity of a process everywhere, so a reused PID
# is never mistaken for the process the user saw.
ProcessIdentity = tuple[int, "float | None"]


def percent(part: float | None, whole: float | None) -> float | None:
    """``part`` as a percentage of ``whole``; None when either is unknown or ``whole`` is 0."""
    if part is None or not whole:
        return None
    return 100.0 * part / whole


@dataclass(frozen=True, slots=True)
class HostSample:
    """Whole-host figures."""

    cpu_percent: float | None = None
    memory_total: int | None = None
    memory_used: int | None = None
    swap_total: int | None = None
    swap_used: int | None = None
    load_average: tuple[float, float, float] | None = None
    net_rx_rate: float | None = None
    net_tx_rate: float | None = None
    # The network interfaces the rates count (core.host.machine); () where none is counted, None unknown.
    net_interfaces: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Job:
    """The batch job a process runs in (Slurm): its id and step from the cgroup, the rest from the
    job's environment where readable; None where unknown."""

    scheduler: str  # "slurm"
    id: str
    step: str | None = None  # "0", "1", ..., "batch", "extern", "interactive"
    name: str | None = None
    user: str | None = None
    partition: str | None = None
    account: str | None = None

    @property
    def label(self) -> str:
        """``1234.0``, or ``1234`` when the step is unknown."""
        return self.id if self.step is None else f"{self.id}.{self.step}"


@dataclass(frozen=True, slots=True)
class ProcessSample:
    """One process on one GPU (or MIG device), joined with its host facts."""

    pid: int
    gpu_index: int
    type: str  # "C", "G" or "C+G"
    gpu_memory: int | None = None
    sm_utilization: float | None = None
    mig_index: int | None = None
    # When it last used SM time (seconds since the epoch), for a source that knows from before its
    # first tick (the demo's simulated past, a recording); None when the source cannot say (NVML).
    sm_last_active: float | None = None
    # Host facts (psutil); None when the process is not visible from here.
    started: float | None = None
    user: str | None = None
    name: str | None = None
    command: str | None = None
    cpu_percent: float | None = None
    host_memory: int | None = None
    container: str | None = None
    # The container's name (Docker) or pod (Kubernetes ``namespace/name``).
    container_name: str | None = None
    visible: bool = False
    # The parent process (a launcher such as torchrun, or a GPU process itself); None when unknown.
    parent_pid: int | None = None
    parent_command: str | None = None
    # Listed as last seen: its GPU has stopped answering, so this may be out of date.
    stale: bool = False
    # Why it is not visible (core.host.visibility: "exited", "pid_namespace", "permission"); None when it
    # is visible, or when gputop cannot tell.
    not_visible_reason: str | None = None
    # Its owners, from the cgroup: the container's runtime and whole id, the pod's uid, the batch job.
    container_runtime: str | None = None
    container_id: str | None = None
    pod_uid: str | None = None
    job: Job | None = None

    @property
    def identity(self) -> ProcessIdentity:
        return (self.pid, self.started)


@dataclass(frozen=True, slots=True)
class Activity:
    """What the GPU's performance counters (GPM) measured over the last tick, in percent; None where unknown."""

    sm_active: float | None = None
    sm_occupancy: float | None = None
    tensor_active: float | None = None
    dram_active: float | None = None
    fp64_active: float | None = None
    fp32_active: float | None = None
    fp16_active: float | None = None
    # The time the graphics/compute engine was busy (GPM's GRAPHICS_UTIL, DCGM's GR_ENGINE_ACTIVE).
    graphics_active: float | None = None


@dataclass(frozen=True, slots=True)
class Energy:
    """Energy the GPU has used, in joules."""

    since_driver_load_j: float | None = None
    since_start_j: float | None = None


@dataclass(frozen=True, slots=True)
class NvLink:
    """The GPU's NVLink: links up of links present, version, throughput (bytes/s) and error counters."""

    version: int | None = None
    links_active: int | None = None
    links_total: int | None = None
    rx: float | None = None
    tx: float | None = None
    errors_crc: int | None = None
    errors_replay: int | None = None
    errors_recovery: int | None = None
    # Beyond the totals, so that a health problem can name the link: the links present but not up,
    # and each link's errors (CRC + replay + recovery) as (link, count); () where unknown.
    links_down: tuple[int, ...] = ()
    errors_by_link: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Allocation:
    """A device the kubelet allocated to a pod's container (its PodResources API)."""

    namespace: str
    pod: str
    container: str
    resource: str  # nvidia.com/gpu, nvidia.com/mig-1g.10gb, ...

    @property
    def pod_name(self) -> str:
        """``namespace/name``."""
        return f"{self.namespace}/{self.pod}"


@dataclass(frozen=True, slots=True)
class MigSample:
    """One MIG device of a GPU in MIG mode."""

    index: int
    uuid: str | None = None
    name: str | None = None
    gpu_instance_id: int | None = None
    compute_instance_id: int | None = None
    memory_total: int | None = None
    memory_used: int | None = None
    memory_free: int | None = None
    processes: tuple[ProcessSample, ...] = ()
    activity: Activity | None = None
    # The pod the kubelet allocated this MIG device to; None when none, or no kubelet to ask.
    allocation: Allocation | None = None
    # False when a process list of the device could not be read: its processes may be incomplete.
    processes_known: bool = True


@dataclass(frozen=True, slots=True)
class RemappedRows:
    """Row remapping (``nvmlDeviceGetRemappedRows``): rows remapped, and whether a remap waits."""

    corrected: int
    uncorrected: int
    pending: bool
    failure: bool


@dataclass(frozen=True, slots=True)
class XidEvent:
    """One critical XID error the driver reported for a GPU."""

    code: int
    time: float


@dataclass(frozen=True, slots=True)
class GpuHealth:
    """Error counters of one GPU; each None where the GPU does not support it."""

    ecc_uncorrected_volatile: int | None = None
    ecc_uncorrected_aggregate: int | None = None
    remapped_rows: RemappedRows | None = None
    retired_pages_pending: bool | None = None
    # The most recent XID events since gputop started, oldest first; None without event support.
    xid_events: tuple[XidEvent, ...] | None = None


NO_HEALTH = GpuHealth()


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One physical GPU."""

    index: int
    name: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    lost: bool = False
    # False while a driver call to the GPU has not come back within the deadline:
    # its figures are then None and its processes those last seen, marked stale.
    answering: bool = True
    not_answering_since: float | None = None  # when the call that has not come back began
    last_error: str | None = None  # why it is lost or not answering, in a line
    # Its last read raised something unexpected (``last_error``: "read failed: <call>: <error>"):
    # not answering, but not a driver that hangs.
    read_failed: bool = False
    memory_total: int | None = None
    memory_used: int | None = None
    memory_free: int | None = None
    memory_reserved: int | None = None
    utilization_gpu: float | None = None
    utilization_memory: float | None = None
    utilization_encoder: float | None = None
    utilization_decoder: float | None = None
    temperature: float | None = None
    temperature_slowdown: float | None = None
    temperature_shutdown: float | None = None
    memory_temperature: float | None = None  # HBM's own sensor; None where the GPU has none
    fan_speed: float | None = None
    power_draw: float | None = None
    power_limit: float | None = None
    clock_sm: int | None = None
    clock_memory: int | None = None
    clock_sm_max: int | None = None
    clock_memory_max: int | None = None
    # Why the clocks are held down, by name (see core.analysis.diagnosis.reasons); () when nothing holds them.
    clock_event_reasons: tuple[str, ...] | None = None
    pstate: int | None = None
    pcie_rx: float | None = None
    pcie_tx: float | None = None
    # The PCIe link now and at most (what the GPU and its slot can do); a GPU down-trains when idle.
    pcie_link_gen: int | None = None
    pcie_link_gen_max: int | None = None
    pcie_link_width: int | None = None
    pcie_link_width_max: int | None = None
    # PCIe replays since the driver loaded: the link resent packets it got wrong (a bad riser or slot).
    pcie_replay_errors: int | None = None
    activity: Activity | None = None  # None: the GPU has no GPM (or it failed)
    energy: Energy | None = None
    nvlink: NvLink | None = None  # None: the GPU has no NVLink
    mig_mode: bool | None = None
    health: GpuHealth = NO_HEALTH
    mig_devices: tuple[MigSample, ...] = ()
    # Processes not inside a MIG device; see all_processes().
    processes: tuple[ProcessSample, ...] = ()
    # The pod the kubelet allocated this GPU to; None when none, or no kubelet to ask.
    allocation: Allocation | None = None
    # False when a process list of the GPU could not be read (an error other than a missing symbol):
    # the processes may be incomplete, so the memory no process accounts for is unknown.
    processes_known: bool = True

    def all_processes(self) -> tuple[ProcessSample, ...]:
        """Every process on this GPU, those in its MIG devices included.

        The GPU's own tuple when it has no MIG devices: several stages walk every process every tick,
        and a tuple is walked faster than a generator.
        """
        if not self.mig_devices:
            return self.processes
        return self.processes + tuple(process for mig in self.mig_devices for process in mig.processes)

    @property
    def memory_percent(self) -> float | None:
        return percent(self.memory_used, self.memory_total)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Everything one tick saw."""

    timestamp: float
    hostname: str
    host: HostSample
    gpus: tuple[GpuSample, ...]
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    source: str = "nvml"

    def processes(self) -> Iterator[ProcessSample]:
        """Every GPU process on the machine, GPU by GPU."""
        for gpu in self.gpus:
            yield from gpu.all_processes()
