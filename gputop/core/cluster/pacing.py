"""When to ask Prometheus again: every interval while it answers quickly, less often when it is slow or down."""

from __future__ import annotations

from dataclasses import dataclass

# At most this many intervals between tries while Prometheus fails.
MAX_BACKOFF_INTERVALS = 8


@dataclass(slots=True)
class Pacer:
    """The delay before the next refresh, from how the last one went."""

    interval_s: float
    failures: int = 0
    last_duration_s: float | None = None

    def answered(self, duration_s: float) -> float:
        """A refresh succeeded in ``duration_s``: never ask more often than twice that, so it is not piled on."""
        self.failures = 0
        self.last_duration_s = duration_s
        return max(self.interval_s, 2 * duration_s)

    def failed(self) -> float:
        """A refresh failed: wait twice as long each time, up to MAX_BACKOFF_INTERVALS intervals."""
        self.failures += 1
        factor: int = min(1 << min(self.failures, 8), MAX_BACKOFF_INTERVALS)
        return self.interval_s * factor

    @property
    def slow(self) -> bool:
        """The last answer took more than half the interval."""
        return self.last_duration_s is not None and self.last_duration_s > self.interval_s / 2
