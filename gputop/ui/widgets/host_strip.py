"""One line about the host: CPU, RAM, swap, load, network rates, and its GPUs' power now and energy since start."""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    draws = [gpu.power_draw for gpu in gpus if gpu.power_draw is not None]
    energies = [
        gpu.energy.since_start_j
        for gpu in gpus
        if energy and gpu.energy is not None and gpu.energy.since_start_j is not None
    ]
    if not draws and not energies:
        return StyledLine()
    text = StyledLine(("  GPU ", "bold"))  # after the figure before it, two cells apart
    if draws:
        watts = sum(draws)
        text.append(f"{watts / 1000:.1f}kW" if watts >= 1000 else f"{watts:.0f}W")
    if energies:
        text.append(f"{' ' if draws else ''}{energy_text(sum(energies))}", "bright_black")
    return text


NO_NIC = "no NIC"  # no network interface is counted (none with a device behind it, or none matches the setting)


def _cpu_percent(host: HostSample, precision: int = 0) -> str:
    return NOT_YET if host.cpu_percent is None else fmt_percent(host.cpu_percent, precision)


def _network(text: StyledLine, host: HostSample, rate: Callable[[float], str], label: str = "NET ") -> StyledLine:
    """``NET ▼12.0MiB/s ▲1.0MiB/s`` after ``text``: the rates, ``…`` before they are known, ``no NIC``."""
    text.append(label, "bold")
    if host.net_interfaces == ():
        return text.append(NO_NIC, "dim")
    received, sent = host.net_rx_rate, host.net_tx_rate
    text.append("▼", "green").append(NOT_YET if received is None else rate(received)).append(" ")
    return text.append("▲", "magenta").append(NOT_YET if sent is None else rate(sent))


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
    if width >= 110:
        for energy in (True, False):
            text = _wide_host_text(host, width, gpus, energy=energy)
            if text.cell_length <= width:
                return text
    return _short_host_text(host, width, gpus)


def _wide_host_text(host: HostSample, width: int, gpus: Sequence[GpuSample], *, energy: bool) -> StyledLine:
    """The strip with bars for CPU and RAM, the swap's size and (``energy``) the GPUs' energy since start."""
    bar_width = 10 if width >= 140 else 5
    # The 5 and 15 minute load averages where there is room for them beside the GPUs' power.
    load_values = 3 if width >= 140 or not gpus else 1
    memory_percent = percent(host.memory_used, host.memory_total)
    swap_percent = percent(host.swap_used, host.swap_total)
    text = StyledLine(
        ("CPU ", "bold"),
        *bar_pieces(host.cpu_percent, bar_width, level_style(host.cpu_percent)),
        f" {_cpu_percent(host, 1):>6}  ",
        ("RAM ", "bold"),
        *bar_pieces(memory_percent, bar_width, level_style(memory_percent)),
        f" {fmt_bytes(host.memory_used)}/{fmt_bytes(host.memory_total)}  ",
        ("SWP ", "bold"),
        (f"{fmt_bytes(host.swap_used)}/{fmt_bytes(host.swap_total)}", level_style(swap_percent)),
        "  ",
        ("LOAD ", "bold"),
        NA if host.load_average is None else " ".join(f"{value:.2f}" for value in host.load_average[:load_values]),
    )
    # The GPUs' power before the network: on a GPU machine the line's end is what gives way.
    text.append_line(gpu_power(gpus, energy=energy)).append("  ")
    return _network(text, host, fmt_rate)


def _short_bytes(value: int | None) -> str:
    text = fmt_bytes(value, precision=0)
    return text.replace("iB", "")


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
    return _network(text, host, lambda rate: _short_bytes(int(rate)) + "/s", label="  NET ")


class HostStrip(FramedLines):
    """The host line, under the title, drawn with the line API: a Static would turn its Text into
    Textual's own content again at every repaint, a millisecond a tick for one line. Its padding is
    Textual's drawing, taken once (``card_frame``): a changed line is set in it."""

    def __init__(self) -> None:
        super().__init__(id="host-strip")
        self.host: HostSample | None = None
        self.gpus: Sequence[GpuSample] = ()
        self._text: StyledLine | None = None
        self._strip_styles = StripStyles()

    def show(self, host: HostSample, gpus: Sequence[GpuSample] = ()) -> None:
        self.host, self.gpus = host, gpus
        self._set_text(host_text(host, self.content_size.width or 120, gpus))

    def on_resize(self) -> None:
        if self.host is not None:
            # Within the padding: a line fitted to the whole width lost its end to Textual's "…".
            self._set_text(host_text(self.host, self.content_size.width, self.gpus))

    def _set_text(self, text: StyledLine) -> None:
        # One line, always: an unchanged line is not redrawn, and a changed one needs no layout (and, its
        # line refreshed rather than the widget, its styles are kept: ``FrameStyled``).
        if text != self._text:
            self._text = text
            self.refresh(Region(0, 0, self.size.width, 1))

    def render_lines(self, crop: Region) -> list[Strip]:
        return self.framed_lines(crop, super().render_lines)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y or self._text is None:
            return Strip.blank(width, self.line_style)
        return self._strip_styles.strip(self._text, self.line_style, width)
