"""What the cluster view shows of a host: its row's cells, the status word, sparklines, sort orders."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from rich.text import Text

from gputop.core.analysis.levels import temperature_level
from gputop.core.cluster.model import ClusterGpu, ClusterHost
from gputop.core.cluster.reader import HISTORY_POINTS
from gputop.core.format import (
    NA,
    fmt_bytes,
    fmt_duration,
    fmt_percent,
    fmt_temperature,
    fmt_watts,
    safe_text,
)

# The cards' bar, sparkline and colours for core.analysis.levels' cut-offs: a GPU looks the same here as on its card.
from gputop.ui.widgets.card_text import LEVEL_STYLES, level_style
from gputop.ui.widgets.sparkline import bar, sparkline

BAR_WIDTH = 10
SPARK_WIDTH = HISTORY_POINTS  # one cell per point of the history the reader asks for
READING = Text("…", style="dim")  # a figure being read (the first refresh is still coming in)


def temperature_text(temperature: float | None, slowdown: float | None) -> Text:
    """'71°C' coloured against the GPU's slowdown temperature (core.analysis.levels' default when unknown)."""
    return Text(fmt_temperature(temperature), style=LEVEL_STYLES[temperature_level(temperature, slowdown)])


def percent_bar(percent: float | None, width: int = BAR_WIDTH) -> Text:
    """The cards' bar in the colour of how full it is, then the percent: '██▌░░░░░░░  25%'."""
    style = level_style(percent)
    return Text.assemble(bar(percent, width, style), (f" {fmt_percent(percent):>4}", style))


def memory_bar(gpu: ClusterGpu, width: int = BAR_WIDTH) -> Text:
    return percent_bar(gpu.memory_percent, width)


def memory_sparkline(history: Sequence[float | None], total: float | None) -> Text:
    """The host's GPU memory in use over the history window, scaled to all of it (to the peak when unknown)."""
    high = total or max((v for v in history if v is not None), default=1.0)
    return Text(sparkline(history, SPARK_WIDTH, 0.0, high), style="cyan")


def host_status(host: ClusterHost, now: float, answering: bool) -> Text:
    """'live', 'stale 42s' or 'down 42s'; while Prometheus does not answer, the age of every row's figures."""
    age = host.age_s(now)
    age_text = "?" if age is None else fmt_duration(age)
    if not answering:
        return Text(f"{age_text} old", style="yellow")
    if host.state == "live":
        return Text("live", style="green")
    return Text(f"{host.state} {age_text}", style="bold red")


@dataclass(frozen=True, slots=True)
class Column:
    title: str
    width: int
    right: bool = False


HOST_COLUMNS = (
    Column(title="Host", width=20),
    Column(title="Status", width=10),
    Column(title="GPUs", width=4, right=True),
    Column(title="Model", width=20),
    Column(title="Fullest GPU", width=BAR_WIDTH + 5),
    Column(title="Used/Total", width=17, right=True),
    Column(title="Util", width=4, right=True),
    Column(title="Temp", width=5, right=True),
    Column(title="Power", width=6, right=True),
    Column(title="Problems", width=8, right=True),
    Column(title="Memory history", width=SPARK_WIDTH),
)


def _used_total(used: float | None, total: float | None) -> str:
    if used is None and total is None:
        return NA
    return f"{fmt_bytes(used)}/{fmt_bytes(total)}"


def problems_cell(count: int | None) -> Text:
    """How many problems the diagnoses found on a host's GPUs: red when any, N/A when its exporter does not say."""
    if count is None:
        return Text(NA, style="dim")
    return Text(str(count), style="bold red" if count else "green")


def problems_text(problems: Mapping[str, int]) -> Text:
    """One GPU's problems by kind, ``idle 1 · health 2``; ``-`` when none."""
    if not problems:
        return Text("-", style="green")
    return Text(" · ".join(f"{kind} {count}" for kind, count in problems.items()), style="bold red")


def _gpus(host: ClusterHost) -> Text:
    if host.gpus is None:
        return Text(NA, style="dim")
    if host.lost:
        return Text(f"{host.gpus}!", style="bold red")
    return Text(str(host.gpus))


def host_cells(
    host: ClusterHost,
    history: Sequence[float | None] | None,
    now: float,
    answering: bool,
    pending: Collection[str] = (),
) -> tuple[Text, ...]:
    """One cell per HOST_COLUMNS; a figure in ``pending`` that is not known yet is shown being read."""

    def cell(figure: str, text: Callable[[], Text]) -> Text:
        return READING if figure in pending and getattr(host, figure) is None else text()

    return (
        Text(safe_text(host.hostname), style="bold"),
        host_status(host, now, answering),
        cell("gpus", lambda: _gpus(host)),
        cell("model", lambda: Text(safe_text(host.model))),
        cell("memory_percent", lambda: percent_bar(host.memory_percent)),
        cell("memory_used", lambda: Text(_used_total(host.memory_used, host.memory_total))),
        cell("utilization", lambda: Text(fmt_percent(host.utilization))),
        cell("temperature", lambda: temperature_text(host.temperature, None)),
        cell("power_draw", lambda: Text(fmt_watts(host.power_draw))),
        cell("problems", lambda: problems_cell(host.problems)),
        memory_sparkline(history or (), host.memory_total),
    )


def fit(text: Text, column: Column) -> Text:
    """The cell cut or padded to its column's width (cut text ends in '…')."""
    text = text.copy()
    if text.cell_len > column.width:
        text.truncate(column.width, overflow="ellipsis")
    elif column.right:
        text.pad_left(column.width - text.cell_len)
    else:
        text.pad_right(column.width - text.cell_len)
    return text


def row_text(cells: Sequence[Text]) -> Text:
    """Cells side by side, one space apart, in HOST_COLUMNS' widths."""
    line = Text(" ")
    for cell, column in zip(cells, HOST_COLUMNS, strict=True):
        line.append_text(fit(cell, column))
        line.append(" ")
    return line


HEADER = row_text(tuple(Text(column.title, style="bold") for column in HOST_COLUMNS))


@dataclass(frozen=True, slots=True)
class SortOrder:
    """A column to sort hosts by; ``descending`` is its natural direction (largest first for figures)."""

    name: str
    key: Callable[[ClusterHost], float | str | None]
    descending: bool


SORT_ORDERS = (
    SortOrder("host", lambda h: h.hostname, False),
    SortOrder("memory", lambda h: h.memory_percent, True),
    SortOrder("utilization", lambda h: h.utilization, True),
    SortOrder("temperature", lambda h: h.temperature, True),
    SortOrder("power", lambda h: h.power_draw, True),
    SortOrder("problems", lambda h: h.problems, True),
)


def sort_hosts(hosts: Sequence[ClusterHost], order: SortOrder, inverted: bool = False) -> list[ClusterHost]:
    """Hosts in ``order`` (flipped when ``inverted``); hosts without the figure always last, by name.

    ``hosts`` arrive by name, and Python's sort is stable, so equal figures stay in name order.
    """
    key = order.key
    known = [h for h in hosts if key(h) is not None]
    unknown = [h for h in hosts if key(h) is None]
    known.sort(key=key, reverse=order.descending != inverted)  # type: ignore[arg-type]
    return known + unknown
