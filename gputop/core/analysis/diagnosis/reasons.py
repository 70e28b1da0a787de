"""Why a GPU's clocks are held down: NVML's clock event reason bits, by name.

``nvmlDeviceGetCurrentClocksEventReasons`` (formerly ...ThrottleReasons)
answers a bitmask. gputop carries the names, not the bits, so recordings and
``--json`` read without the table.
"""

from __future__ import annotations

# bit -> (name in --json and the exporter, words on screen), in NVML's bit order.
REASONS: tuple[tuple[int, str, str], ...] = (
    (0x001, "gpu_idle", "idle"),
    (0x002, "applications_clocks", "applications clocks"),
    (0x004, "sw_power_cap", "power cap"),
    (0x008, "hw_slowdown", "HW slowdown"),
    (0x010, "sync_boost", "sync boost"),
    (0x020, "sw_thermal", "SW thermal"),
    (0x040, "hw_thermal", "HW thermal"),
    (0x080, "hw_power_brake", "HW power brake"),
    (0x100, "display_clocks", "display clocks"),
)
REASON_NAMES: tuple[str, ...] = tuple(name for _bit, name, _words in REASONS)
_WORDS = {name: words for _bit, name, words in REASONS}

# Reasons that cost the running work performance, most severe first: the card names the first.
LIMITING: tuple[str, ...] = ("hw_power_brake", "hw_thermal", "hw_slowdown", "sw_thermal", "sw_power_cap")
# Reasons that mean the hardware protects itself: each raises a throttle alert.
ALERTING: frozenset[str] = frozenset({"hw_power_brake", "hw_thermal", "hw_slowdown", "sw_thermal"})


def decode_reasons(mask: int) -> tuple[str, ...]:
    """The names of the bits set in ``mask``, in NVML's order; unknown bits are left out."""
    return tuple(name for bit, name, _words in REASONS if mask & bit)


def reason_words(name: str) -> str:
    """How a reason reads on screen: ``sw_power_cap`` -> ``power cap``."""
    return _WORDS.get(name, name.replace("_", " "))


def limiting_reasons(reasons: tuple[str, ...] | None) -> tuple[str, ...]:
    """The reasons in ``reasons`` that limit performance, most severe first."""
    if not reasons:
        return ()
    return tuple(name for name in LIMITING if name in reasons)
