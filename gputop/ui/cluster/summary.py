"""The two lines above the hosts: how Prometheus is answering, and the whole fleet in figures."""

from __future__ import annotations

from rich.text import Text

from gputop.core.cluster.model import ClusterState
from gputop.core.format import NA, fmt_bytes, safe_text
from gputop.ui.cluster.refresh import Refresh
from gputop.ui.cluster.render import READING


def _seconds(value: float) -> str:
    return f"{value:.2f}s" if value < 10 else f"{value:.0f}s"


def prometheus_line(refresh: Refresh) -> Text:
    """'Prometheus answered in 0.12s', or why it did not and when it is asked again."""
    where = safe_text(refresh.url)
    if refresh.error is not None:
        reason, kind = refresh.error
        retry = f" — retrying in {_seconds(refresh.next_s)}"
        if kind == "slow":
            return Text(f"Prometheus slow at {where}: {reason}{retry}", style="bold black on yellow")
        if kind == "unreachable":
            return Text(f"Prometheus unreachable at {where}: {reason}{retry}", style="bold white on red")
        return Text(f"Prometheus at {where} refused a query: {reason}{retry}", style="bold white on red")
    if refresh.took_s is None:
        return Text("asking Prometheus…", style="dim")
    took = _seconds(refresh.took_s)
    if refresh.slow:
        return Text(
            f"Prometheus slow: its last answer took {took} — next refresh in {_seconds(refresh.next_s)}",
            style="bold black on yellow",
        )
    return Text(f"Prometheus answered in {took}", style="dim")


def _total(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def fleet_line(state: ClusterState) -> Text:
    """Hosts live / stale / down, GPUs, memory, and each count with the key that lists its GPUs."""
    hosts = state.hosts
    by_state = {name: sum(1 for h in hosts if h.state == name) for name in ("live", "stale", "down")}
    line = Text("Hosts ", style="bold")
    line.append(f"{by_state['live']} live", style="green")
    for name in ("stale", "down"):
        line.append(" · ")
        line.append(f"{by_state[name]} {name}", style="bold red" if by_state[name] else "")
    gpus = _total([None if h.gpus is None else float(h.gpus) for h in hosts])
    line.append("   GPUs ", style="bold")
    line.append(NA if gpus is None else f"{gpus:.0f}")
    used = _total([h.memory_used for h in hosts])
    total = _total([h.memory_total for h in hosts])
    line.append("   memory ", style="bold")
    if "memory_used" in state.pending:
        line.append(READING)
    else:
        line.append(f"{fmt_bytes(used)}/{fmt_bytes(total)}")
    for count in state.counts:
        line.append("   ")
        line.append(f"{count.label} ", style="bold")
        if f"count:{count.key}" in state.pending:
            line.append(READING)
        elif count.value is None:
            line.append(NA, style="dim")
        else:
            line.append(str(count.value), style="bold red" if count.value else "green")
        line.append(f" [{count.key}]", style="dim")
    return line
