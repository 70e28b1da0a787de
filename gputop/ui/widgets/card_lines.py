"""The lines of a GPU's card, full or compact, and its border titles: plain functions of what the card
shows (``CardContent``, built once a tick by the main screen) and its width (and, where the card passes
them, its sparklines as last drawn, moved on a column a tick), so the widget only decides which lines to
repaint. The lines are ``StyledLine``s (a few dozen pieces each; those with a sparkline ``SparkLine``s,
which can move it on alone: ``card_sparks``), the titles Rich Text.

A card compares what it is given, the whole ``CardContent``, with what it showed: equal contents (and the
same width, form, filter mark and sparkline values) give equal lines. Nothing is listed by hand: a field
added to the sample is compared because the sample is; the clock is compared only through what the card
says of it (``CardContent.silence``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from rich.text import Text

from gputop.core.analysis.diagnosis import GpuDiagnosis
from gputop.core.analysis.diagnosis.states import lost_reason, mig_state
from gputop.core.analysis.forecast import Forecast
from gputop.core.analysis.history import GpuHistory
from gputop.core.format import NA, fmt_percent, fmt_temperature
from gputop.core.model import Activity, GpuSample, percent
from gputop.ui.layout import COMPACT_PADDING, FULL_BORDERS, TITLE_CORNERS
from gputop.ui.widgets.card_sparks import Spark, SparkLine
from gputop.ui.widgets.card_text import (
    forecast_text,
    level_style,
    memory_pair,
    mig_profile,
    short_name,
    silence_text,
    temperature_style,
)
from gputop.ui.widgets.diagnosis_marks import Mark, card_marks, fit_marks, mark_pieces, throttle_reasons
from gputop.ui.widgets.sparkline import Sparklines, bar_pieces
from gputop.ui.widgets.styled_line import Piece, StyledLine

FULL_VALUE_WIDTH = 19  # the figures between a full card's bar and its sparkline


@dataclass(frozen=True)
class CardContent:
    """What a card shows: a GPU's sample (taken at ``now``), its history, its memory forecasts
    (the GPU's and each MIG device's), the kinds of alert raised on it, and its diagnosis.

    Two contents compare equal when the card would show the same but for its sparklines' values (the
    history is one object that grows: the card moves its sparklines on and compares them as drawn)."""

    gpu: GpuSample
    history: GpuHistory | None = None
    forecast: Forecast | None = None
    mig_forecasts: Mapping[int, Forecast] = field(default_factory=dict)
    alert_kinds: tuple[str, ...] = ()
    diagnosis: GpuDiagnosis | None = None
    # The clock moves every tick; a card shows it only as a silent GPU's age, compared as ``silence``.
    now: float | None = field(default=None, compare=False)
    # What a GPU that is not answering (and not lost) says instead of its figures; None while it answers.
    silence: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if not self.gpu.answering and not self.gpu.lost:
            object.__setattr__(self, "silence", silence_text(self.gpu, self.now))

    def marks(self, short: bool = False) -> list[Mark]:
        """What is wrong, worst first (see ``diagnosis_marks``)."""
        return card_marks(lost=self.gpu.lost, alert_kinds=self.alert_kinds, diagnosis=self.diagnosis, short=short)

    def warning_marks(self, compact: bool) -> list[str]:
        """What the card must never lose to its width: its marks (``diagnosis_marks``: HEALTH, LOST, MEMORY,
        HOT, THROTTLED, STALLED?, FILLING, FEW SMs). A compact card says FILLING as its forecast, which the
        memory figures already carry, so that word is not counted there."""
        return [mark.token for mark in self.marks(short=compact) if not (compact and mark.token == "FILLING")]

    def warns(self, compact: bool) -> bool:
        """Whether the card, in this form, has a mark to keep (``layout`` plans the room by it)."""
        return bool(self.warning_marks(compact))

    def keeps_marks(self, width: int, *, compact: bool) -> bool:
        """Whether the card, ``width`` cells wide (its borders included), shows every warning mark."""
        marks = self.warning_marks(compact)
        if not marks or self.gpu.lost:  # a lost card says LOST first, and only that
            return True
        if compact:
            inner = width - COMPACT_PADDING
            shown = compact_lines(self, inner, False)[0].plain[:inner]
        else:
            shown = card_titles(self, False)[0].plain[: width - FULL_BORDERS - TITLE_CORNERS]
        return all(mark in shown for mark in marks)


def index_style(filtered: bool) -> str:
    """The GPU's index is reversed on the card the panel is filtered to."""
    return "bold reverse" if filtered else "bold"


def activity_text(activity: Activity, room: int) -> StyledLine:
    """``SM 34%  TENSOR 12%  DRAM 61%``, shorter where ``room`` is short."""
    figures = (("SM", activity.sm_active), ("TENSOR", activity.tensor_active), ("DRAM", activity.dram_active))
    full = StyledLine()
    for n, (name, value) in enumerate(figures):
        full.append("  " if n else "").append(f"{name} ", "bright_black").append(fmt_percent(value))
    if full.cell_length <= room:
        return full
    short = StyledLine()
    for n, (name, value) in enumerate(figures):
        short.append(" " if n else "").append(f"{name[0]} ", "bright_black").append(fmt_percent(value))
    return short


def spark_room(width: int, compact: bool, answering: bool = True) -> int:
    """The most cells a sparkline of a card ``width`` wide takes: exactly the full card's; for the
    compact one, what the least its other parts take leaves (its index and name, and unless the GPU
    is silent, its bar, memory, utilization, temperature and power at their narrowest)."""
    if compact:
        name_width, bar_width = (20, 12) if width >= 110 else (14, 8)
        head = name_width + 4  # "NN name "
        if not answering:
            return max(0, width - head)
        return max(0, width - head - (bar_width + 18) - 17 - 1)  # memory, tail, the space between
    bar_width = max(6, min(20, (width - 24) // 3))
    return max(0, width - 5 - bar_width - 1 - FULL_VALUE_WIDTH - 1)


# A card's border title as (text, style) pieces and its subtitle's text (None: no subtitle): compared
# every tick the content changes, made into Rich Text only when they differ (``titles_text``).
TitlePieces = tuple[tuple[Piece, ...], str | None]


def card_titles(content: CardContent, filtered: bool) -> tuple[Text, Text | None]:
    """The full card's border title and subtitle (None: no subtitle)."""
    return titles_text(title_pieces(content, filtered))


def titles_text(pieces: TitlePieces) -> tuple[Text, Text | None]:
    """The title and subtitle of ``title_pieces`` as Rich Text."""
    title, subtitle = pieces
    return Text.assemble(*title), None if subtitle is None else Text(subtitle)


def title_pieces(content: CardContent, filtered: bool) -> TitlePieces:
    """What ``card_titles`` shows, as pieces (cheaper to make and compare than Rich Text)."""
    gpu = content.gpu
    # What is wrong comes first, worst first, then the throttle reasons, the name last: a title too long for
    # the card loses the name, then the reasons, then the least of the marks.
    title: list[Piece] = [(f" {gpu.index} ", index_style(filtered)), (" ", "")]
    if content.silence is not None:
        title.append((f"{content.silence} ", "bold red"))
    title += mark_pieces(content.marks())
    if reasons := throttle_reasons(content.diagnosis):
        title.append((f"· {reasons} ", "yellow"))
    title.append((f"{gpu.name or NA} ", ""))
    # The pod the kubelet allocated the GPU to (none where its API is not there), with or without processes.
    facts = [] if gpu.allocation is None else [f"pod {gpu.allocation.pod_name}"]
    if (mig := mig_state(gpu)) is not None:
        facts.append(mig)
    if gpu.pstate is not None:
        facts.append(f"P{gpu.pstate}")
    if gpu.clock_sm is not None:
        facts.append(f"{gpu.clock_sm}MHz")
    if gpu.fan_speed is not None:
        facts.append(f"fan {gpu.fan_speed:.0f}%")
    subtitle = " " + " · ".join(facts) + " " if facts and not gpu.lost else None
    return tuple(title), subtitle


def full_lines(content: CardContent, width: int, sparks: Sparklines | None = None) -> list[StyledLine]:
    """The full card's lines: memory, utilisation, temperature and power, one line per MIG device.
    ``sparks``: the card's sparklines as last drawn, moved on rather than drawn again."""
    gpu, history = content.gpu, content.history
    if gpu.lost:
        return [StyledLine(f"✖ GPU lost: {lost_reason(gpu)}", style="bold red")]
    bar_width = max(6, min(20, (width - 24) // 3))
    value_width = FULL_VALUE_WIDTH
    spark_width = spark_room(width, compact=False)
    memory_percent = gpu.memory_percent
    memory_style = level_style(memory_percent)
    util_style = level_style(gpu.utilization_gpu)
    temp_style = temperature_style(gpu)

    def line(label: str, gauge: Sequence[Piece], value: StyledLine, spark: Spark, tail: str = "") -> SparkLine:
        head = StyledLine((label, "bold"), *gauge, " ").append_line(value.fit(value_width)).append(" ")
        return SparkLine.drawn(head, spark, StyledLine((tail, "bold yellow")) if tail else None, gpu, history, sparks)

    memory_value = StyledLine(
        memory_pair(gpu.memory_used, gpu.memory_total), " ", (f"{fmt_percent(memory_percent):>4}", memory_style)
    )
    util_value = StyledLine(f"{fmt_percent(gpu.utilization_gpu):>4}", style=util_style)
    if gpu.utilization_memory is not None:
        util_value.append(f"  bw {fmt_percent(gpu.utilization_memory)}", "bright_black")
    temperature = StyledLine((fmt_temperature(gpu.temperature), temp_style))
    if gpu.temperature_slowdown is not None:
        temperature.append(f"/{gpu.temperature_slowdown:.0f}°C", "bright_black")
    power_style = level_style(percent(gpu.power_draw, gpu.power_limit))
    power = StyledLine(NA if gpu.power_draw is None else f"{gpu.power_draw:.0f}W", style=power_style)
    if gpu.power_limit is not None:
        power.append(f"/{gpu.power_limit:.0f}W", "bright_black")
    filling = forecast_text(content.forecast)
    memory_spark = Spark("memory", max(0, spark_width - len(filling) - 1), 0, None, "cyan")
    lines: list[StyledLine] = [
        line(
            "MEM  ", bar_pieces(memory_percent, bar_width, memory_style), memory_value, memory_spark,
            f" {filling}" if filling else "",
        ),
        line(
            "UTIL ", bar_pieces(gpu.utilization_gpu, bar_width, util_style), util_value,
            Spark("utilization", spark_width, 0, 100, "green"),
        ),
    ]
    if gpu.activity is not None:
        # What the SMs really did (GPM), under GPU-Util which only says some kernel ran.
        room = bar_width + 1 + value_width
        act = StyledLine(("ACT  ", "bold")).append_line(activity_text(gpu.activity, room).fit(room)).append(" ")
        lines.append(SparkLine.drawn(act, Spark("sm", spark_width, 0, 100, "green"), None, gpu, history, sparks))
    high = gpu.temperature_shutdown or 100.0
    left = StyledLine().append_line(temperature).append("  ").append_line(power)
    temperature_line = StyledLine(("TEMP ", "bold")).append_line(left.fit(bar_width + 1 + value_width)).append(" ")
    temperature_spark = Spark("temperature", spark_width, 20.0, high, "magenta")
    lines.append(SparkLine.drawn(temperature_line, temperature_spark, None, gpu, history, sparks))
    for mig in gpu.mig_devices:
        mig_percent = percent(mig.memory_used, mig.memory_total)
        style = level_style(mig_percent)
        count = len(mig.processes)
        pair = memory_pair(mig.memory_used, mig.memory_total)
        mig_value = StyledLine(pair, " ", (f"{fmt_percent(mig_percent):>4}", style))
        mig_line = StyledLine((f"MIG{mig.index:<2}", "bold cyan"), *bar_pieces(mig_percent, bar_width, style), " ")
        mig_line.append_line(mig_value.fit(value_width)).append(" ")
        # The forecast before the profile: a line too long for the card loses the profile, not the warning.
        mig_filling = forecast_text(content.mig_forecasts.get(mig.index))
        if mig_filling:
            mig_line.append(f"{mig_filling} · ", "bold yellow")
        lines.append(mig_line.append(f"{mig_profile(mig)} · {count} proc", "bright_black"))
    return lines


# Below this width a compact card's name and bar are shorter (compact_lines).
_NARROW = 56


def compact_lines(
    content: CardContent, width: int, filtered: bool, sparks: Sparklines | None = None
) -> list[StyledLine]:
    """The compact card: one line (a second one for MIG devices); ``sparks`` as for ``full_lines``."""
    gpu, history = content.gpu, content.history
    # Under 56 cells (a 40-column terminal) the name and the bar give way, so the memory figures stay whole.
    name_width = 20 if width >= 110 else 14 if width >= _NARROW else 8
    head = StyledLine((f"{gpu.index:>2}", index_style(filtered)), " ")
    head.append_line(StyledLine(short_name(gpu.name)).fit(name_width)).append(" ")
    if gpu.lost:
        reason = "no longer answering" if not gpu.health.xid_events else lost_reason(gpu)
        return [head.append(f"✖ LOST: {reason}", "bold red")]
    if not gpu.answering:
        head.append(f"✖ {content.silence} ", "bold red")
        spark = Spark("memory", max(0, width - head.cell_length), 0, None, "cyan")
        return [SparkLine.drawn(head, spark, None, gpu, history, sparks)]
    bar_width = 12 if width >= 110 else 8 if width >= _NARROW else 4
    memory_percent = gpu.memory_percent
    memory_style = level_style(memory_percent)
    temp_style = temperature_style(gpu)
    figures = StyledLine(
        (f"{fmt_temperature(gpu.temperature):>6}", temp_style),
        f"{'N/A' if gpu.power_draw is None else f'{gpu.power_draw:.0f}W':>6}",
    )
    if gpu.power_limit is not None and width >= 100:
        figures.append(f"/{gpu.power_limit:.0f}W", "bright_black")
    # SM active beside GPU-Util, on a GPU with GPM: the first figure to give way to the worst mark.
    sm_cells = 0 if gpu.activity is None else len(" sm") + 4
    memory = StyledLine(
        *bar_pieces(memory_percent, bar_width, memory_style),
        f" {memory_pair(gpu.memory_used, gpu.memory_total, short=True):>11}",
        (f"{fmt_percent(memory_percent):>5}", memory_style),
        " ",
    )
    # What is wrong, worst first, in the room the figures leave: the sparkline gives way to the marks, the
    # lesser marks to the figures (°C, util and W stay on a hot GPU's row), where the forecast says FILLING.
    marks = _with_forecast(content.marks(short=True), forecast_text(content.forecast, short=True))
    room = width - head.cell_length - memory.cell_length - len("  100%") - sm_cells - figures.cell_length
    if sm_cells and marks and not _worst_fits(marks, room):
        room, sm_cells = room + sm_cells, 0
    tail = StyledLine((f"{fmt_percent(gpu.utilization_gpu):>5}", level_style(gpu.utilization_gpu)))
    if sm_cells and gpu.activity is not None:
        tail.append(" sm", "bright_black").append(f"{fmt_percent(gpu.activity.sm_active):>4}")
    tail.append_line(figures)
    before = memory.cell_length
    for text, style in fit_marks(marks, room):
        memory.append(text, style)
    if (mig := mig_state(gpu)) is not None and memory.cell_length - before + len(mig) + 1 <= room:
        memory.append(f"{mig} ", "bold cyan")
    spark_width = max(0, width - head.cell_length - memory.cell_length - tail.cell_length - 1)
    spark = Spark("memory", spark_width, 0, None, "cyan")
    lines: list[StyledLine] = [
        SparkLine.drawn(head.append_line(memory), spark, StyledLine(" ").append_line(tail), gpu, history, sparks)
    ]
    if gpu.mig_devices:
        migs = _compact_migs(content, profiles=True)
        if migs.cell_length > width:  # the profiles give way to the forecasts
            migs = _compact_migs(content, profiles=False)
        lines.append(migs)
    return lines


def _worst_fits(marks: list[Mark], room: int) -> bool:
    """Whether the worst of ``marks`` shows in ``room`` cells (not only a count of them)."""
    pieces = fit_marks(marks, room)
    return bool(pieces) and marks[0].token in pieces[0][0]


def _with_forecast(marks: list[Mark], filling: str) -> list[Mark]:
    """A compact row's marks with the forecast ("full ~3m", "FULL") in FILLING's place, or in the place it
    would have (the forecast shows without an alert too)."""
    if not filling:
        return marks
    kept = [mark for mark in marks if mark.token != "FILLING"]
    lesser = next((n for n, mark in enumerate(kept) if mark.token == "FEW SMs"), len(kept))
    return [*kept[:lesser], Mark(filling, "bold yellow", alert=True), *kept[lesser:]]


def _compact_migs(content: CardContent, profiles: bool) -> StyledLine:
    migs = StyledLine("   └ MIG ", style="bright_black")
    for n, mig in enumerate(content.gpu.mig_devices):
        if n:
            migs.append(" · ", "bright_black")
        migs.append(f"{mig.index} {mig_profile(mig)} " if profiles else f"{mig.index} ")
        migs.append(memory_pair(mig.memory_used, mig.memory_total, short=True), "cyan")
        mig_filling = forecast_text(content.mig_forecasts.get(mig.index), short=True)
        if mig_filling:
            migs.append(f" {mig_filling}", "bold yellow")
    return migs
