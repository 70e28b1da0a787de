"""The refresh's queries for hosts whose exporter serves what its GPUs add up to (``core.output.host_rollup``).

Each figure is one series a host, so Prometheus reads 1,000 series for 1,000 hosts where it
would read 8,000 GPUs' (and add them up); the answers have the tags and labels of the
GPU-by-GPU queries', so the reader cannot tell which way a host was read.
"""

from __future__ import annotations

from gputop.core.output import metric_names as names

ROLLUP_FIGURE = "rollup"
_HOST = names.HOSTNAME_LABEL


def _selector(metric: str, matchers: tuple[str, ...]) -> str:
    return f"{metric}{{{','.join(m for m in matchers if m)}}}"


def _one(metric: str, matchers: tuple[str, ...], scale: str = "") -> str:
    # ``max``: a host scraped twice (two jobs, two targets) is still one host.
    return f"{scale}max by ({_HOST}) ({_selector(metric, matchers)})"


def rollup_presence(*matchers: str) -> str:
    """One series per host that serves host series (for the once-a-minute ``fixed_query``)."""
    return f"count by ({_HOST}) ({_selector(names.HOST_GPUS, matchers)})"


def rollup_figures(*matchers: str) -> dict[str, list[tuple[str, str]]]:
    """The refresh's groups (as ``queries.GROUP_FIGURES``) answered from host series: (tag, PromQL) each."""
    return {
        "hosts": [("gputop:gpus", f"max by ({_HOST}, name, lost) ({_selector(names.HOST_GPUS, matchers)})")],
        "memory": [
            ("gputop:memory_used", _one(names.HOST_MEMORY_USED, matchers)),
            ("gputop:memory_total", _one(names.HOST_MEMORY_TOTAL, matchers)),
            ("gputop:memory_percent", _one(names.HOST_MEMORY_FULLEST, matchers, "100 * ")),
        ],
        "load": [
            ("gputop:utilization", _one(names.HOST_UTILIZATION, matchers, "100 * ")),
            ("gputop:power_draw", _one(names.HOST_POWER, matchers)),
        ],
        "heat": [("gputop:temperature", _one(names.HOST_TEMPERATURE_MAX, matchers))],
        "problems": [("gputop:problems", _one(names.HOST_PROBLEMS, matchers))],
    }


def flagged_count(flag: str, *matchers: str) -> str:
    """How many GPUs of these hosts their exporters flag (``core.output.host_rollup.flagged``)."""
    flagged = _selector(names.HOST_GPUS_FLAGGED, (f'{names.HOST_FLAG_LABEL}="{flag}"', *matchers))
    return f"sum(max by ({_HOST}) ({flagged}))"
