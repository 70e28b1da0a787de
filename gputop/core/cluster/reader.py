"""A cluster's GPUs read from Prometheus: gputop's own metrics and, with fewer fields, DCGM exporter's.

A refresh is a few instant queries sent side by side (``queries.fleet_queries``: every
host's summary, when each host last sampled, the targets that are down, the fleet's
counts), one look at the label index, and one range query for the memory history of
the hosts on screen. A host's GPUs and processes are read only
while its screen is open. Hosts that went away keep the last figures seen of them (from
an earlier refresh, or once from what Prometheus kept), marked with their age.

A host is *down* when its scrape target's ``up`` is 0, *stale* when its newest sample is
older than ``stale_after_s`` or its exporter's own sampling fails, and *live* otherwise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

from gputop.core.cluster import queries
from gputop.core.cluster.client import PrometheusClient, Sample
from gputop.core.cluster.counts import COUNT_BY_KEY, COUNTS, per_gpu
from gputop.core.cluster.detail import read_detail
from gputop.core.cluster.model import (
    ClusterHost,
    ClusterOptions,
    ClusterState,
    CountValue,
    Flavour,
    GpuFinding,
    HostDetail,
    HostState,
)

HISTORY_POINTS = 60
# The fleet's summaries go out as this many queries side by side.
QUERY_WAYS = 4
GPU_LIST_LIMIT = 500
# A count is known when one of the metrics it needs has had a series this recently.
PRESENT_WITHIN_S = 300.0


@dataclass(slots=True)
class _Draft:
    flavour: Flavour
    figures: dict[str, float] = field(default_factory=dict)
    models: set[str] = field(default_factory=set)
    instance: str | None = None
    last_sample: float | None = None
    kept: bool = False  # figures from what Prometheus kept of a host that is gone


class ClusterReader:
    """Turns Prometheus answers into ClusterStates. Blocking: call it from a worker thread."""

    def __init__(
        self,
        options: ClusterOptions,
        client: PrometheusClient | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.options = options
        self.client = client or PrometheusClient(options.url, options.timeout_s)
        self._clock = clock
        # The last summary seen of each host, so one that goes away keeps its figures.
        self._known: dict[str, ClusterHost] = {}
        self._backfilled: set[str] = set()
        self._pool = ThreadPoolExecutor(max_workers=QUERY_WAYS + 3, thread_name_prefix="prometheus")

    def fetch(
        self, history_for: Collection[str] = (), detail_for: str | None = None, timeout_s: float | None = None
    ) -> ClusterState:
        """One refresh: every host, the history of ``history_for``, the detail of ``detail_for``.

        ``timeout_s`` limits each query from now on (the options' limit until told otherwise).
        Raises PrometheusError.
        """
        if timeout_s is not None:
            self.client.timeout_s = timeout_s
        started = time.monotonic()
        now = self._clock()
        # Every request of a refresh at once: Prometheus answers them on as many cores as it has.
        fleet = [
            self._pool.submit(self.client.query, promql, now)
            for promql in queries.fleet_queries(self.options.hosts, self.options.lookback_s, QUERY_WAYS)
        ]
        names = self._pool.submit(
            self.client.label_values, "__name__", queries.required_names(), now - PRESENT_WITHIN_S, now
        )
        history_job = self._pool.submit(self._history, history_for, now) if history_for else None
        detail_job = (
            self._pool.submit(read_detail, self.client, detail_for, now, self.options.lookback_s)
            if detail_for
            else None
        )
        answer = [sample for job in fleet for sample in job.result()]
        drafts, down, counts = _sort_answer(answer, set(names.result()))
        history = history_job.result() if history_job is not None else {}
        detail = detail_job.result() if detail_job is not None else None
        self._backfill(drafts, down, now)
        hosts = self._hosts(drafts, down, now)
        return ClusterState(
            url=self.options.url,
            at=now,
            duration_s=time.monotonic() - started,
            hosts=hosts,
            counts=counts,
            history=history,
            detail=detail,
        )

    def history(self, hostnames: Collection[str]) -> dict[str, tuple[float | None, ...]]:
        """GPU memory in use over the history window, per host (for rows that just came on screen)."""
        return self._history(hostnames, self._clock()) if hostnames else {}

    def detail(self, hostname: str) -> HostDetail:
        return read_detail(self.client, hostname, self._clock(), self.options.lookback_s)

    def gpus(self, key: str) -> tuple[GpuFinding, ...]:
        """The GPUs behind one count of the summary, the worst first (at most GPU_LIST_LIMIT)."""
        count = COUNT_BY_KEY[key]
        hosts = self.options.hosts
        select = per_gpu(count, queries.GPUTOP.host_matcher(hosts), queries.DCGM.host_matcher(hosts))
        answer = self.client.query(f"{count.worst}({GPU_LIST_LIMIT}, {select})", self._clock())
        found = []
        for sample in answer:
            try:
                index = int(sample.labels.get("gpu", ""))
            except ValueError:
                continue
            found.append(GpuFinding(sample.labels.get("hostname", "?"), index, sample.value))
        worst_first = count.worst == "topk"
        return tuple(sorted(found, key=lambda f: (-f.value if worst_first else f.value, f.hostname, f.index)))

    def _backfill(self, drafts: dict[str, _Draft], down: set[str], now: float) -> None:
        """Figures for hosts that are gone and were never seen live here: once, from what Prometheus kept."""
        gone = [
            name
            for name, draft in drafts.items()
            if "gpus" not in draft.figures and name not in self._known and name not in self._backfilled
        ]
        if not gone:
            return
        self._backfilled.update(gone)
        kept, _, _ = _sort_answer(self.client.query(queries.backfill_query(gone, self.options.lookback_s), now), set())
        for name, draft in kept.items():
            if name in drafts:
                drafts[name].figures.update(draft.figures)
                drafts[name].models |= draft.models
                drafts[name].flavour = draft.flavour
                drafts[name].kept = True

    def _hosts(self, drafts: Mapping[str, _Draft], down: set[str], now: float) -> tuple[ClusterHost, ...]:
        hosts = []
        for name in sorted(drafts.keys() | self._known.keys()):
            draft = drafts.get(name)
            known = self._known.get(name)
            if draft is not None and ("gpus" in draft.figures or known is None):
                host = _host(name, draft, down, now, self.options.stale_after_s)
                if "gpus" in draft.figures:
                    self._known[name] = host
            else:
                assert known is not None
                if known.last_sample is not None and now - known.last_sample > self.options.lookback_s:
                    del self._known[name]  # gone for longer than anyone looks back
                    continue
                newer = draft.last_sample if draft is not None else None
                host = replace(
                    known,
                    state="down" if known.instance in down else "stale",
                    last_sample=newer or known.last_sample,
                )
            hosts.append(host)
        return tuple(hosts)

    def _history(self, hostnames: Collection[str], now: float) -> dict[str, tuple[float | None, ...]]:
        step = self.options.history_s / HISTORY_POINTS
        # Steps on whole multiples of the step keep the sparkline from shimmering between refreshes.
        end = now - now % step
        start = end - step * HISTORY_POINTS
        history: dict[str, tuple[float | None, ...]] = {}
        for series in self.client.query_range(queries.history_query(hostnames), start, end, step):
            name = series.labels.get("hostname")
            if not name:
                continue
            by_slot = {round((t - start) / step): v for t, v in series.points if not math.isnan(v)}
            history[name] = tuple(by_slot.get(slot) for slot in range(HISTORY_POINTS + 1))
        return history


def _sort_answer(
    answer: list[Sample], present: set[str]
) -> tuple[dict[str, _Draft], set[str], tuple[CountValue, ...]]:
    """The tagged series of a fleet query, by host; the down targets; the counts (of the metrics ``present``)."""
    by_flavour: dict[tuple[str, str], _Draft] = {}
    down: set[str] = set()
    counted: dict[str, int] = {}
    for sample in answer:
        kind, _, figure = sample.labels.get(queries.FIGURE_LABEL, "").partition(":")
        if kind == "gputop" or kind == "dcgm":
            flavour = queries.GPUTOP if kind == "gputop" else queries.DCGM
            name = sample.labels.get(flavour.host_label) or sample.labels.get("instance")
            if not name or math.isnan(sample.value):
                continue
            draft = by_flavour.setdefault((kind, name), _Draft(flavour.name))
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
            counted[figure] = int(sample.value)
    drafts: dict[str, _Draft] = {}
    for (kind, name), draft in by_flavour.items():
        # gputop's own figures are the fuller ones: they win over DCGM's for the same host.
        if kind == "gputop" or name not in drafts:
            drafts[name] = draft
    counts = tuple(
        CountValue(c.key, c.label, counted.get(c.key, 0) if present.intersection(c.requires) else None)
        for c in COUNTS
    )
    return drafts, down, counts


def _host(name: str, draft: _Draft, down: set[str], now: float, stale_after_s: float) -> ClusterHost:
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
