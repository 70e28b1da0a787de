"""Prometheus' answers turned into hosts: the tagged series of a refresh by host, its counts, the fixed figures.

Each series of a refresh carries a ``figure`` label (``gputop:memory_used``, ``count:h#hosts``…)
saying what it answers, whichever way it was asked (a host's own series or its GPUs'), so the
answer is sorted by that label alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gputop.core.analysis.levels import DEFAULT_SLOWDOWN_C
from gputop.core.cluster import queries
from gputop.core.cluster.client import Sample
from gputop.core.cluster.counts import COUNTS, LOST
from gputop.core.cluster.flavours import FLAVOUR_BY_NAME, SLOWDOWN_LABEL, TOTAL_LABEL
from gputop.core.cluster.model import ClusterHost, CountValue, Flavour, HostState
from gputop.core.cluster.queries import Fixed
from gputop.core.cluster.rollup import ROLLUP_FIGURE


@dataclass(slots=True)
class Draft:
    """What the answers so far say of one host."""

    flavour: Flavour
    figures: dict[str, float] = field(default_factory=dict)
    models: set[str] = field(default_factory=set)
    instance: str | None = None
    last_sample: float | None = None
    kept: bool = False  # figures from what Prometheus kept of a host that is gone


def sort_answer(
    answer: list[Sample], present: set[str], fixed: Mapping[str, Fixed] | None
) -> tuple[dict[str, Draft], set[str], tuple[CountValue, ...]]:
    """The tagged series of a refresh, by host; the down targets; the counts (of the metrics ``present``).

    ``fixed`` completes each host's memory: its total, and its fullest GPU from its most memory in use.
    """
    by_flavour: dict[tuple[str, str], Draft] = {}
    down: set[str] = set()
    counted: dict[str, int] = {}
    for sample in answer:
        kind, _, figure = sample.labels.get(queries.FIGURE_LABEL, "").partition(":")
        if kind == "gputop" or kind == "dcgm":
            flavour = FLAVOUR_BY_NAME[kind]
            name = sample.labels.get(flavour.host_label) or sample.labels.get("instance")
            if not name or math.isnan(sample.value):
                continue
            draft = by_flavour.setdefault((kind, name), Draft(flavour.name))
            if figure == "sampled":
                draft.instance = sample.labels.get("instance") or draft.instance
                draft.last_sample = max(draft.last_sample or 0.0, sample.value)
            elif figure == "gpus":
                draft.models.add(sample.labels.get(flavour.model_label, ""))
                draft.figures["gpus"] = draft.figures.get("gpus", 0.0) + sample.value
                if sample.labels.get("lost") == "1":
                    draft.figures["lost"] = draft.figures.get("lost", 0.0) + sample.value
            else:
                draft.figures[figure] = sample.value
        elif kind == "down" and "instance" in sample.labels:
            down.add(sample.labels["instance"])
        elif kind == "count":
            key = figure.partition("#")[0]  # a count asked in parts is their sum
            counted[key] = counted.get(key, 0) + int(sample.value)
    drafts: dict[str, Draft] = {}
    for (kind, name), draft in by_flavour.items():
        # gputop's own figures are the fuller ones: they win over DCGM's for the same host.
        if kind == "gputop" or name not in drafts:
            drafts[name] = draft
    for name, draft in drafts.items():
        _complete_memory(draft, None if fixed is None else fixed.get(name))
    counted[LOST.key] = sum(int(d.figures.get("lost", 0.0)) for d in drafts.values() if d.flavour == "gputop")
    counts = tuple(
        CountValue(c.key, c.label, counted.get(c.key, 0) if present.intersection(c.requires) else None)
        for c in COUNTS
    )
    return drafts, down, counts


def _complete_memory(draft: Draft, fixed: Fixed | None) -> None:
    """A host's memory total and fullest GPU from what its GPUs are, where the answer did not say."""
    figures = draft.figures
    if fixed is None or fixed.flavour != draft.flavour:
        return
    figures.setdefault("memory_total", fixed.memory_total)
    most = figures.get("memory_max")
    if "memory_percent" not in figures and most is not None and fixed.gpu_memory_total:
        figures["memory_percent"] = 100 * (most / fixed.gpu_memory_total)


def fixed_figures(answer: list[Sample]) -> dict[str, Fixed]:
    """Each host's GPU sizes and slowdown temperatures, from ``queries.fixed_query``'s count_values, and
    whether it serves host series."""
    sizes: dict[tuple[str, str], dict[float, float]] = {}
    slowdowns: dict[str, set[float]] = {}
    rollups: set[str] = set()
    for sample in answer:
        kind, _, figure = sample.labels.get(queries.FIGURE_LABEL, "").partition(":")
        flavour = FLAVOUR_BY_NAME.get(kind)
        name = sample.labels.get(flavour.host_label) if flavour is not None else None
        if flavour is None or not name:
            continue
        try:
            if figure == "sizes":
                size = float(sample.labels[TOTAL_LABEL])
                sizes.setdefault((kind, name), {})[size] = sample.value
            elif figure == "slowdowns":
                slowdowns.setdefault(name, set()).add(float(sample.labels[SLOWDOWN_LABEL]))
            elif figure == ROLLUP_FIGURE:
                rollups.add(name)
        except (KeyError, ValueError):
            continue
    fixed: dict[str, Fixed] = {}
    for (kind, name), counted in sizes.items():
        if kind == "dcgm" and name in fixed:
            continue  # gputop's own figures win, as in the summaries
        given = slowdowns.get(name, {DEFAULT_SLOWDOWN_C})
        fixed[name] = Fixed(
            flavour=FLAVOUR_BY_NAME[kind].name,
            memory_total=sum(size * count for size, count in counted.items()),
            gpu_memory_total=next(iter(counted)) if len(counted) == 1 else None,
            slowdown=next(iter(given)) if len(given) == 1 else None,
            rollup=kind == "gputop" and name in rollups,
        )
    return fixed


def working_gpus(drafts: Mapping[str, Draft]) -> dict[str, int]:
    return {
        name: int(draft.figures["gpus"] - draft.figures.get("lost", 0.0))
        for name, draft in drafts.items()
        if "gpus" in draft.figures
    }


def host_summary(name: str, draft: Draft, down: set[str], now: float, stale_after_s: float) -> ClusterHost:
    figures = draft.figures
    state: HostState = "live"
    if draft.instance is not None and draft.instance in down:
        state = "down"
    elif (
        draft.kept
        or draft.last_sample is None
        or now - draft.last_sample > stale_after_s
        or figures.get("exporter_up") == 0.0
        or "gpus" not in figures
    ):
        state = "stale"
    models = sorted(m for m in draft.models if m)
    gpus = figures.get("gpus")
    return ClusterHost(
        hostname=name,
        flavour=draft.flavour,
        state=state,
        gpus=None if gpus is None else int(gpus),
        lost=int(figures.get("lost", 0.0)),
        model=None if not models else models[0] + ("…" if len(models) > 1 else ""),
        memory_used=figures.get("memory_used"),
        memory_total=figures.get("memory_total"),
        memory_percent=figures.get("memory_percent"),
        utilization=figures.get("utilization"),
        temperature=figures.get("temperature"),
        power_draw=figures.get("power_draw"),
        problems=None if "problems" not in figures else int(figures["problems"]),
        last_sample=draft.last_sample,
        instance=draft.instance,
    )
