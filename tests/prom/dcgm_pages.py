"""/metrics pages exactly as dcgm-exporter renders them, for the cluster view's tests.

The fields are those its ``etc/default-counters.csv`` enables (``tests/prom/dcgm/``), in that
file's order, with its help text and type; each series is written by its label template
(``internal/pkg/rendermetrics/render_metrics.go``): ``gpu``, ``UUID``, ``pci_bus_id``, ``device``,
``modelName``, then ``GPU_I_PROFILE``/``GPU_I_ID`` on a MIG instance, then the host label as
the 4.x releases spell it (``Hostname``) or main after #655 (``hostname``), none under
``--no-hostname``; then the labels (``DCGM_FI_DRIVER_VERSION``) and the attributes (``err_code``,
``err_msg``; ``pod``, ``namespace``, ``container`` from the Kubernetes mapping), each in key order.
Integer fields are written with ``%d``, floating ones with ``%f``, as its ``toString`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

COUNTERS = Path(__file__).parent / "dcgm" / "default-counters.csv"
DRIVER = "550.54.15"
# DCGM's floating-point fields among the defaults; the rest are integers.
_DOUBLE = {"DCGM_FI_DEV_POWER_USAGE"} | {f"DCGM_FI_PROF_{n}" for n in (
    "GR_ENGINE_ACTIVE", "PIPE_TENSOR_ACTIVE", "DRAM_ACTIVE", "PCIE_TX_BYTES", "PCIE_RX_BYTES", "SM_ACTIVE",
    "SM_OCCUPANCY", "PIPE_FP64_ACTIVE", "PIPE_FP32_ACTIVE", "PIPE_FP16_ACTIVE")}


def default_counters(uncommented: frozenset[str] = frozenset()) -> list[tuple[str, str, str]]:
    """(field, Prometheus type, help) of every field the file enables, labels left out.

    ``uncommented``: fields the file lists commented out (the profiling fields beyond the defaults)
    that a user enabled by removing the ``#``, as dcgm-exporter's README says to.
    """
    counters = []
    for line in COUNTERS.read_text().splitlines():
        if line.startswith("# DCGM_FI_") and line[2:].split(",")[0].strip() in uncommented:
            line = line[2:]
        if not line.strip() or line.startswith("#"):
            continue
        name, kind, help_text = (part.strip() for part in line.split(",", 2))
        if kind != "label":
            counters.append((name, kind, help_text))
    return counters


@dataclass(frozen=True)
class DcgmGpu:
    """One GPU (or a MIG instance of it, or one pod's series of it) and its field values."""

    index: int
    values: Mapping[str, float]
    model: str = "NVIDIA A100-SXM4-80GB"
    mig_profile: str | None = None
    mig_instance: int | None = None
    pod: Mapping[str, str] = field(default_factory=dict)  # pod, namespace, container

    def uuid(self, host: str) -> str:
        return f"GPU-{host}-{self.index}"


def render(
    host: str, gpus: list[DcgmGpu], host_label: str | None = "Hostname", uncommented: frozenset[str] = frozenset()
) -> str:
    """The page; ``host_label`` ``Hostname`` (4.x), ``hostname`` (main after #655), or None (--no-hostname);
    ``uncommented``: fields enabled beyond the defaults (see default_counters)."""
    lines = []
    for name, kind, help_text in default_counters(uncommented):
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        for gpu in gpus:
            if name not in gpu.values:
                continue  # a blank field: dcgm-exporter writes no series for it
            value = gpu.values[name]
            labels = (f'gpu="{gpu.index}",UUID="{gpu.uuid(host)}",pci_bus_id="00000000:{0x18 + gpu.index:02X}:00.0",'
                      f'device="nvidia{gpu.index}",modelName="{gpu.model}"')
            if gpu.mig_profile:
                labels += f',GPU_I_PROFILE="{gpu.mig_profile}",GPU_I_ID="{gpu.mig_instance}"'
            if host_label:
                labels += f',{host_label}="{host}"'
            labels += f',DCGM_FI_DRIVER_VERSION="{DRIVER}"'
            attributes = dict(gpu.pod)
            if name == "DCGM_FI_DEV_XID_ERRORS":
                attributes.update(err_code=str(int(value)), err_msg="No Error" if value == 0 else "Unknown Error")
            labels += "".join(f',{key}="{attributes[key]}"' for key in sorted(attributes))
            text = f"{value:f}" if name in _DOUBLE else f"{int(value)}"
            lines.append(f"{name}{{{labels}}} {text}")
    return "\n".join(lines) + "\n"
