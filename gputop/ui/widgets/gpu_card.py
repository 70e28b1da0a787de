"""One GPU: memory and utilisation bars, temperature against its own slowdown point, power, sparklines.

Drawn with the line API: each tick only the lines whose text changed are refreshed. A GPU whose
driver calls have not come back says "not answering 14s" in its title, its figures (N/A) dimmed
and its sparklines showing the gap.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.events import Click, Resize
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from gputop.core.diagnosis import GpuDiagnosis
from gputop.core.forecast import Forecast
from gputop.core.format import NA, fmt_age, fmt_duration, fmt_percent, fmt_temperature
from gputop.core.history import GpuHistory
from gputop.core.levels import Level, load_level, temperature_level
from gputop.core.model import GpuSample, MigSample, percent
from gputop.ui.layout import card_lines
from gputop.ui.widgets.diagnosis_marks import card_marks
from gputop.ui.widgets.sparkline import bar, sparkline

_GIB = 1024**3


# How each level looks on screen (the cut-offs are in core.levels, shared with --once and the cluster view).
LEVEL_STYLES = {None: "bright_black", Level.OK: "green", Level.WARN: "yellow", Level.ALARM: "bold red"}


def level_style(percent: float | None) -> str:
    """Green, yellow, red for a load figure (a percent of its limit)."""
    return LEVEL_STYLES[load_level(percent)]


def temperature_style(gpu: GpuSample) -> str:
    """Colour a temperature against this card's own slowdown threshold."""
    return LEVEL_STYLES[temperature_level(gpu.temperature, gpu.temperature_slowdown)]


def memory_pair(used: int | None, total: int | None, short: bool = False) -> str:
    """'61.8/80.0GiB' in the unit of the total."""
    if used is None or total is None:
        return f"{NA}" if used is None else f"{used / _GIB:.1f}GiB/{NA}"
    unit, scale = ("GiB", _GIB) if total >= _GIB else ("MiB", 1024**2)
    return f"{used / scale:.1f}/{total / scale:.1f}{unit[0] if short else unit}"


def short_name(name: str | None) -> str:
    if name is None:
        return NA
    for prefix in ("NVIDIA GeForce ", "NVIDIA ", "Tesla "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _fit(text: Text, width: int) -> Text:
    text = text.copy()
    text.truncate(max(0, width), overflow="ellipsis", pad=True)
    return text


# Short names of the alerts raised on a card, shown in its title (a lost GPU already says LOST).
ALERT_LABELS = {"memory": "MEMORY", "thermal": "HOT", "forecast": "FILLING"}


def forecast_text(forecast: Forecast | None, short: bool = False) -> str:
    """'full in ~3m10s' when the memory is forecast to fill; '' when flat, falling or far off."""
    if forecast is None or forecast.seconds_to_full is None:
        return ""
    return f"{'full' if short else 'full in'} ~{fmt_duration(forecast.seconds_to_full)}"


def _utilization_series(history: GpuHistory | None) -> Sequence[float | None]:
    return () if history is None else history.utilization


def _temperature_series(history: GpuHistory | None) -> Sequence[float | None]:
    return () if history is None else history.temperature


def silence_text(gpu: GpuSample, now: float | None) -> str:
    """'not answering 14s': how long the GPU's driver calls have not come back, as of ``now``."""
    since = gpu.not_answering_since
    if now is None or since is None:
        return "not answering"
    return f"not answering {fmt_age(now - since)}"


def _memory_spark(gpu: GpuSample, history: GpuHistory | None, width: int) -> str:
    """Memory in use over time, against the GPU's size (the last one known through a gap)."""
    if history is None:
        return sparkline((), width, 0, 1.0)
    return sparkline(history.memory_used, width, 0, float(gpu.memory_total or history.memory_total or 1))


def mig_profile(mig: MigSample) -> str:
    if mig.name and " MIG " in mig.name:
        return mig.name.rsplit(" MIG ", 1)[1]
    return mig.name or NA


class GpuCard(Widget):
    """A card for one GPU; ``compact`` folds it into one line (two with MIG devices).

    Not focusable itself: the grid it sits in takes the focus and marks the chosen card.
    """

    class Selected(Message):
        """The user asked for this GPU's detail screen."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, index: int) -> None:
        super().__init__(id=f"gpu-{index}", classes="gpu-card")
        self.index = index
        self.gpu: GpuSample | None = None
        self.history: GpuHistory | None = None
        self.compact = False
        self.forecast: Forecast | None = None
        self.mig_forecasts: dict[int, Forecast] = {}
        self.alert_kinds: tuple[str, ...] = ()
        self.filtered = False
        self.diagnosis: GpuDiagnosis | None = None
        self.now: float | None = None  # when the sample was taken
        self._lines: list[Text] = []
        self._titles: tuple[Text | None, Text | None] = (None, None)
        self._lines_width = -1

    def show(
        self,
        gpu: GpuSample,
        history: GpuHistory | None,
        compact: bool,
        height: int | None = None,
        *,
        forecast: Forecast | None = None,
        mig_forecasts: dict[int, Forecast] | None = None,
        alert_kinds: tuple[str, ...] = (),
        now: float | None = None,
        diagnosis: GpuDiagnosis | None = None,
    ) -> None:
        """Show a new sample of this GPU (taken at ``now``), its memory forecasts and the kinds of alert raised."""
        self.gpu = gpu
        self.now = now
        self.history = history
        self.forecast = forecast
        self.mig_forecasts = mig_forecasts or {}
        self.alert_kinds = alert_kinds
        self.diagnosis = diagnosis
        self.set_class(bool(alert_kinds), "-alert")
        if compact != self.compact:
            self.compact = compact
            self.set_class(compact, "-compact")
        self.set_class(gpu.lost, "-lost")
        self.set_class(not gpu.answering, "-silent")
        height = max(height or 0, card_lines(gpu, compact))
        if self.styles.height is None or self.styles.height.value != height:
            self.styles.height = height
        self._relayout()

    def on_resize(self, event: Resize) -> None:
        self._relayout()

    def _make_lines(self, width: int) -> list[Text]:
        gpu, history = self.gpu, self.history
        if gpu is None:
            return []
        if self.compact:
            lines = self._compact_lines(gpu, history, width)
        else:
            self._set_titles(gpu)
            lines = self._full_lines(gpu, history, width)
        if not gpu.answering:
            for line in lines:
                line.stylize("dim")
        self._lines_width = width
        return [_fit(line, width) for line in lines]

    def _relayout(self) -> None:
        if self.gpu is None:
            return
        width = self.content_size.width
        lines = self._make_lines(width)
        old = self._lines
        self._lines = lines
        if len(old) != len(lines):
            self.refresh()
            return
        for y, (before, after) in enumerate(zip(old, lines, strict=True)):
            if before != after:
                self.refresh(Region(0, y, width, 1))

    def set_filtered(self, filtered: bool) -> None:
        """Mark the card whose GPU the process panel is filtered to (0-9, #)."""
        if filtered != self.filtered:
            self.filtered = filtered
            self.set_class(filtered, "-filtered")
            self._relayout()

    def _index_text(self, text: str) -> Text:
        """The GPU's index, reversed on the card the panel is filtered to."""
        return Text.assemble((text, "bold reverse" if self.filtered else "bold"))

    def _set_titles(self, gpu: GpuSample) -> None:
        # What is wrong comes first, the name last: a title too long for the card loses the name's end.
        title = self._index_text(f" {gpu.index} ")
        title.append(" ")
        if gpu.lost:
            title.append_text(Text("LOST ", style="bold red"))
        elif not gpu.answering:
            title.append_text(Text(f"{silence_text(gpu, self.now)} ", style="bold red"))
        labels = [ALERT_LABELS[kind] for kind in self.alert_kinds if kind in ALERT_LABELS]
        if labels and not gpu.lost:
            title.append_text(Text(f"⚠ {' '.join(labels)} ", style="bold yellow"))
        if not gpu.lost:
            title.append_text(card_marks(self.diagnosis))
        title.append(f"{gpu.name or NA} ")
        facts = []
        if gpu.pstate is not None:
            facts.append(f"P{gpu.pstate}")
        if gpu.clock_sm is not None:
            facts.append(f"{gpu.clock_sm}MHz")
        if gpu.fan_speed is not None:
            facts.append(f"fan {gpu.fan_speed:.0f}%")
        subtitle = Text(" " + " · ".join(facts) + " ") if facts and not gpu.lost else None
        # Setting a border title repaints the whole card: only do it when the text changed.
        if (title, subtitle) != self._titles:
            self._titles = (title, subtitle)
            self.border_title = title
            self.border_subtitle = subtitle

    def _full_lines(self, gpu: GpuSample, history: GpuHistory | None, width: int) -> list[Text]:
        if gpu.lost:
            return [Text("✖ GPU lost: no longer answering (fallen off the bus?)", style="bold red")]
        bar_width = max(6, min(20, (width - 24) // 3))
        value_width = 19
        spark_width = max(0, width - 5 - bar_width - 1 - value_width - 1)
        memory_percent = gpu.memory_percent
        memory_style = level_style(memory_percent)
        util_style = level_style(gpu.utilization_gpu)
        temp_style = temperature_style(gpu)

        def line(label: str, gauge: Text, value: Text, spark: str, spark_style: str) -> Text:
            value = _fit(value, value_width)
            return Text.assemble((label, "bold"), gauge, " ", value, " ", (spark, spark_style))

        memory_value = Text.assemble(
            memory_pair(gpu.memory_used, gpu.memory_total), " ", (f"{fmt_percent(memory_percent):>4}", memory_style)
        )
        util_value = Text(f"{fmt_percent(gpu.utilization_gpu):>4}", style=util_style)
        if gpu.utilization_memory is not None:
            util_value.append(f"  bw {fmt_percent(gpu.utilization_memory)}", style="bright_black")
        temperature = Text.assemble((fmt_temperature(gpu.temperature), temp_style))
        if gpu.temperature_slowdown is not None:
            temperature.append(f"/{gpu.temperature_slowdown:.0f}°C", style="bright_black")
        power_style = level_style(percent(gpu.power_draw, gpu.power_limit))
        power = Text(NA if gpu.power_draw is None else f"{gpu.power_draw:.0f}W", style=power_style)
        if gpu.power_limit is not None:
            power.append(f"/{gpu.power_limit:.0f}W", style="bright_black")
        filling = forecast_text(self.forecast)
        memory_line = line(
            "MEM  ",
            bar(memory_percent, bar_width, memory_style),
            memory_value,
            _memory_spark(gpu, history, max(0, spark_width - len(filling) - 1)),
            "cyan",
        )
        if filling:
            memory_line.append(f" {filling}", style="bold yellow")
        lines = [
            memory_line,
            line(
                "UTIL ",
                bar(gpu.utilization_gpu, bar_width, util_style),
                util_value,
                sparkline(_utilization_series(history), spark_width, 0, 100),
                "green",
            ),
        ]
        high = gpu.temperature_shutdown or 100.0
        left = Text.assemble(temperature, "  ", power)
        lines.append(
            Text.assemble(
                ("TEMP ", "bold"),
                _fit(left, bar_width + 1 + value_width),
                " ",
                (sparkline(_temperature_series(history), spark_width, 20.0, high), "magenta"),
            )
        )
        for mig in gpu.mig_devices:
            mig_percent = percent(mig.memory_used, mig.memory_total)
            style = level_style(mig_percent)
            count = len(mig.processes)
            mig_line = Text.assemble(
                (f"MIG{mig.index:<2}", "bold cyan"),
                bar(mig_percent, bar_width, style),
                " ",
                _fit(
                    Text.assemble(
                        memory_pair(mig.memory_used, mig.memory_total),
                        " ",
                        (f"{fmt_percent(mig_percent):>4}", style),
                    ),
                    value_width,
                ),
                " ",
            )
            # The forecast before the profile: a line too long for the card loses the profile, not the warning.
            mig_filling = forecast_text(self.mig_forecasts.get(mig.index))
            if mig_filling:
                mig_line.append(f"{mig_filling} · ", style="bold yellow")
            lines.append(mig_line.append(f"{mig_profile(mig)} · {count} proc", style="bright_black"))
        return lines

    def _compact_lines(self, gpu: GpuSample, history: GpuHistory | None, width: int) -> list[Text]:
        name_width = 20 if width >= 110 else 14
        name = _fit(Text(short_name(gpu.name)), name_width)
        head = Text.assemble(self._index_text(f"{gpu.index:>2}"), " ", name, " ")
        if gpu.lost:
            return [head.append("✖ LOST: no longer answering", style="bold red")]
        if not gpu.answering:
            head.append(f"✖ {silence_text(gpu, self.now)} ", style="bold red")
            spark_width = max(0, width - head.cell_len)
            return [head.append(_memory_spark(gpu, history, spark_width), "cyan")]
        bar_width = 12 if width >= 110 else 8
        memory_percent = gpu.memory_percent
        memory_style = level_style(memory_percent)
        temp_style = temperature_style(gpu)
        tail = Text.assemble(
            (f"{fmt_percent(gpu.utilization_gpu):>5}", level_style(gpu.utilization_gpu)),
            (f"{fmt_temperature(gpu.temperature):>6}", temp_style),
            (f"{'N/A' if gpu.power_draw is None else f'{gpu.power_draw:.0f}W':>6}", ""),
        )
        if gpu.power_limit is not None and width >= 100:
            tail.append(f"/{gpu.power_limit:.0f}W", style="bright_black")
        memory = Text.assemble(
            bar(memory_percent, bar_width, memory_style),
            f" {memory_pair(gpu.memory_used, gpu.memory_total, short=True):>11}",
            (f"{fmt_percent(memory_percent):>5}", memory_style),
            " ",
        )
        # What is wrong, in words, and when it fills: the sparkline and then the tail give way to them.
        # The forecast comes first and says FILLING by itself.
        filling = forecast_text(self.forecast, short=True)
        labels = [ALERT_LABELS[kind] for kind in self.alert_kinds if kind in ALERT_LABELS]
        if filling:
            labels = [label for label in labels if label != ALERT_LABELS["forecast"]]
            memory.append(f"⚠ {filling} ", style="bold yellow")
        if labels:
            memory.append(f"{'' if filling else '⚠ '}{' '.join(labels)} ", style="bold yellow")
        memory.append_text(card_marks(self.diagnosis, short=True))
        spark_width = max(0, width - head.cell_len - memory.cell_len - tail.cell_len - 1)
        line = Text.assemble(
            head,
            memory,
            (_memory_spark(gpu, history, spark_width), "cyan"),
            " ",
            tail,
        )
        lines = [line]
        if gpu.mig_devices:
            migs = self._compact_migs(gpu, profiles=True)
            if migs.cell_len > width:  # the profiles give way to the forecasts
                migs = self._compact_migs(gpu, profiles=False)
            lines.append(migs)
        return lines

    def _compact_migs(self, gpu: GpuSample, profiles: bool) -> Text:
        migs = Text("   └ MIG ", style="bright_black")
        for n, mig in enumerate(gpu.mig_devices):
            if n:
                migs.append(" · ", style="bright_black")
            migs.append(f"{mig.index} {mig_profile(mig)} " if profiles else f"{mig.index} ")
            migs.append(memory_pair(mig.memory_used, mig.memory_total, short=True), style="cyan")
            mig_filling = forecast_text(self.mig_forecasts.get(mig.index), short=True)
            if mig_filling:
                migs.append(f" {mig_filling}", style="bold yellow")
        return migs

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        if width != self._lines_width:
            # A new card is shown before its first layout: draw it at the size it is painted at,
            # rather than paint it twice.
            self._lines = self._make_lines(width)
        if y >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        segments = list(self._lines[y].render(self.app.console))
        return Strip(segments).crop_extend(0, width, self.rich_style).apply_style(self.rich_style)

    def on_click(self, event: Click) -> None:
        event.stop()
        self.post_message(self.Selected(self.index))
