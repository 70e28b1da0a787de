"""What a GPU card says of its diagnosis: ``THROTTLED · power cap``, ``STALLED?``, ``BUSY, FEW SMs``, a health mark."""

from __future__ import annotations

from gputop.core.analysis.diagnosis import GpuDiagnosis
from gputop.core.analysis.diagnosis.problems import throttle_text

HEALTH_MARK = "✚ HEALTH"


def card_marks(diagnosis: GpuDiagnosis | None, short: bool = False) -> list[tuple[str, str]]:
    """The marks for a card as (text, style) pieces (``short``: for a one-line card); none when all is well."""
    marks: list[tuple[str, str]] = []
    if diagnosis is None:
        return marks
    if diagnosis.verdict == "stalled":
        marks.append(("STALLED? ", "bold red"))
    elif diagnosis.verdict == "throttled":
        marks.append(("THROTTLED " if short else f"{throttle_text(diagnosis.limiting)} ", "bold yellow"))
    elif diagnosis.verdict == "busy_few_sms":
        marks.append(("FEW SMs " if short else "BUSY, FEW SMs ", "bold yellow"))
    if diagnosis.health:
        marks.append((f"{HEALTH_MARK} ", "bold red"))
    return marks

