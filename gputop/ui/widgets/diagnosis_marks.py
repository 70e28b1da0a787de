"""What a GPU card says is wrong, worst first: ``✚ HEALTH LOST ⚠ MEMORY HOT THROTTLED STALLED? FILLING FEW SMs``.

A card's title and its compact row are cut at their end where the card is narrow, so the order is the order
of severity: a health problem (an XID, ECC errors) before a lost GPU, memory full, heat, throttling, a stall,
then what warns of trouble coming. Each mark is one short token; the throttle reasons follow every token
(``· HW slowdown, SW thermal``), so they are the first words cut. The verdict marks are the ones held by time
(``GpuDiagnosis.held``, see ``core.analysis.marks``) where the Watcher held them.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from rich.cells import cell_len

from gputop.core.analysis.diagnosis import GpuDiagnosis
from gputop.core.analysis.diagnosis.reasons import reason_words

HEALTH_MARK = "✚ HEALTH"
ALERT_GLYPH = "⚠"


@dataclass(frozen=True, slots=True)
class Mark:
    """One thing wrong, as a card names it."""

    token: str
    style: str
    alert: bool = False  # an alert raised on the GPU: the first one gets the ⚠ glyph


# Alert kind -> its token on a card (a lost GPU's is the LOST mark itself).
ALERT_TOKENS = {"memory": "MEMORY", "thermal": "HOT", "forecast": "FILLING"}


def _verdicts(diagnosis: GpuDiagnosis) -> tuple[frozenset[str], tuple[str, ...]]:
    """The verdict marks to show and the throttle reasons: held where the Watcher held them, else the tick's."""
    if diagnosis.held is not None:
        return diagnosis.held.verdicts, diagnosis.held.limiting
    shown: set[str] = {diagnosis.verdict} if diagnosis.verdict in ("throttled", "stalled") else set()
    if diagnosis.busy_few_sms:
        shown.add("busy_few_sms")
    return frozenset(shown), diagnosis.limiting if "throttled" in shown else ()


def card_marks(
    *, lost: bool, alert_kinds: Collection[str], diagnosis: GpuDiagnosis | None, short: bool = False
) -> list[Mark]:
    """Every mark of a card, worst first (``short``: a compact row's tokens); none when all is well."""
    verdicts, _reasons = _verdicts(diagnosis) if diagnosis is not None else (frozenset(), ())
    marks: list[Mark] = []
    if diagnosis is not None and diagnosis.health:
        marks.append(Mark(HEALTH_MARK, "bold red"))
    if lost:
        # Its figures are gone with it: what they said is not shown.
        return [*marks, Mark("LOST", "bold red")]
    if "memory" in alert_kinds:
        marks.append(Mark("MEMORY", "bold yellow", alert=True))
    if "thermal" in alert_kinds:
        marks.append(Mark("HOT", "bold yellow", alert=True))
    if "throttled" in verdicts:
        marks.append(Mark("THROTTLED", "bold yellow"))
    if "stalled" in verdicts:
        marks.append(Mark("STALLED?", "bold red"))
    if "forecast" in alert_kinds:
        marks.append(Mark("FILLING", "bold yellow", alert=True))
    if "busy_few_sms" in verdicts:
        marks.append(Mark("FEW SMs" if short else "BUSY, FEW SMs", "bold yellow"))
    return marks


def throttle_reasons(diagnosis: GpuDiagnosis | None) -> str:
    """``HW slowdown, SW thermal``: why a card says THROTTLED, the most severe first; '' when it does not."""
    if diagnosis is None:
        return ""
    verdicts, reasons = _verdicts(diagnosis)
    return ", ".join(reason_words(name) for name in reasons) if "throttled" in verdicts else ""


def mark_pieces(marks: list[Mark]) -> list[tuple[str, str]]:
    """The marks as (text, style) pieces, each followed by a space; ⚠ before the first alert."""
    pieces: list[tuple[str, str]] = []
    glyph = False
    for mark in marks:
        text = f"{mark.token} "
        if mark.alert and not glyph:
            text, glyph = f"{ALERT_GLYPH} {text}", True
        pieces.append((text, mark.style))
    return pieces


def fit_marks(marks: list[Mark], room: int) -> list[tuple[str, str]]:
    """The worst marks that fit in ``room`` cells, as pieces; ``+N`` says how many lesser ones did not."""
    for keep in range(len(marks), -1, -1):
        pieces = mark_pieces(marks[:keep])
        if keep < len(marks):
            pieces.append((f"+{len(marks) - keep} ", "bold yellow"))
        if sum(cell_len(text) for text, _style in pieces) <= room:
            return pieces
    return []
