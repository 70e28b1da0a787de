"""How the user asked gputop to run: the options the UI and the sampler share."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_INTERVAL_S = 1.0


@dataclass(frozen=True, slots=True)
class RunConfig:
    interval_s: float = DEFAULT_INTERVAL_S
    readonly: bool = False
    mouse: bool = True
    bell: bool = False
    record_path: str | None = None
    full_redraw: bool = False  # Textual's own output instead of the changed-cell writer
    debug: bool = False  # notify fallbacks (such as the changed-cell writer turning itself off)
