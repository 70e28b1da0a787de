"""How full, busy or hot is worth a colour: one set of cut-offs for the cards, ``--once`` and the cluster view.

A load figure (memory, utilization, power, CPU, as a percent of its limit) is fine below
``WARN_PERCENT``, a warning from there, and an alarm from ``ALARM_PERCENT`` (where the memory
alert fires by default). A temperature is judged against the GPU's own slowdown temperature:
an alarm within ``TEMPERATURE_ALARM_MARGIN_C`` of it (where the thermal alert fires by
default), a warning within ``TEMPERATURE_WARN_MARGIN_C``.
"""

from __future__ import annotations

from enum import Enum

WARN_PERCENT = 70.0
ALARM_PERCENT = 90.0
TEMPERATURE_WARN_MARGIN_C = 15.0
TEMPERATURE_ALARM_MARGIN_C = 5.0
# Assumed when the driver does not give a GPU's slowdown temperature.
DEFAULT_SLOWDOWN_C = 85.0


class Level(Enum):
    """How a figure stands; ``None`` (not a Level) is a figure the hardware did not give."""

    OK = "ok"
    WARN = "warn"
    ALARM = "alarm"


def load_level(percent: float | None) -> Level | None:
    """The level of a percent of a limit."""
    if percent is None:
        return None
    if percent >= ALARM_PERCENT:
        return Level.ALARM
    return Level.WARN if percent >= WARN_PERCENT else Level.OK


def temperature_level(temperature: float | None, slowdown: float | None) -> Level | None:
    """The level of a temperature against the GPU's slowdown temperature."""
    if temperature is None:
        return None
    limit = DEFAULT_SLOWDOWN_C if slowdown is None else slowdown
    if temperature >= limit - TEMPERATURE_ALARM_MARGIN_C:
        return Level.ALARM
    return Level.WARN if temperature >= limit - TEMPERATURE_WARN_MARGIN_C else Level.OK
