"""The fleet summary's GPU counts: one table entry per count, counted and listed by Prometheus.

Each entry selects the GPUs it counts with one PromQL expression (``%H`` stands for the
host matcher of gputop's metrics, ``%D`` for DCGM exporter's). A count is known when some
exporter serves one of its ``requires`` metrics; until then it is shown as absent, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gputop.core import metric_names
from gputop.core.levels import DEFAULT_SLOWDOWN_C, TEMPERATURE_ALARM_MARGIN_C

# The cards' "hot" (core.levels' alarm): within 5 °C of the GPU's own slowdown temperature (DCGM
# exporter serves none, nor do some GPUs: there core.levels' default stands for it).
HOT_MARGIN_C = TEMPERATURE_ALARM_MARGIN_C
# issue 10's defaults: idle for 10 minutes.
IDLE_AFTER_S = 600.0


@dataclass(frozen=True, slots=True)
class FleetCount:
    """One count: its key (which lists its GPUs), its label and the GPUs it selects."""

    key: str
    label: str
    select: str  # one series per GPU, by (hostname, gpu); its value is what the list shows
    requires: tuple[str, ...]
    worst: Literal["topk", "bottomk"] = "topk"
    unit: Literal["seconds", "celsius", "none"] = "none"
    from_hosts: bool = False  # counted from the hosts' summaries rather than by a query of its own


_HOT_FALLBACK = DEFAULT_SLOWDOWN_C - HOT_MARGIN_C


def hot_gpus(matchers: str) -> str:
    """gputop's GPUs within HOT_MARGIN_C of their slowdown temperature (core.levels' default where none is
    given), each with its temperature."""
    temperature = f"gputop_gpu_temperature_celsius{{{matchers}}}"
    slowdown = f"gputop_gpu_temperature_slowdown_celsius{{{matchers}}}"
    return (
        f"{temperature} >= {slowdown} - {HOT_MARGIN_C:g}"
        f" or ({temperature} unless {slowdown}) >= {_HOT_FALLBACK:g}"
    )


COUNTS = (
    FleetCount(
        "f",
        "filling",
        f"{metric_names.GPU_SECONDS_TO_FULL}{{%H}}",
        (metric_names.GPU_LOST,),
        worst="bottomk",
        unit="seconds",
    ),
    FleetCount(
        "h",
        "hot",
        hot_gpus("%H") + f' or label_replace(DCGM_FI_DEV_GPU_TEMP{{GPU_I_ID="",%D}} >= {_HOT_FALLBACK:g},'
        ' "hostname", "$1", "Hostname", "(.*)")',
        ("gputop_gpu_temperature_celsius", "DCGM_FI_DEV_GPU_TEMP"),
        unit="celsius",
    ),
    # Every host's summary counts its lost GPUs: the fleet's count is their sum, not a query of its own.
    FleetCount("l", "lost", f"{metric_names.GPU_LOST}{{%H}} == 1", (metric_names.GPU_LOST,), from_hosts=True),
    FleetCount(
        "i",
        "idle-hogged",
        f"gputop_process_idle_seconds{{%H}} >= {IDLE_AFTER_S:g}",
        ("gputop_process_idle_seconds",),
        unit="seconds",
    ),
    FleetCount(
        "u",
        "unhealthy",
        f"{metric_names.GPU_ANSWERING}{{%H}} == 0 or gputop_gpu_ecc_errors_uncorrected_total{{%H}} > 0"
        ' or gputop_gpu_remapped_rows{kind=~"pending|failure",%H} > 0',
        (metric_names.GPU_ANSWERING, "gputop_gpu_ecc_errors_uncorrected_total", "gputop_gpu_remapped_rows"),
    ),
)
COUNT_BY_KEY = {count.key: count for count in COUNTS}
HOT = COUNT_BY_KEY["h"]
LOST = COUNT_BY_KEY["l"]


def per_gpu(count: FleetCount, gputop_hosts: str, dcgm_hosts: str) -> str:
    """The count's GPUs, one series per (hostname, gpu), with the host matchers filled in."""
    return f"max by (hostname, gpu) ({count.select.replace('%H', gputop_hosts).replace('%D', dcgm_hosts)})"
