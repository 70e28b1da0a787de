"""The Prometheus metrics gputop exports: one table that the exporter writes from and the cluster reader reads by.

A GPU figure is named once here with the ``GpuSample`` field it comes from and how
its unit changes on the way out, so the exporter and the cluster view cannot drift apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

HOSTNAME_LABEL = "hostname"
NAME_SETS = ("gputop", "dcgm", "both")  # gputop export --names: whose names it serves
GPU_LABELS = (HOSTNAME_LABEL, "gpu", "uuid", "name")
PROCESS_LABELS = (HOSTNAME_LABEL, "gpu", "pid", "user", "command", "container", "container_name")

UP = "gputop_up"
SAMPLE_ERRORS = "gputop_sample_errors"  # a counter: served as gputop_sample_errors_total
EXPORTER_INFO = "gputop_exporter"  # an info metric: served as gputop_exporter_info
LAST_SAMPLE_TIMESTAMP = "gputop_last_sample_timestamp_seconds"
GPU_SECONDS_TO_FULL = "gputop_gpu_seconds_to_full"
GPU_LOST = "gputop_gpu_lost"
GPU_ANSWERING = "gputop_gpu_answering"
PROCESS_GPU_MEMORY = "gputop_process_gpu_memory_bytes"
PROCESS_SERIES_DROPPED = "gputop_process_series_dropped"  # processes cut by --max-process-series
# The diagnoses (core.analysis.diagnosis.metrics).
GPU_MEMORY_UNATTRIBUTED = "gputop_gpu_memory_unattributed_bytes"
GPU_CLOCK_EVENT_REASONS = "gputop_gpu_clock_event_reasons"  # label "reason", 0/1
GPU_ECC_UNCORRECTED = "gputop_gpu_ecc_errors_uncorrected"  # a counter, label "scope": volatile/aggregate
GPU_REMAPPED_ROWS = "gputop_gpu_remapped_rows"  # label "kind": corrected/uncorrected/pending/failure
GPU_XID_ERRORS = "gputop_gpu_xid_errors"  # a counter, label "xid"
PROCESS_IDLE_SECONDS = "gputop_process_idle_seconds"
GPU_PROBLEMS = "gputop_gpu_problems"  # label "kind" (PROBLEM_KINDS): how many the diagnoses found
PROBLEM_KINDS = ("idle", "unattributed", "throttled", "stalled", "health")
GPU_VERDICT = "gputop_gpu_verdict"  # label "verdict" (VERDICTS), 0/1: what the GPU's figures add up to
VERDICT_LABEL = "verdict"
VERDICTS = ("throttled", "stalled", "busy_few_sms", "memory_bound")
# What a host's GPUs add up to (core.output.host_rollup): one series a host where a cluster would
# otherwise read one a GPU, so a refresh of the cluster view costs Prometheus an eighth as much.
HOST_SERIES_PREFIX = "gputop_host_"
HOST_GPUS = "gputop_host_gpus"  # labels "name" (the model) and "lost" (0/1): how many
HOST_MEMORY_USED = "gputop_host_memory_used_bytes"
HOST_MEMORY_TOTAL = "gputop_host_memory_total_bytes"
HOST_MEMORY_FULLEST = "gputop_host_memory_fullest_ratio"
HOST_UTILIZATION = "gputop_host_utilization_ratio"
HOST_POWER = "gputop_host_power_watts"
HOST_TEMPERATURE_MAX = "gputop_host_temperature_max_celsius"
HOST_PROBLEMS = "gputop_host_problems"
HOST_GPUS_FLAGGED = "gputop_host_gpus_flagged"  # label "flag" (HOST_FLAGS): how many GPUs
HOST_FLAGS = ("filling", "hot", "idle-hogged", "unhealthy")
HOST_FLAG_LABEL = "flag"


@dataclass(frozen=True, slots=True)
class GpuFigure:
    """One GPU gauge: ``exported = reading * multiply / divide``.

    ``field`` names the reading: a ``GpuSample`` field, or one of ``core.output.export_readings.READINGS``
    (energy, NVLink: figures nested in the sample); the cluster view keeps it under that name.
    """

    name: str
    field: str
    documentation: str
    multiply: int = 1
    divide: int = 1

    def export(self, value: float) -> float:
        return float(value) * self.multiply / self.divide

    def read_back(self, exported: float) -> float:
        """The figure in gputop's own unit (the field's), from what Prometheus holds."""
        return exported * self.divide / self.multiply


_RATIO = 100  # percent -> 0..1
_HERTZ = 1_000_000  # MHz -> Hz

GPU_FIGURES = (
    GpuFigure("gputop_gpu_memory_total_bytes", "memory_total", "Total GPU memory."),
    GpuFigure("gputop_gpu_memory_used_bytes", "memory_used", "GPU memory in use."),
    GpuFigure("gputop_gpu_memory_free_bytes", "memory_free", "GPU memory free."),
    GpuFigure(
        "gputop_gpu_utilization_ratio",
        "utilization_gpu",
        "Fraction of the last sample period in which a kernel ran (0-1).",
        divide=_RATIO,
    ),
    GpuFigure(
        "gputop_gpu_memory_utilization_ratio",
        "utilization_memory",
        "Fraction of the last sample period in which GPU memory was read or written (0-1).",
        divide=_RATIO,
    ),
    GpuFigure("gputop_gpu_temperature_celsius", "temperature", "GPU core temperature."),
    GpuFigure(
        "gputop_gpu_temperature_slowdown_celsius",
        "temperature_slowdown",
        "Temperature at which the GPU starts to slow itself down.",
    ),
    GpuFigure(
        "gputop_gpu_temperature_shutdown_celsius", "temperature_shutdown", "Temperature at which the GPU shuts down."
    ),
    GpuFigure("gputop_gpu_power_watts", "power_draw", "Power draw."),
    GpuFigure("gputop_gpu_power_limit_watts", "power_limit", "Enforced power limit."),
    GpuFigure(
        "gputop_gpu_fan_speed_ratio", "fan_speed", "Fan speed as a fraction of its maximum (0-1).", divide=_RATIO
    ),
    GpuFigure("gputop_gpu_sm_clock_hertz", "clock_sm", "SM clock.", multiply=_HERTZ),
    GpuFigure("gputop_gpu_memory_clock_hertz", "clock_memory", "Memory clock.", multiply=_HERTZ),
    GpuFigure("gputop_gpu_sm_clock_max_hertz", "clock_sm_max", "Maximum SM clock.", multiply=_HERTZ),
    # What DCGM has no name for (the activity figures themselves are served by DCGM's names: DCGM_FIELDS).
    GpuFigure(
        "gputop_gpu_energy_since_start_joules", "energy_since_start_j", "Energy the GPU used since gputop started."
    ),
    GpuFigure("gputop_gpu_nvlink_links_active", "nvlink_links_active", "NVLink links up."),
    GpuFigure("gputop_gpu_nvlink_links_present", "nvlink_links_total", "NVLink links the GPU has."),
    GpuFigure("gputop_gpu_nvlink_version", "nvlink_version", "NVLink version."),
    GpuFigure("gputop_gpu_pcie_link_generation", "pcie_link_gen", "PCIe link generation now."),
    GpuFigure(
        "gputop_gpu_pcie_link_generation_max", "pcie_link_gen_max", "PCIe link generation the GPU and its slot can do."
    ),
    GpuFigure("gputop_gpu_pcie_link_width", "pcie_link_width", "PCIe link width (lanes) now."),
    GpuFigure("gputop_gpu_pcie_link_width_max", "pcie_link_width_max", "PCIe link width the GPU and its slot can do."),
)
GPU_FIGURE_BY_NAME = {figure.name: figure for figure in GPU_FIGURES}


# DCGM exporter's names (NVIDIA/dcgm-exporter, etc/default-counters.csv and its label template), served
# beside gputop's own by ``gputop export --names dcgm|both`` and read back by the cluster view, so a
# dashboard or alert written for dcgm-exporter works on gputop and a DCGM fleet shows in gputop cluster.
DCGM_GPU_LABEL = "gpu"
DCGM_UUID_LABEL = "UUID"
DCGM_PCI_LABEL = "pci_bus_id"
DCGM_DEVICE_LABEL = "device"  # "nvidia0"
DCGM_MODEL_LABEL = "modelName"
DCGM_HOSTNAME_LABELS = ("Hostname", "hostname")  # the 4.x releases' spelling, then main's after #655
DCGM_DRIVER_LABEL = "DCGM_FI_DRIVER_VERSION"
DCGM_MIG_PROFILE_LABEL = "GPU_I_PROFILE"
DCGM_MIG_INSTANCE_LABEL = "GPU_I_ID"
DCGM_POD_LABELS = ("pod", "namespace", "container")
DCGM_XID_CODE_LABEL = "err_code"
DCGM_XID_TEXT_LABEL = "err_msg"  # core.output.dcgm_xid: dcgm-exporter's words for the code
# On DCGM's series when gputop's own are served beside them (``--names both``): the cluster view
# reads such a host by gputop's names and leaves these out, so its GPUs are not counted twice.
BESIDE_GPUTOP_LABEL = "exporter"
BESIDE_GPUTOP_VALUE = "gputop"
DCGM_OWN_SERIES = f'GPU_I_ID="",{BESIDE_GPUTOP_LABEL}!="{BESIDE_GPUTOP_VALUE}"'  # whole GPUs, from DCGM alone
MIB = 1024**2


@dataclass(frozen=True, slots=True)
class DcgmField:
    """One DCGM field: ``exported = reading * multiply / divide`` in DCGM's unit.

    ``reading`` names a ``GpuSample`` field, or one of ``core.output.export_readings.READINGS`` (the last
    XID code, ECC counts, remapped rows, activity, energy, NVLink); the cluster view keeps what it
    reads back under the same name in ``ClusterGpu.figures``. ``mig``: the MIG device's own reading
    (``export_readings.mig_reading``: its memory, its activity) is served too.
    """

    name: str
    type: str  # "gauge" or "counter", as default-counters.csv declares it
    documentation: str
    reading: str
    multiply: int = 1
    divide: int = 1
    mig: bool = False  # also served for each MIG device (GPU_I_PROFILE, GPU_I_ID), from MigSample
    whole: bool = True  # an integer field in DCGM (whole MiB, MHz, %, °C), rounded down as DCGM's are

    def export(self, value: float) -> float:
        exported = float(value) * self.multiply / self.divide
        # Rounded to a millionth first, so that 1234.567 J is 1234567 mJ, not 1234566 (binary fractions).
        return float(math.floor(round(exported, 6))) if self.whole else exported

    def read_back(self, exported: float) -> float:
        return exported * self.divide / self.multiply


def _prof(name: str, reading: str, documentation: str) -> DcgmField:
    """A profiling ratio (DCGM_FI_PROF_*): GPM's percent as DCGM's 0.0-1.0, per MIG device too."""
    return DcgmField(name, "gauge", documentation, reading, divide=100, mig=True, whole=False)


DCGM_FIELDS = (
    DcgmField("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "clock_sm"),
    DcgmField("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "clock_memory"),
    DcgmField("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "temperature"),
    DcgmField("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "memory_temperature"),
    DcgmField("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "power_draw", whole=False),
    DcgmField(
        "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", "gauge", "Effective power limit (in W).", "power_limit", whole=False
    ),
    DcgmField("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "utilization_gpu"),
    DcgmField("DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).", "utilization_memory"),
    DcgmField("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", "pcie_replay_errors"),
    DcgmField("DCGM_FI_DEV_ENC_UTIL", "gauge", "Encoder utilization (in %).", "utilization_encoder"),
    DcgmField("DCGM_FI_DEV_DEC_UTIL", "gauge", "Decoder utilization (in %).", "utilization_decoder"),
    DcgmField("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", "xid_last"),
    DcgmField("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "memory_free", divide=MIB, mig=True),
    DcgmField("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "memory_used", divide=MIB, mig=True),
    DcgmField(
        "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", "memory_reserved", divide=MIB
    ),
    DcgmField(
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "counter",
        "Total number of double-bit volatile ECC errors.",
        "ecc_dbe_volatile",
    ),
    DcgmField(
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
        "counter",
        "Total number of double-bit persistent ECC errors.",
        "ecc_dbe_aggregate",
    ),
    DcgmField("DCGM_FI_DEV_RETIRED_PENDING", "counter", "Total number of pages pending retirement.", "retired_pending"),
    DcgmField(
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for uncorrectable errors",
        "remapped_uncorrectable",
    ),
    DcgmField(
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "counter",
        "Number of remapped rows for correctable errors",
        "remapped_correctable",
    ),
    DcgmField("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed", "remap_failure"),
    DcgmField("DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending", "remap_pending"),
    DcgmField(
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
        "gauge",
        "Current clock event reasons (bitmask of NVML's clocks event reasons).",
        "clock_event_mask",
    ),
    # The activity issue's: GPM's figures as DCGM's profiling fields (default-counters.csv, those it lists
    # commented out included), energy, and NVLink's error counters (the same NVML field values DCGM reads).
    _prof("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "graphics_active", "Ratio of time the graphics engine is active."),
    _prof("DCGM_FI_PROF_SM_ACTIVE", "sm_active", "The ratio of cycles an SM has at least 1 warp assigned."),
    _prof("DCGM_FI_PROF_SM_OCCUPANCY", "sm_occupancy", "The ratio of number of warps resident on an SM."),
    _prof("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor_active", "Ratio of cycles the tensor (HMMA) pipe is active."),
    _prof(
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "dram_active",
        "Ratio of cycles the device memory interface is active sending or receiving data.",
    ),
    _prof("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "fp64_active", "Ratio of cycles the fp64 pipes are active."),
    _prof("DCGM_FI_PROF_PIPE_FP32_ACTIVE", "fp32_active", "Ratio of cycles the fp32 pipes are active."),
    _prof("DCGM_FI_PROF_PIPE_FP16_ACTIVE", "fp16_active", "Ratio of cycles the fp16 pipes are active."),
    DcgmField(
        "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "The rate of data transmitted over the PCIe bus in bytes per second.",
        "pcie_tx",
    ),
    DcgmField(
        "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "The rate of data received over the PCIe bus in bytes per second.",
        "pcie_rx",
    ),
    DcgmField(
        "DCGM_FI_PROF_NVLINK_TX_BYTES", "gauge", "The rate of data transmitted over NVLink in bytes per second.",
        "nvlink_tx",
    ),
    DcgmField(
        "DCGM_FI_PROF_NVLINK_RX_BYTES", "gauge", "The rate of data received over NVLink in bytes per second.",
        "nvlink_rx",
    ),
    DcgmField(
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "counter",
        "Total energy consumption since boot (in mJ).",
        "energy_since_driver_load_j",
        multiply=1000,
    ),
    DcgmField(
        "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
        "counter",
        "Total number of NVLink data CRC errors.",
        "nvlink_errors_crc",
    ),
    DcgmField(
        "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "Total number of NVLink retries.",
        "nvlink_errors_replay",
    ),
    DcgmField(
        "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
        "counter",
        "Total number of NVLink recovery errors.",
        "nvlink_errors_recovery",
    ),
)
DCGM_FIELD_BY_NAME = {f.name: f for f in DCGM_FIELDS}
# DCGM's fields whose reading gputop's own names do not serve (activity, energy, health counters):
# the cluster view reads these from a gputop host's DCGM series too (``exporter="gputop"``).
DCGM_ONLY_FIELDS = tuple(f.name for f in DCGM_FIELDS if f.reading not in {g.field for g in GPU_FIGURES})
