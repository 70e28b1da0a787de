"""DCGM exporter's names for ``gputop export``: the fields of ``metric_names.DCGM_FIELDS`` with its labels.

Series are written as dcgm-exporter writes them (NVIDIA/dcgm-exporter,
``internal/pkg/rendermetrics``): ``gpu``, ``UUID``, ``pci_bus_id``, ``device``
(``nvidia0``), ``modelName``, ``GPU_I_PROFILE``/``GPU_I_ID`` on a MIG device,
``Hostname``, ``DCGM_FI_DRIVER_VERSION``, and the pod's ``pod``/``namespace`` where gputop
knows it. A value the hardware does not give is left out, as dcgm-exporter leaves out a blank.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import Metric

from gputop.core.model import GpuSample, MigSample, Snapshot
from gputop.core.output.dcgm_xid import xid_text
from gputop.core.output.export_readings import gpu_reading, mig_reading
from gputop.core.output.metric_names import (
    BESIDE_GPUTOP_LABEL,
    BESIDE_GPUTOP_VALUE,
    DCGM_DEVICE_LABEL,
    DCGM_DRIVER_LABEL,
    DCGM_FIELDS,
    DCGM_GPU_LABEL,
    DCGM_HOSTNAME_LABELS,
    DCGM_MIG_INSTANCE_LABEL,
    DCGM_MIG_PROFILE_LABEL,
    DCGM_MODEL_LABEL,
    DCGM_PCI_LABEL,
    DCGM_UUID_LABEL,
    DCGM_XID_CODE_LABEL,
    DCGM_XID_TEXT_LABEL,
    DcgmField,
)


def reading(field: DcgmField, gpu: GpuSample) -> float | None:
    """The field's reading of ``gpu`` in gputop's unit, None where the GPU does not give it."""
    return gpu_reading(field.reading, gpu)


def mig_profile(mig: MigSample) -> str:
    """``1g.10gb`` from NVML's MIG device name ``NVIDIA H100 80GB HBM3 MIG 1g.10gb``."""
    name = mig.name or ""
    _, sep, profile = name.rpartition(" MIG ")
    return profile.strip() if sep else name


def pod_labels(gpu: GpuSample) -> dict[str, str]:
    """``pod`` and ``namespace`` when every process on the GPU runs in one Kubernetes pod; else none.

    gputop knows the pod (``namespace/name``) but not the container's name inside it, so no
    ``container`` label; several pods on one GPU get none rather than one picked at random.
    """
    pods = {
        process.container_name
        for process in gpu.all_processes()
        if not process.stale and (process.container or "").startswith("k8s:") and process.container_name
    }
    if len(pods) != 1:
        return {}
    namespace, _, pod = next(iter(pods)).partition("/")
    return {"pod": pod, "namespace": namespace} if pod else {}


def dcgm_families(hostname: str, snapshot: Snapshot, beside_gputop: bool = False) -> Iterator[Metric]:
    """One family per DCGM field, a series per GPU answering it (and per MIG device for memory and activity).

    ``beside_gputop``: gputop's own names are served too; the series say so (``exporter="gputop"``).
    """
    hostname_label = DCGM_HOSTNAME_LABELS[0]  # the 4.x releases' "Hostname", which dashboards in use read
    common = {hostname_label: hostname, DCGM_DRIVER_LABEL: snapshot.driver_version or ""}
    if beside_gputop:
        common[BESIDE_GPUTOP_LABEL] = BESIDE_GPUTOP_VALUE
    devices = []
    for gpu in snapshot.gpus:
        if gpu.lost or not gpu.answering:
            continue  # dcgm-exporter serves nothing for a GPU it cannot read
        labels = {
            DCGM_GPU_LABEL: str(gpu.index),
            DCGM_UUID_LABEL: gpu.uuid or "",
            DCGM_PCI_LABEL: gpu.pci_bus_id or "",
            DCGM_DEVICE_LABEL: f"nvidia{gpu.index}",
            DCGM_MODEL_LABEL: gpu.name or "",
            **common,
            **pod_labels(gpu),
        }
        devices.append((gpu, labels))
    for field in DCGM_FIELDS:
        # Typed gauge even where DCGM says counter: prometheus_client would serve a counter as
        # NAME_total, and dashboards query DCGM's bare name (PromQL treats both types alike).
        family = Metric(field.name, field.documentation, "gauge")
        for gpu, labels in devices:
            value = reading(field, gpu)
            if value is not None:
                extra = {}
                if field.reading == "xid_last":  # dcgm-exporter's attributes of the XID field
                    extra = {DCGM_XID_CODE_LABEL: str(int(value)), DCGM_XID_TEXT_LABEL: xid_text(int(value))}
                family.add_sample(field.name, {**labels, **extra}, field.export(value))
            if field.mig:
                for mig in gpu.mig_devices:
                    mig_value = mig_reading(field.reading, mig)
                    if mig_value is not None:
                        mig_labels = {
                            **labels,
                            DCGM_MIG_PROFILE_LABEL: mig_profile(mig),
                            DCGM_MIG_INSTANCE_LABEL: "" if mig.gpu_instance_id is None else str(mig.gpu_instance_id),
                        }
                        family.add_sample(field.name, mig_labels, field.export(mig_value))
        yield family
