"""What a GPU card says of its diagnosis: ``THROTTLED · power cap``, ``STALLED?``, a health mark."""

from __future__ import annotations

from rich.text import Text

from gputop.core.diagnosis import GpuDiagnosis
from gputop.core.diagnosis.problems import throttle_text

HEALTH_MARK = "✚ HEALTH"


def card_marks(diagnosis: GpuDiagnosis | None, short: bool = False) -> Text:
    """The marks for a card's title (``short``: for a one-line card); empty when all is well."""
    marks = Text()
    if diagnosis is None:
        return marks
    if diagnosis.verdict == "stalled":
        marks.append("STALLED? ", style="bold red")
    elif diagnosis.verdict == "throttled":
        marks.append("THROTTLED " if short else f"{throttle_text(diagnosis.limiting)} ", style="bold yellow")
    if diagnosis.health:
        marks.append(f"{HEALTH_MARK} ", style="bold red")
    return marks
