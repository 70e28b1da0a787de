"""The fleet summary's GPU counts: one table entry per count, counted and listed by Prometheus.

Each entry selects the GPUs it counts with one PromQL expression (``%H`` stands for the
host matcher of gputop's metrics, ``%D(NAME)`` for DCGM exporter's series of NAME, one a GPU).
A count is known when some exporter serves one of its ``requires`` metrics; until then it is shown as absent, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from gputop.core.analysis.levels import DEFAULT_SLOWDOWN_C, TEMPERATURE_ALARM_MARGIN_C
from gputop.core.output import metric_names

# The cards' "hot" (core.analysis.levels' alarm): within 5 °C of the GPU's own slowdown temperature (DCGM
# exporter serves none, nor do some GPUs: there core.analysis.levels' default stands for it).
HOT_MARGIN_C = TEMPERATURE_ALARM_MARGIN_C


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
    listed: str | None = None  # what its GPU list shows, where not ``select``'s value

    def lister(self) -> FleetCount:
        """The count as its GPU list selects them."""
        return self if self.listed is None else replace(self, select=self.listed, listed=None)


_HOT_FALLBACK = DEFAULT_SLOWDOWN_C - HOT_MARGIN_C
_PROBLEMS = metric_names.GPU_PROBLEMS


def hot_gpus(matchers: str) -> str:
    """gputop's GPUs within HOT_MARGIN_C of their slowdown temperature (core.analysis.levels' default where none is
    given), each with its temperature."""
    temperature = f"gputop_gpu_temperature_celsius{{{matchers}}}"
    slowdown = f"gputop_gpu_temperature_slowdown_celsius{{{matchers}}}"
    return (
        f"{temperature} >= {slowdown} - {HOT_MARGIN_C:g}"
        f" or ({temperature} unless {slowdown}) >= {_HOT_FALLBACK:g}"
    )


COUNTS = (
    FleetCount(
        key="f",
        label="filling",
        select=f"{metric_names.GPU_SECONDS_TO_FULL}{{%H}}",
        requires=(metric_names.GPU_LOST,),
        worst="bottomk",
        unit="seconds",
    ),
    FleetCount(
        key="h",
        label="hot",
        select=hot_gpus("%H")
        + f' or label_replace(%D(DCGM_FI_DEV_GPU_TEMP) >= {_HOT_FALLBACK:g}, "hostname", "$1", "Hostname", "(.*)")',
        requires=("gputop_gpu_temperature_celsius", "DCGM_FI_DEV_GPU_TEMP"),
        unit="celsius",
    ),
    # Every host's summary counts its lost GPUs: the fleet's count is their sum, not a query of its own.
    FleetCount(
        key="l",
        label="lost",
        select=f"{metric_names.GPU_LOST}{{%H}} == 1",
        requires=(metric_names.GPU_LOST,),
        from_hosts=True,
    ),
    # The exporter's own diagnoses judge idleness (its thresholds; a process that holds memory) and
    # health: the count reads their verdict per GPU rather than every process or error counter again.
    FleetCount(
        key="i",
        label="idle-hogged",
        select=f'{_PROBLEMS}{{kind="idle",%H}} > 0',
        requires=(metric_names.PROCESS_IDLE_SECONDS,),
        unit="seconds",
        listed=f"max by (hostname, gpu) ({metric_names.PROCESS_IDLE_SECONDS}{{%H}})"
        f' and on (hostname, gpu) {_PROBLEMS}{{kind="idle",%H}} > 0',
    ),
    FleetCount(
        key="u",
        label="unhealthy",
        select=f'{metric_names.GPU_ANSWERING}{{%H}} == 0 or {_PROBLEMS}{{kind="health",%H}} > 0',
        requires=(metric_names.GPU_ANSWERING, _PROBLEMS),
    ),
)
COUNT_BY_KEY = {count.key: count for count in COUNTS}
HOT = COUNT_BY_KEY["h"]
LOST = COUNT_BY_KEY["l"]


def per_gpu(count: FleetCount, gputop_hosts: str, dcgm: Callable[[str], str]) -> str:
    """The count's GPUs, one series per (hostname, gpu), with gputop's host matchers and DCGM's series filled in."""
    select = re.sub(r"%D\((\w+)\)", lambda found: dcgm(found.group(1)), count.select)
    return f"max by (hostname, gpu) ({select.replace('%H', gputop_hosts)})"
