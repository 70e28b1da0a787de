"""A cluster's GPUs read from Prometheus: gputop's own metrics and, with fewer fields, DCGM exporter's.

A refresh is a few instant queries sent side by side (``queries.refresh_queries``: the
hosts, their memory, load, heat and problems, the counts), one look at the label index, and
one range query for the memory history of the hosts on screen; what the hosts' GPUs are is
asked once a minute, after a refresh. The hosts' answer is the cheapest: a first refresh
shows them as soon as it is in, and the other figures as theirs come. A host's GPUs and processes are read only
while its screen is open. Hosts that went away keep the last figures seen of them (from
an earlier refresh, or once from what Prometheus kept), marked with their age.

A host is *down* when its scrape target's ``up`` is 0, *stale* when its newest sample is
older than ``stale_after_s`` or its exporter's own sampling fails, and *live* otherwise.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import replace

from gputop.core.cluster import queries
from gputop.core.cluster.answers import Draft, fixed_figures, host_summary, sort_answer, working_gpus
from gputop.core.cluster.client import PrometheusClient, PrometheusError, Sample
from gputop.core.cluster.counts import COUNT_BY_KEY, COUNTS, per_gpu
from gputop.core.cluster.detail import read_detail
from gputop.core.cluster.flavours import DCGM, GPUTOP
from gputop.core.cluster.model import (
    ClusterHost,
    ClusterOptions,
    ClusterState,
    CountValue,
    GpuFinding,
    HostDetail,
    Partial,
)
from gputop.core.cluster.owners import FleetOwner, ask_owners, fleet_memory, parse_owners, read_owner_hosts
from gputop.core.cluster.queries import Fixed

# The memory history of a host: one point per cell of its sparkline.
HISTORY_POINTS = 20
GPU_LIST_LIMIT = 500
# A count is known when one of the metrics it needs has had a series this recently.
PRESENT_WITHIN_S = 300.0
# What the hosts' GPUs are (sizes, slowdown temperatures) is asked again this often, and at the
# next refresh whenever a host came or changed its number of working GPUs.
FIXED_EVERY_S = 60.0


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
        self._fixed: dict[str, Fixed] | None = None
        self._fixed_at = -math.inf
        # Each host's working GPUs when the fixed figures were asked: a change asks them again.
        self._fixed_gpus: dict[str, int] = {}
        self._fixed_job: Future[list[Sample]] | None = None  # asked after a refresh, taken at the next
        self._fixed_job_at = -math.inf
        self._pool = ThreadPoolExecutor(max_workers=9, thread_name_prefix="prometheus")
        # Whether the last owners' answer came from the recording rules (None: none asked yet).
        self.owners_recorded: bool | None = None

    def fetch(
        self,
        history_for: Collection[str] = (),
        detail_for: str | None = None,
        timeout_s: float | None = None,
        partial: Partial | None = None,
    ) -> ClusterState:
        """One refresh: every host, the history of ``history_for``, the detail of ``detail_for``.

        ``timeout_s`` limits each query from now on (the options' limit until told otherwise).
        ``partial`` is given what has come so far each time a query answers, once the hosts'
        answer is in (with ``pending`` saying what is still being read). Raises PrometheusError.
        """
        if timeout_s is not None:
            self.client.timeout_s = timeout_s
        started = time.monotonic()
        now = self._clock()
        self._take_fixed()
        fixed = self._fixed
        matching, lookback_s = self.options.hosts, self.options.lookback_s
        ask_fixed = fixed is None
        batch = queries.refresh_queries(matching, lookback_s, fixed or {})
        if ask_fixed:
            batch.append(queries.fixed_query(matching))
        # Every request of a refresh at once: Prometheus answers them on as many cores as it has. But
        # a refresh that is shown as it comes asks for the hosts alone first: side by side with the
        # rest they would wait for a CPU as long as the slowest.
        first = batch if partial is None else [q for q in batch if q.group == "hosts"]
        names = self._pool.submit(
            self.client.label_values, "__name__", queries.required_names(), now - PRESENT_WITHIN_S, now
        )
        history_job = self._pool.submit(self._history, history_for, now) if history_for else None
        detail_job = (
            self._pool.submit(read_detail, self.client, detail_for, now, lookback_s) if detail_for else None
        )
        groups = [q.group for q in batch]
        answers: dict[str, list[Sample]] = {}

        def gather(asked: list[queries.Query]) -> None:
            """Each answer as it comes, shown once the hosts' is in."""
            jobs = {self._pool.submit(self.client.query, q.promql, now): q.group for q in asked}
            for job in as_completed(jobs):
                answers[jobs[job]] = job.result()
                if partial is not None and "hosts" in answers and len(answers) < len(batch):
                    partial(self._partial_state(answers, groups, fixed, now, started))

        gather(first)
        gather([q for q in batch if q.group not in answers])
        if ask_fixed:
            fixed = self._fixed = fixed_figures(answers["fixed"])
            self._fixed_at = now
            # Until that answer, every gputop host was taken to serve host series: the groups it
            # changes (for hosts that serve none, and DCGM's whose GPUs differ) are asked again.
            sent = {q.group: q.promql for q in batch}
            gather([q for q in queries.refresh_queries(matching, lookback_s, fixed) if q.promql != sent[q.group]])
        answer = [sample for group, samples in answers.items() if group != "fixed" for sample in samples]
        drafts, down, counts = sort_answer(answer, set(names.result()), fixed)
        if ask_fixed:
            self._fixed_gpus = working_gpus(drafts)
        history = history_job.result() if history_job is not None else {}
        detail = detail_job.result() if detail_job is not None else None
        self._backfill(drafts, down, now)
        hosts = self._hosts(drafts, down, now, remember=True)
        if self._fixed_job is None and (now - self._fixed_at >= FIXED_EVERY_S or self._gpus_changed()):
            # Asked again once this refresh is over, in the time until the next: no refresh waits for
            # it or shares Prometheus with it (it reads every GPU's size, the costliest query).
            self._fixed_job = self._pool.submit(self.client.query, queries.fixed_query(matching).promql, now)
            self._fixed_job_at, self._fixed_gpus = now, working_gpus(drafts)
        return ClusterState(
            url=self.options.url,
            at=now,
            duration_s=time.monotonic() - started,
            hosts=hosts,
            counts=counts,
            history=history,
            detail=detail,
        )

    def _take_fixed(self) -> None:
        """The fixed figures asked after the last refresh, if they are in (a failed ask is asked again)."""
        job = self._fixed_job
        if job is None or not job.done():
            return
        self._fixed_job = None
        try:
            answer = job.result()
        except PrometheusError:
            return
        self._fixed, self._fixed_at = fixed_figures(answer), self._fixed_job_at

    def _partial_state(
        self,
        answers: Mapping[str, list[Sample]],
        groups: Collection[str],
        fixed: Mapping[str, Fixed] | None,
        now: float,
        started: float,
    ) -> ClusterState:
        """The hosts as far as the answers so far tell; the rest of their figures and the counts pending."""
        answer = [sample for group, samples in answers.items() if group != "fixed" for sample in samples]
        drafts, down, _ = sort_answer(answer, set(), fixed)
        waiting = set(groups) - answers.keys()
        pending = {figure for group in waiting for figure in queries.GROUP_FIGURES.get(group, ())}
        return ClusterState(
            url=self.options.url,
            at=now,
            duration_s=time.monotonic() - started,
            hosts=self._hosts(drafts, down, now, remember=False),
            counts=tuple(CountValue(c.key, c.label, None) for c in COUNTS),
            pending=frozenset(pending | {f"count:{c.key}" for c in COUNTS}),
        )

    def _gpus_changed(self) -> bool:
        """Whether a host came, or its number of working GPUs changed, since the fixed figures were asked."""
        known = self._known
        return any(
            host.gpus is not None and self._fixed_gpus.get(name) != host.gpus - host.lost
            for name, host in known.items()
            if host.state != "down"
        )

    def read_gpu_by_gpu(self) -> list[str] | None:
        """gputop's hosts whose exporter serves no host series (None: not known before the first refresh)."""
        return None if self._fixed is None else queries.gpu_by_gpu(self._fixed)

    def history(self, hostnames: Collection[str]) -> dict[str, tuple[float | None, ...]]:
        """GPU memory in use over the history window, per host (for rows that just came on screen)."""
        return self._history(hostnames, self._clock()) if hostnames else {}

    def detail(self, hostname: str) -> HostDetail:
        return read_detail(self.client, hostname, self._clock(), self.options.lookback_s)

    def owners(self, kind: str, hosts: Collection[ClusterHost]) -> list[FleetOwner]:
        """Every owner by ``kind`` across the fleet (``hosts``: the last refresh's, for the fleet's memory)."""
        answer, self.owners_recorded = ask_owners(self.client, kind, self._clock(), self.options.hosts)
        return parse_owners(answer, fleet_memory(hosts))

    def owner_hosts(self, kind: str, name: str) -> frozenset[str]:
        """The hostnames where one owner holds GPUs."""
        return read_owner_hosts(self.client, kind, name, self._clock(), self.options.hosts)

    def gpus(self, key: str) -> tuple[GpuFinding, ...]:
        """The GPUs behind one count of the summary, the worst first (at most GPU_LIST_LIMIT)."""
        count = COUNT_BY_KEY[key]
        hosts = self.options.hosts
        select = per_gpu(count.lister(), GPUTOP.host_matcher(hosts), DCGM.selector(DCGM.host_matcher(hosts)))
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

    def _backfill(self, drafts: dict[str, Draft], down: set[str], now: float) -> None:
        """Figures for hosts that are gone and were never seen live here: once, from what Prometheus kept."""
        gone = [
            name
            for name, draft in drafts.items()
            if "gpus" not in draft.figures and name not in self._known and name not in self._backfilled
        ]
        if not gone:
            return
        self._backfilled.update(gone)
        answer = self.client.query(queries.backfill_query(gone, self.options.lookback_s), now)
        kept, _, _ = sort_answer(answer, set(), None)
        for name, draft in kept.items():
            if name in drafts:
                drafts[name].figures.update(draft.figures)
                drafts[name].models |= draft.models
                drafts[name].flavour = draft.flavour
                drafts[name].kept = True

    def _hosts(
        self, drafts: Mapping[str, Draft], down: set[str], now: float, remember: bool
    ) -> tuple[ClusterHost, ...]:
        """Every host of the answer and every host seen before; ``remember``: this is a whole refresh."""
        hosts = []
        for name in sorted(drafts.keys() | self._known.keys()):
            draft = drafts.get(name)
            known = self._known.get(name)
            if draft is not None and ("gpus" in draft.figures or known is None):
                host = host_summary(name, draft, down, now, self.options.stale_after_s)
                if "gpus" in draft.figures and remember:
                    self._known[name] = host
            else:
                assert known is not None
                if known.last_sample is not None and now - known.last_sample > self.options.lookback_s:
                    if remember:
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
        start = end - step * (HISTORY_POINTS - 1)
        history: dict[str, tuple[float | None, ...]] = {}
        for series in self.client.query_range(queries.history_query(hostnames), start, end, step):
            name = series.labels.get("hostname")
            if not name:
                continue
            by_slot = {round((t - start) / step): v for t, v in series.points if not math.isnan(v)}
            history[name] = tuple(by_slot.get(slot) for slot in range(HISTORY_POINTS))
        return history
