"""When to ask Prometheus again, and how long to wait for it: less often and longer when it is slow or down."""

from __future__ import annotations

from dataclasses import dataclass, field

# At most this many intervals between tries while Prometheus fails, and as long a wait for an answer.
MAX_BACKOFF_INTERVALS = 8


@dataclass(slots=True)
class Pacer:
    """The delay before the next refresh and the time limit of its queries, from how the last one went.

    A Prometheus that needs longer than the limit gets a longer one next time (twice, up to
    MAX_BACKOFF_INTERVALS intervals), so a slow one is eventually answered and shown as slow.
    The first refresh, with nothing on screen yet, gets the longest limit at once.
    """

    interval_s: float
    base_timeout_s: float
    failures: int = 0
    last_duration_s: float | None = None
    timeout_s: float = field(init=False)

    def __post_init__(self) -> None:
        self.timeout_s = self._longest_s

    @property
    def _longest_s(self) -> float:
        return max(self.base_timeout_s, self.interval_s * MAX_BACKOFF_INTERVALS)

    def answered(self, duration_s: float) -> float:
        """A refresh succeeded in ``duration_s``: never ask more often than twice that, so it is not piled on."""
        self.failures = 0
        self.last_duration_s = duration_s
        self.timeout_s = min(self._longest_s, max(self.base_timeout_s, 2 * duration_s))
        return max(self.interval_s, 2 * duration_s)

    def failed(self, too_slow: bool) -> float:
        """A refresh failed: wait twice as long each time, up to MAX_BACKOFF_INTERVALS intervals."""
        self.failures += 1
        if too_slow:
            self.timeout_s = min(self._longest_s, 2 * self.timeout_s)
        factor: int = min(1 << min(self.failures, 8), MAX_BACKOFF_INTERVALS)
        return self.interval_s * factor

    @property
    def slow(self) -> bool:
        """The last answer took more than half the interval."""
        return self.last_duration_s is not None and self.last_duration_s > self.interval_s / 2
