"""What gputop ships for the monitoring people already run: a Grafana dashboard and Prometheus alert rules.

Package data, written out by ``gputop export --print-dashboard`` and ``--print-alert-rules``.
"""

from __future__ import annotations

from importlib import resources

DASHBOARD = "gputop-dashboard.json"
ALERT_RULES = "alert-rules.yml"


def read(name: str) -> str:
    """The text of one shipped file (``DASHBOARD`` or ``ALERT_RULES``)."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
