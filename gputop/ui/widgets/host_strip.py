"""One line about the host: CPU, RAM, swap, load, network rates, and its GPUs' power now and energy since start."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip

from gputop.core.format import NA, NOT_YET, fmt_bytes, fmt_percent, fmt_rate
from gputop.core.model import GpuSample, HostSample, percent
from gputop.ui.widgets.card_frame import FramedLines
from gputop.ui.widgets.card_text import energy_text, level_style
from gputop.ui.widgets.sparkline import bar_pieces
from gputop.ui.widgets.styled_line import StripStyles, StyledLine


def gpu_power(gpus: Sequence[GpuSample], *, energy: bool = True) -> StyledLine:
    """``  GPU 2.4kW 1.3 kWh``: the GPUs' power draw now (summed over those that report it) and,
    with ``energy``, the energy they used since gputop started; empty where no GPU reports either."""
    watts, joules = _power_figures(gpus)
    return _power_line(*_power_words(watts, joules if energy else None))


def _power_figures(gpus: Sequence[GpuSample]) -> tuple[float | None, float | None]:
    """The GPUs' power draw summed, and their energy since start summed (None: no GPU reports it)."""
    draws = [gpu.power_draw for gpu in gpus if gpu.power_draw is not None]
    energies = [
        gpu.energy.since_start_j for gpu in gpus if gpu.energy is not None and gpu.energy.since_start_j is not None
    ]
    return (sum(draws) if draws else None, sum(energies) if energies else None)


def _power_words(watts: float | None, joules: float | None) -> tuple[str | None, str | None]:
    return (
        None if watts is None else f"{watts / 1000:.1f}kW" if watts >= 1000 else f"{watts:.0f}W",
        None if joules is None else energy_text(joules),
    )


def _power_line(watts: str | None, energy: str | None) -> StyledLine:
    if watts is None and energy is None:
        return StyledLine()
    text = StyledLine(("  GPU ", "bold"))  # after the figure before it, two cells apart
    if watts is not None:
        text.append(watts)
    if energy is not None:
        text.append(f"{' ' if watts is not None else ''}{energy}", "bright_black")
    return text


NO_NIC = "no NIC"  # no network interface is counted (none with a device behind it, or none matches the setting)


def _cpu_percent(host: HostSample, precision: int = 0) -> str:
    return NOT_YET if host.cpu_percent is None else fmt_percent(host.cpu_percent, precision)


def _rates(
    counted: bool, received: float | None, sent: float | None, rate: Callable[[float], str]
) -> tuple[str, str] | None:
    """The rates received and sent as shown (``…`` before they are known); None where no interface is
    ``counted``."""
    if not counted:
        return None
    return (NOT_YET if received is None else rate(received), NOT_YET if sent is None else rate(sent))


def _network(text: StyledLine, rates: tuple[str, str] | None, label: str = "NET ") -> StyledLine:
    """``NET ▼12.0MiB/s ▲1.0MiB/s`` after ``text``: the ``rates`` (``_rates``), or ``no NIC``."""
    text.append(label, "bold")
    if rates is None:
        return text.append(NO_NIC, "dim")
    received, sent = rates
    return text.append("▼", "green").append(received).append(" ").append("▲", "magenta").append(sent)


def net_note(host: HostSample | None) -> str:
    """What NET counts, in words (for the help screen)."""
    counted = None if host is None else host.net_interfaces
    if counted is None:
        return "NET: which network interfaces are counted is not known for this source."
    where = "the setting net_interfaces (docs/settings.md)"
    if not counted:
        return f"NET counts no interface: none has a device behind it, or none matches {where}."
    return f"NET counts {', '.join(counted)}; {where} chooses others (default: those with a device behind them)."


def host_text(host: HostSample, width: int, gpus: Sequence[GpuSample] = ()) -> StyledLine:
    """The host strip's text for a terminal ``width`` cells wide: the wide form with bars where it fits
    (the GPUs' energy giving way first), else the narrow forms; the network's end is never cut first."""
    text = StyledLine()
    for part in host_parts(host, width, gpus):
        text.append_line(part)
    return text


# The wide strip's parts: each the same object while it reads the same, so that the strip compares and draws
# them as they were. A part's words are found by its figures (cached: the same figures, the same words, no
# formatting again); the part is made by its words alone (cached: words that read the same, the same part). Only
# the words' cache holds parts: a part found by its figures would outlive the words' entry it was made with,
# and words that read the same could then give two parts. Never changed once made.
_part = lru_cache(maxsize=64)


def host_parts(host: HostSample, width: int, gpus: Sequence[GpuSample] = ()) -> tuple[StyledLine, ...]:
    """``host_text`` in parts, left to right; the wide form's are each the same object while they read the same."""
    if width >= 110:
        bar_width = 10 if width >= 140 else 5
        # The 5 and 15 minute load averages where there is room for them beside the GPUs' power.
        load_values = 3 if width >= 140 or not gpus else 1
        head = (
            _bar_words(*_cpu_words(host.cpu_percent, bar_width)),
            _bar_words(*_memory_words(host.memory_used, host.memory_total, bar_width)),
            _swap_words(*_swap_shown(host.swap_used, host.swap_total)),
            _load_words(_load_shown(host.load_average, load_values)),
        )
        net = _net_words(_net_rates(host.net_interfaces != (), host.net_rx_rate, host.net_tx_rate))
        watts, joules = _power_figures(gpus)
        length = sum(part.cell_length for part in head) + net.cell_length
        # The GPUs' power before the network: on a GPU machine the line's end is what gives way (the energy first).
        for energy in (joules, None):
            power = _power_part_words(*_power_shown(watts, energy))
            if length + power.cell_length <= width:
                return (*head, power, net)
    return (_short_host_text(host, width, gpus),)


Bar = tuple[tuple[str, str], ...]


@_part
def _cpu_words(cpu: float | None, bar_width: int) -> tuple[str, Bar, str]:
    shown = NOT_YET if cpu is None else fmt_percent(cpu, 1)
    return "CPU ", bar_pieces(cpu, bar_width, level_style(cpu)), f" {shown:>6}  "


@_part
def _memory_words(used: int | None, total: int | None, bar_width: int) -> tuple[str, Bar, str]:
    share = percent(used, total)
    return "RAM ", bar_pieces(share, bar_width, level_style(share)), f" {fmt_bytes(used)}/{fmt_bytes(total)}  "


@_part
def _bar_words(label: str, bar: Bar, figure: str) -> StyledLine:
    return StyledLine((label, "bold"), *bar, figure)


@_part
def _swap_shown(used: int | None, total: int | None) -> tuple[str, str]:
    return f"{fmt_bytes(used)}/{fmt_bytes(total)}", level_style(percent(used, total))


@_part
def _swap_words(shown: str, style: str) -> StyledLine:
    return StyledLine(("SWP ", "bold"), (shown, style), "  ")


@_part
def _load_shown(load_average: tuple[float, float, float] | None, values: int) -> str:
    return NA if load_average is None else " ".join(f"{value:.2f}" for value in load_average[:values])


@_part
def _load_words(shown: str) -> StyledLine:
    return StyledLine(("LOAD ", "bold"), shown)


@_part
def _power_shown(watts: float | None, joules: float | None) -> tuple[str | None, str | None]:
    return _power_words(watts, joules)


@_part
def _power_part_words(watts: str | None, energy: str | None) -> StyledLine:
    return _power_line(watts, energy).append("  ")


@_part
def _net_rates(counted: bool, received: float | None, sent: float | None) -> tuple[str, str] | None:
    return _rates(counted, received, sent, fmt_rate)


@_part
def _net_words(rates: tuple[str, str] | None) -> StyledLine:
    return _network(StyledLine(), rates)


def _short_bytes(value: int | None) -> str:
    text = fmt_bytes(value, precision=0)
    return text.replace("iB", "")


def _short_rate(rate: float) -> str:
    return _short_bytes(int(rate)) + "/s"


def _short_host_text(host: HostSample, width: int, gpus: Sequence[GpuSample]) -> StyledLine:
    """The strip on a narrow terminal: the richest form that fits. What gives way first is what is
    least needed at a glance: the GPUs' energy since start (the detail screen has it), then the
    swap's size, then swap altogether where none is used; the line's end is cut only after that."""
    forms = [(True, True, True), (False, True, True), (False, False, True), (False, False, False)]
    text = StyledLine()
    for energy, swap_total, swap_unused in forms:
        text = _short_form(host, gpus, energy=energy, swap_total=swap_total, swap_unused=swap_unused)
        if text.cell_length <= width:
            return text
    return text.fit(width, pad=False)


def _short_form(
    host: HostSample, gpus: Sequence[GpuSample], *, energy: bool, swap_total: bool, swap_unused: bool
) -> StyledLine:
    """One narrow form of the strip (``swap_unused``: say SWP even where no swap is used)."""
    memory_percent = percent(host.memory_used, host.memory_total)
    text = StyledLine(
        ("CPU ", "bold"),
        (_cpu_percent(host), level_style(host.cpu_percent)),
        ("  RAM ", "bold"),
        (f"{_short_bytes(host.memory_used)}/{_short_bytes(host.memory_total)}", level_style(memory_percent)),
    )
    if swap_unused or host.swap_used != 0:  # unknown swap still says N/A
        swap = _short_bytes(host.swap_used)
        text.append("  SWP ", "bold").append(f"{swap}/{_short_bytes(host.swap_total)}" if swap_total else swap)
    text.append("  LOAD ", "bold").append(NA if host.load_average is None else f"{host.load_average[0]:.1f}")
    text.append_line(gpu_power(gpus, energy=energy))
    rates = _rates(host.net_interfaces != (), host.net_rx_rate, host.net_tx_rate, _short_rate)
    return _network(text, rates, label="  NET ")


class HostStrip(FramedLines):
    """The host line, under the title, drawn with the line API: a Static would turn its Text into
    Textual's own content again at every repaint, a millisecond a tick for one line. Its padding is
    Textual's drawing, taken once (``card_frame``): a changed line is set in it. Its text is in parts
    (``host_parts``), each the same object while it says the same: the line is redrawn when a part changed,
    and each part's segments are made once."""

    def __init__(self) -> None:
        super().__init__(id="host-strip")
        self.host: HostSample | None = None
        self.gpus: Sequence[GpuSample] = ()
        self._parts: tuple[StyledLine, ...] | None = None
        self._strip_styles = StripStyles()
        # Each part's segments, by the part (kept, with it, for the parts drawn last), on the styles they were made on.
        self._segments: dict[int, tuple[StyledLine, list[Segment]]] = {}
        self._segments_on: dict[str, Style] | None = None

    def show(self, host: HostSample, gpus: Sequence[GpuSample] = ()) -> None:
        self.host, self.gpus = host, gpus
        width = self.content_size.width
        self._set_parts(host_parts(host, width or 120, gpus), width)

    def on_resize(self) -> None:
        if self.host is not None:
            # Within the padding: a line fitted to the whole width lost its end to Textual's "…".
            width = self.content_size.width
            self._set_parts(host_parts(self.host, width, self.gpus), width)

    def _set_parts(self, parts: tuple[StyledLine, ...], width: int) -> None:
        # One line, always: an unchanged line is not redrawn, and a changed one needs no layout (and, its
        # line refreshed rather than the widget, its styles are kept: ``FrameStyled``).
        if parts != self._parts:  # part by part: the same object, or else the same pieces
            self._parts = parts
            self.refresh(Region(0, 0, width, 1))

    def render_lines(self, crop: Region) -> list[Strip]:
        return self.framed_lines(crop, super().render_lines)

    def render_line(self, y: int) -> Strip:
        width, base = self.frame_width, self.line_style
        parts = self._parts
        if y or parts is None:
            return Strip.blank(width, base)
        # One segment per run of a style, as the whole line's pieces would make (``StripStyles``): a part's
        # first segment joins the last one's where they are of one style.
        table = self._strip_styles.table(base)
        kept, self._segments = (self._segments if table is self._segments_on else {}), {}
        self._segments_on = table
        segments: list[Segment] = []
        length = 0
        for part in parts:
            made = kept.get(id(part))
            if made is None or made[0] is not part:
                made = (part, self._strip_styles.segments(part.pieces, part.style, base))
            self._segments[id(part)] = made
            length += part.cell_length
            own = made[1]
            if own and segments and segments[-1].style is own[0].style:
                segments[-1] = Segment(segments[-1].text + own[0].text, own[0].style)
                segments += own[1:]
            else:
                segments += own
        if length > width:  # not fitted to this width (before a resize reached it): Textual's crop
            return Strip(segments, length).crop_extend(0, width, base)
        if length < width:  # padded as ``Strip.crop_extend`` pads: a segment of spaces on the line's style
            segments.append(Segment(" " * (width - length), base))
        return Strip(segments, width)
