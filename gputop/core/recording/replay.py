"""Replaying a recording: where we are, how fast, paused or not. No clock, no UI.

The UI asks ``delay_s()`` how long to wait before ``advance()``; every other
move (step, jump, speed) is a plain method, so the logic is tested without
time passing.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from datetime import datetime, timedelta

from gputop.core.model import Snapshot
from gputop.core.recording.record import Recording

SPEEDS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
# A recording paused for an hour (laptop asleep) should not freeze the replay for one.
MAX_GAP_S = 5.0

_RELATIVE = re.compile(r"^([+-])((?:\d+(?:\.\d+)?[hms]?)+)$")
_RELATIVE_PART = re.compile(r"(\d+(?:\.\d+)?)([hms]?)")
_CLOCK = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "": 1.0}


class Replay:
    """A position in a recording's snapshots, a speed, and paused or playing."""

    def __init__(self, recording: Recording, speed: float = 1.0, paused: bool = False) -> None:
        if not recording.snapshots:
            raise ValueError("a replay needs at least one snapshot")
        self.snapshots = recording.snapshots
        self.damage = recording.damage
        self._timestamps = [snapshot.timestamp for snapshot in self.snapshots]
        self.position = 0
        self.speed = speed
        self.paused = paused

    def __len__(self) -> int:
        return len(self.snapshots)

    @property
    def current(self) -> Snapshot:
        return self.snapshots[self.position]

    @property
    def at_end(self) -> bool:
        return self.position == len(self.snapshots) - 1

    @property
    def elapsed_s(self) -> float:
        """Recorded seconds from the first snapshot to the current one."""
        return self._timestamps[self.position] - self._timestamps[0]

    def delay_s(self) -> float | None:
        """Seconds to wait before the next snapshot at this speed; None when paused or at the end."""
        if self.paused or self.at_end:
            return None
        gap = self._timestamps[self.position + 1] - self._timestamps[self.position]
        return max(0.0, min(gap, MAX_GAP_S)) / self.speed

    def advance(self) -> bool:
        """Move to the next snapshot; False at the end."""
        if self.at_end:
            return False
        self.position += 1
        return True

    def step(self, count: int) -> int:
        """Move ``count`` snapshots (negative: back), stopping at either end."""
        self.position = max(0, min(len(self.snapshots) - 1, self.position + count))
        return self.position

    def faster(self) -> float:
        self.speed = next((s for s in SPEEDS if s > self.speed), SPEEDS[-1])
        return self.speed

    def slower(self) -> float:
        self.speed = next((s for s in reversed(SPEEDS) if s < self.speed), SPEEDS[0])
        return self.speed

    def seek_time(self, timestamp: float) -> int:
        """Move to the last snapshot taken at or before ``timestamp`` (the first one if none)."""
        self.position = max(0, bisect_right(self._timestamps, timestamp) - 1)
        return self.position

    def jump_target(self, text: str) -> float:
        """The time ``text`` names: ``HH:MM[:SS]`` (local time of day), or ``+90s``/``-2m``/``+1m30s``.

        Raises ValueError with a message for the user.
        """
        text = text.strip()
        relative = _RELATIVE.match(text)
        if relative:
            seconds = sum(
                float(amount) * _UNIT_S[unit] for amount, unit in _RELATIVE_PART.findall(relative.group(2))
            )
            return self._timestamps[self.position] + (seconds if relative.group(1) == "+" else -seconds)
        clock = _CLOCK.match(text)
        if not clock:
            raise ValueError(f"not a time: {text!r} (use HH:MM:SS, +90s or -2m)")
        hours, minutes, seconds = int(clock.group(1)), int(clock.group(2)), int(clock.group(3) or 0)
        if hours > 23 or minutes > 59 or seconds > 59:
            raise ValueError(f"not a time of day: {text!r}")
        first, last = self._timestamps[0], self._timestamps[-1]
        day = datetime.fromtimestamp(first).replace(hour=0, minute=0, second=0, microsecond=0)
        while day.timestamp() <= last:
            target = (day + timedelta(hours=hours, minutes=minutes, seconds=seconds)).timestamp()
            if first <= target <= last:
                return target
            day += timedelta(days=1)
        raise ValueError(f"{text} is outside the recording ({clock_text(first)} to {clock_text(last)})")


def clock_text(timestamp: float) -> str:
    """Local time of day, ``HH:MM:SS``."""
    return time.strftime("%H:%M:%S", time.localtime(timestamp))
