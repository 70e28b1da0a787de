"""Health problems of one GPU that are outstanding now, each with the time it was first seen.

- uncorrected ECC errors since the driver loaded (the volatile count above 0);
- a row remap pending (the GPU needs a reset to apply it) or a remap failure;
- retired pages pending (on GPUs that retire pages instead of remapping rows);
- XID errors, each outstanding for ``XID_OUTSTANDING_S`` after it arrived.
"""

from __future__ import annotations

from dataclasses import dataclass

from gputop.core.analysis.diagnosis.xid import xid_text
from gputop.core.model import GpuHealth, XidEvent

XID_OUTSTANDING_S = 3600.0


@dataclass(frozen=True, slots=True)
class HealthProblem:
    """One outstanding health problem."""

    key: str  # stable while the problem lasts: "ecc", "remap_pending", "xid 79 @1700000000.0"...
    since: float  # seconds since the epoch
    text: str


def _current(health: GpuHealth, now: float) -> dict[str, str]:
    """Problem key -> text, for what ``health`` shows outstanding at ``now``."""
    problems: dict[str, str] = {}
    volatile = health.ecc_uncorrected_volatile
    if volatile:
        problems["ecc"] = f"{volatile} uncorrected ECC error{'s' if volatile != 1 else ''} since the driver loaded"
    rows = health.remapped_rows
    if rows is not None and rows.pending:
        problems["remap_pending"] = "a row remap is pending: reset the GPU to apply it"
    if rows is not None and rows.failure:
        problems["remap_failure"] = "a row remap failed: the GPU needs service"
    if health.retired_pages_pending:
        problems["retired_pending"] = "retired pages are pending: reset the GPU to retire them"
    for event in health.xid_events or ():
        if now - event.time < XID_OUTSTANDING_S:
            problems[f"xid {event.code} @{event.time}"] = xid_text(event.code)
    return problems


class HealthTracker:
    """The outstanding problems of one GPU, tick after tick."""

    def __init__(self) -> None:
        self._since: dict[str, float] = {}
        self._volatile: int | None = None
        self.problems: tuple[HealthProblem, ...] = ()  # as of the last update

    def update(self, health: GpuHealth, now: float) -> tuple[tuple[HealthProblem, ...], bool]:
        """The problems outstanding now, and whether new ECC errors arrived since the last tick."""
        current = _current(health, now)
        volatile, previous = health.ecc_uncorrected_volatile, self._volatile
        more_ecc = volatile is not None and previous is not None and volatile > previous
        self._volatile = volatile
        if not current:  # a healthy GPU's every tick: nothing to date or sort
            self._since = {}
            self.problems = ()
            return (), more_ecc
        since = {key: self._since.get(key, now) for key in current}
        for key in current:
            if key.startswith("xid "):
                since[key] = float(key.rsplit("@", 1)[1])
        self._since = since
        self.problems = tuple(
            HealthProblem(key, since[key], text)
            for key, text in sorted(current.items(), key=lambda item: since[item[0]])
        )
        return self.problems, more_ecc

    def update_lost(self, xid_events: tuple[XidEvent, ...] | None, now: float) -> tuple[HealthProblem, ...]:
        """While the GPU is lost: its counters are unknown (what was outstanding stays so), and the XID
        events that arrived meanwhile (a lost GPU's sample carries them) join the problems."""
        problems = {problem.key: problem for problem in self.problems}
        for event in xid_events or ():
            key = f"xid {event.code} @{event.time}"
            if now - event.time < XID_OUTSTANDING_S and key not in problems:
                problems[key] = HealthProblem(key, event.time, xid_text(event.code))
                self._since[key] = event.time
        self.problems = tuple(sorted(problems.values(), key=lambda problem: problem.since))
        return self.problems
