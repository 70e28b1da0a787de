"""What one check of ``gputop doctor`` found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

OK: Final = "ok"
WARNING: Final = "warning"  # gputop runs, but shows less than it could
ERROR: Final = "error"  # this stops gputop
UNKNOWN: Final = "unknown"  # the check could not tell (it did not answer in time, or nothing says)


@dataclass(frozen=True, slots=True)
class Finding:
    """One check: its name (for scripts), a title, the status, what it found and what to do about it."""

    name: str
    title: str
    status: str
    found: str
    advice: str | None = None
