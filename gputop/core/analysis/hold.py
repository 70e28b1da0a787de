"""Conditions held by time as well as by level, so that a state wobbling at its threshold does not come
and go every few seconds.

A condition turns *on* once it has been true on every tick for ``raise_after_s`` and at least
``raise_after_ticks`` ticks, and *off* once it has been false on every tick for ``clear_after_s`` and
at least ``clear_after_ticks`` ticks (with the default ``HOLD``: on after 3 s and 2 ticks, whichever is
longer; off after 15 s). A tick where the condition is unknown (None), or where it is not judged at
all (its GPU lost), breaks the run: nothing is raised or cleared on evidence with a gap in it. Times
are the snapshots' timestamps, so a replay or a recording holds exactly as the live run did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True, slots=True)
class HoldTimes:
    """How long a condition must hold before it turns on, and stay false before it turns off."""

    raise_after_s: float = 3.0
    raise_after_ticks: int = 2
    clear_after_s: float = 15.0
    clear_after_ticks: int = 2


HOLD = HoldTimes()
# A one-off report (``--once``): the condition now, as it is.
IMMEDIATE = HoldTimes(raise_after_s=0.0, raise_after_ticks=1, clear_after_s=0.0, clear_after_ticks=1)


def clear_held(times: HoldTimes) -> HoldTimes:
    """``times`` for a condition that already waited its own while before it started: on at once, off as held."""
    return dataclasses.replace(times, raise_after_s=0.0, raise_after_ticks=1)


@dataclass(slots=True)
class _Run:
    """A condition seen differing from its held state since ``since``, on ``ticks`` ticks in a row."""

    since: float
    ticks: int = 0


class Holder(Generic[Key]):
    """The runs of many conditions, each under its key. ``step`` each condition once a tick, then ``sweep``."""

    def __init__(self) -> None:
        self._runs: dict[Key, _Run] = {}
        self._stepped: set[Key] = set()

    def step(self, key: Key, held: bool, condition: bool | None, now: float, times: HoldTimes) -> bool:
        """Whether ``key``'s held state (``held`` until now) flips on this tick, ``condition`` being what
        the tick says."""
        if condition is None or condition == held:
            self._runs.pop(key, None)
            return False
        run = self._runs.get(key)
        if run is None:
            run = self._runs[key] = _Run(since=now)
        run.ticks += 1
        self._stepped.add(key)
        if condition:
            seconds, ticks = times.raise_after_s, times.raise_after_ticks
        else:
            seconds, ticks = times.clear_after_s, times.clear_after_ticks
        if now - run.since >= seconds and run.ticks >= ticks:
            del self._runs[key]
            return True
        return False

    def sweep(self) -> None:
        """End the runs of the conditions not judged since the last sweep (unknown: the run has a gap)."""
        for key in [key for key in self._runs if key not in self._stepped]:
            del self._runs[key]
        self._stepped.clear()

    def pending(self, key: Key) -> bool:
        """Whether ``key`` is on its way to flipping."""
        return key in self._runs
