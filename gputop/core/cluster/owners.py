"""Who holds the cluster's GPUs: the exporters' per-process series summed by owner, on the server.

One instant query per refresh of the owner screen answers every owner of one kind (user, job,
pod or container) with its hosts, GPUs, GPU memory, idle memory and processes, each figure a
series tagged ``figure=…`` and labelled ``owner``: Prometheus adds them up, so the answer is a
few series per owner whatever the number of hosts. The owner's name follows ``core.analysis.owners``'
rules as far as the exporter's labels carry them (``metric_names.PROCESS_LABELS``, ``job`` with
``--job-label``). DCGM exporter's per-pod device series (``pod``/``namespace`` labels, one per
pod on a time-shared GPU) count as pods too, for their hosts and GPUs only: they carry no
memory of the pod's own.

Summed on every refresh, that is still work over every process series of the fleet (seconds of
Prometheus' CPU at 1,000 hosts). The recording rules shipped in the monitoring package
(``core.output.monitoring``, group ``gputop-owners``: ``recording_rules`` below writes them) keep
the same answer per kind, one series per owner and figure, as ``owner:gputop_process:figures``;
where Prometheus has them the screen reads those (one selection), and the raw aggregation where it
has not, or where the view is limited to some hosts (the recorded figures are the whole fleet's).

A process is idle by the exporter's own rule (``core.analysis.diagnosis``, default thresholds): it has
used no SM time for ``idle_after_s`` while holding at least ``idle_min_memory_gib``. The exporter
serves no verdict per process, so an exporter run with other thresholds is judged by these.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from gputop.core.analysis.owners import OWNER_KINDS, memory_share
from gputop.core.cluster.client import PrometheusClient, Sample, promql_string
from gputop.core.cluster.model import ClusterHost
from gputop.core.cluster.queries import FIGURE_LABEL, tagged
from gputop.core.output import metric_names
from gputop.core.settings import Thresholds

OWNER_LABEL = "owner"
KIND_LABEL = "kind"
# The recording rules' series (level:metric:operations): per owner and figure, labelled kind, owner, figure.
RECORDED = "owner:gputop_process:figures"
RULE_GROUP = "gputop-owners"
# How often Prometheus evaluates them: the owner screen may be this much behind the processes.
RULE_INTERVAL = "1m"
_PRESENT = "rules"  # the figure of the marker series: the kind's rule answered
GIB = 1024**3
_MEMORY = metric_names.PROCESS_GPU_MEMORY
_IDLE = metric_names.PROCESS_IDLE_SECONDS
_HOST = metric_names.HOSTNAME_LABEL
# A Slurm job id: an exporter without --job-label serves no ``job`` label, and Prometheus' own
# ``job`` (the scrape job's name, or ``exported_job`` beside it) is never all digits.
_JOB_ID = "[0-9]+"


@dataclass(frozen=True, slots=True)
class FleetOwner:
    """One owner's share of the fleet's GPUs. Bytes; None where no series says."""

    name: str
    hosts: int
    gpus: int  # GPUs where it holds memory (a DCGM pod: GPUs it is on)
    gpu_memory: int | None
    memory_share: float | None  # of the fleet's GPU memory, 0-1
    idle_memory: int | None  # held by its idle processes; None: no process of it says how long it idled
    processes: int | None  # None: a DCGM pod alone (no processes in its series)


def _relabel(selector: str, target: str, source: str, pattern: str = "(.*)") -> str:
    return f'label_replace({selector}, "{target}", "$1", "{source}", {promql_string(pattern)})'


# Per kind, each way a process series names its owner: the matchers that select those series, the
# raw labels the owner is made of, and the label_replace steps (source label, pattern) that make it.
_NAMINGS: dict[str, tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]] = {
    "user": (('user!=""', "user", (("user", "(.*)"),)),),
    "job": (
        (f"job=~{promql_string(_JOB_ID)}", "job", (("job", "(.*)"),)),
        # Behind a scrape without honor_labels the exporter's job label is renamed.
        (f"exported_job=~{promql_string(_JOB_ID)}", "exported_job", (("exported_job", "(.*)"),)),
    ),
    # ``k8s:<pod uid>``, named ``namespace/name`` in container_name where the kubelet's logs told.
    "pod": (
        ('container=~"k8s:.+"', "container, container_name", (("container", "k8s:(.*)"), ("container_name", "(.+)"))),
    ),
    "container": (
        # A container's name where it has one; a pod's process by its pod (no container id is served).
        ('container!="",container!~"k8s:.*"', "container, container_name",
         (("container", "(.*)"), ("container_name", "(.+)"))),
        ('container=~"k8s:.+"', "container", (("container", "(.*)"),)),
    ),
}

Aggregate = Callable[[str, str], str]  # (a selector, the raw owner labels) -> an aggregation by them


def owned(kind: str, aggregate: Aggregate, hosts: str = "", metric: str = _MEMORY) -> str:
    """``aggregate`` of ``metric``'s per-process series by their owner's raw labels, then labelled ``owner``.

    Aggregated first, relabelled after: label_replace works on what ``aggregate`` leaves, not on a
    series per process (at 1,000 hosts, some 30,000). ``hosts``: a matcher on the hostname, or ''.
    """
    if kind not in _NAMINGS:
        raise ValueError(f"no such owner kind: {kind!r} (one of {', '.join(OWNER_KINDS)})")
    parts = []
    for matchers, labels, steps in _NAMINGS[kind]:
        expression = aggregate(f"{metric}{{{','.join(m for m in (hosts, matchers) if m)}}}", labels)
        for source, pattern in steps:
            expression = _relabel(expression, OWNER_LABEL, source, pattern)
        parts.append(expression)
    return f"({' or '.join(parts)})"


def _dcgm_pods(hosts_pattern: str | None) -> str:
    """DCGM's per-pod device series (honoured labels, or renamed ``exported_*``), one per (pod, host, GPU),
    labelled ``owner`` (``namespace/pod``) and ``hostname``."""
    parts = []
    # dcgm-exporter 4.x names the host in ``Hostname``, newer ones in ``hostname`` (as flavours.DCGM_HOST_LABELS).
    for label, unnamed in (("Hostname", ""), ("hostname", ',Hostname=""')):
        for prefix in ("", "exported_"):
            pod, namespace = f"{prefix}pod", f"{prefix}namespace"
            host = f'{label}!=""' if hosts_pattern is None else f"{label}=~{promql_string(hosts_pattern)}"
            selector = f'DCGM_FI_DEV_FB_USED{{{pod}!="",{metric_names.DCGM_OWN_SERIES},{host}{unnamed}}}'
            named = f'label_join({selector}, "{OWNER_LABEL}", "/", "{namespace}", "{pod}")'
            # A pod without a namespace label is named by its pod alone.
            named = _relabel(named, OWNER_LABEL, OWNER_LABEL, "/(.*)")
            parts.append(_relabel(named, _HOST, label) if label != _HOST else named)
    return f"max by ({OWNER_LABEL}, {_HOST}, gpu) ({' or '.join(parts)})"


def owners_query(kind: str, hosts_pattern: str | None = None, thresholds: Thresholds | None = None) -> str:
    """Every owner by ``kind``, each figure summed on the server: one query for the whole fleet."""
    limits = thresholds or Thresholds()
    hosts = "" if hosts_pattern is None else f"{_HOST}=~{promql_string(hosts_pattern)}"
    # The exporter's idle rule, per process (one pid on several GPUs is one process): no SM time for
    # idle_after_s, and its memory on all its GPUs at least idle_min_memory. The idle time first: it
    # leaves few processes to group (``and`` matches many to many).
    idled = f"{_MEMORY}{{{hosts}}} and on ({_HOST}, pid) ({_IDLE}{{{hosts}}} >= {limits.idle_after_s:g})"
    idle = f"(sum by ({_HOST}, pid) ({idled}) >= {limits.idle_min_memory_gib * GIB:g})"

    def by(*labels: str, how: str = "count", filtered: str = "", metric: str = _MEMORY) -> str:
        """Per owner: ``how`` of its series, or with ``labels`` the number of distinct values of them
        (hosts, GPUs, processes). Counted by the owner's raw labels and relabelled after, on a few series
        per owner: a series per process or GPU relabelled costs Prometheus seconds at 1,000 hosts."""
        distinct = ", ".join(labels)

        def aggregate(selector: str, raw: str) -> str:
            if labels:
                return f"count by ({raw}) (count by ({raw}, {distinct}) ({selector}{filtered}))"
            return f"{how} by ({raw}) ({selector}{filtered})"

        return f"sum by ({OWNER_LABEL}) ({owned(kind, aggregate, hosts, metric)})"

    parts = [
        ("memory", by(how="sum")),
        ("hosts", by(_HOST)),
        ("gpus", by(_HOST, "gpu", filtered=" > 0")),
        ("processes", by(_HOST, "pid")),
        ("idle_memory", by(how="sum", filtered=f" and on ({_HOST}, pid) {idle}")),
        # Owners with a process whose idle time is served (its series carry the same owner labels):
        # for the others idle memory is unknown.
        ("idle_known", by(metric=_IDLE)),
    ]
    if kind == "pod":
        pods = _dcgm_pods(hosts_pattern)
        parts.append(("dcgm_hosts", f"count by ({OWNER_LABEL}) (count by ({OWNER_LABEL}, {_HOST}) ({pods}))"))
        parts.append(("dcgm_gpus", f"count by ({OWNER_LABEL}) ({pods})"))
    return tagged(parts)


def recorded_query(kind: str) -> str:
    """The recorded figures of every owner by ``kind``, with the rule's marker (``figure="rules"``).

    Each kind's rule records the marker at every evaluation that succeeds, owners or none: an answer
    with it is the rule's (an empty one but for it: no owner of that kind), one without it says the
    rule is not loaded, or has not answered for Prometheus' look-back (5 minutes).
    """
    if kind not in _NAMINGS:
        raise ValueError(f"no such owner kind: {kind!r} (one of {', '.join(OWNER_KINDS)})")
    return f"{RECORDED}{{{KIND_LABEL}={promql_string(kind)}}}"


def recording_rules() -> str:
    """The rule group that records ``owners_query`` per kind (YAML, as shipped in ``alert-rules.yml``).

    The exporter's default idle thresholds, as the reader's own query uses them.
    """
    marker = f'label_replace(vector(1), "{FIGURE_LABEL}", "{_PRESENT}", "", "")'
    lines = [f"  - name: {RULE_GROUP}", f"    interval: {RULE_INTERVAL}", "    rules:"]
    for kind in OWNER_KINDS:
        # Quoted in single quotes, YAML's literal form: PromQL's double-quoted strings and
        # backslashes pass unchanged (a single quote is doubled, and the queries have none).
        expr = f"{owners_query(kind)} or {marker}".replace("'", "''")
        lines += [f"      - record: {RECORDED}", f"        expr: '{expr}'", "        labels:",
                  f"          {KIND_LABEL}: {kind}"]
    return "\n".join(lines) + "\n"


def owner_hosts_query(kind: str, name: str, hosts_pattern: str | None = None) -> str:
    """The hosts where one owner holds GPUs (Enter on the owner screen)."""
    hosts = "" if hosts_pattern is None else f"{_HOST}=~{promql_string(hosts_pattern)}"
    # The owner label exists only after label_replace: selected by a join with a one-series vector.
    only = f'label_replace(vector(1), "{OWNER_LABEL}", {promql_string(name)}, "", "")'
    series = owned(kind, lambda s, raw: f"count by ({raw}, {_HOST}) ({s})", hosts)
    query = f"count by ({_HOST}) ({series} and on ({OWNER_LABEL}) {only})"
    if kind == "pod":
        query += f" or count by ({_HOST}) ({_dcgm_pods(hosts_pattern)} and on ({OWNER_LABEL}) {only})"
    return query


def fleet_memory(hosts: Iterable[ClusterHost]) -> float | None:
    """The fleet's GPU memory: every host listed but those that are down, as the host list shows it."""
    known = [h.memory_total for h in hosts if h.state != "down" and h.memory_total is not None]
    return sum(known) if known else None


def parse_owners(answer: Sequence[Sample], fleet_memory_total: float | None) -> list[FleetOwner]:
    """The answer of ``owners_query``: one row per owner, most GPU memory first (then by name)."""
    figures: dict[str, dict[str, float]] = {}
    for sample in answer:
        name = sample.labels.get(OWNER_LABEL)
        figure = sample.labels.get(FIGURE_LABEL)
        if name and figure:
            figures.setdefault(name, {})[figure] = sample.value
    rows = []
    for name, got in figures.items():
        memory = got.get("memory")
        processes = got.get("processes")
        rows.append(
            FleetOwner(
                name=name,
                hosts=int(got.get("hosts", 0) + got.get("dcgm_hosts", 0)),
                gpus=int(got.get("gpus", 0) + got.get("dcgm_gpus", 0)),
                gpu_memory=None if memory is None else int(memory),
                memory_share=memory_share(memory, fleet_memory_total),
                idle_memory=int(got.get("idle_memory", 0)) if "idle_known" in got else None,
                processes=None if processes is None else int(processes),
            )
        )
    rows.sort(key=lambda row: (-(row.gpu_memory or 0), row.name))
    return rows


def ask_owners(
    client: PrometheusClient, kind: str, at: float, hosts_pattern: str | None = None
) -> tuple[list[Sample], bool]:
    """The answer for ``parse_owners``, and whether it came from the recording rules.

    The recorded figures first, where they can answer (the whole fleet): one selection. Where
    Prometheus has not got the rules, the raw aggregation after it. Raises PrometheusError.
    """
    if hosts_pattern is None:
        answer = client.query(recorded_query(kind), at)
        if any(sample.labels.get(FIGURE_LABEL) == _PRESENT for sample in answer):
            return answer, True
    return client.query(owners_query(kind, hosts_pattern), at), False


def read_owners(
    client: PrometheusClient,
    kind: str,
    at: float,
    hosts: Iterable[ClusterHost],
    hosts_pattern: str | None = None,
) -> list[FleetOwner]:
    """Every owner by ``kind`` across the fleet (one query, two without the rules). Raises PrometheusError."""
    answer, _ = ask_owners(client, kind, at, hosts_pattern)
    return parse_owners(answer, fleet_memory(hosts))


def read_owner_hosts(
    client: PrometheusClient, kind: str, name: str, at: float, hosts_pattern: str | None = None
) -> frozenset[str]:
    """The hostnames where ``name`` (an owner by ``kind``) holds GPUs. Raises PrometheusError."""
    answer = client.query(owner_hosts_query(kind, name, hosts_pattern), at)
    return frozenset(host for sample in answer if (host := sample.labels.get(_HOST)))

