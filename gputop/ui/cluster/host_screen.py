"""One host of the cluster: its exporter, its GPUs with every figure, and their processes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.model import ClusterGpu, ClusterHost, HostDetail
from gputop.core.format import NA, fmt_bytes, fmt_duration, fmt_percent, fmt_rate, fmt_watts, safe_text
from gputop.core.output.command_text import fit_command, sibling_spans
from gputop.ui.cluster.messages import ClusterFetcher, DetailFetched, LookupFailed
from gputop.ui.cluster.refresh import Refresh
from gputop.ui.cluster.render import host_status, memory_bar, problems_text, temperature_text
from gputop.ui.cluster.summary import prometheus_line
from gputop.ui.widgets.card_text import energy_text

GPU_COLUMNS = ("GPU", "Model", "UUID", "Memory", "Used/Total", "Util", "Mem util", "Temp", "Power", "Fan", "SM clock",
               "SM/Tensor/DRAM", "Full in", "Problems", "More")
# The activity column: what the SMs, tensor cores and memory really did (GPM, DCGM's profiling fields).
ACTIVITY_IN_COLUMN = ("sm_active", "tensor_active", "dram_active")
# The readings the columns above show; every other one the host serves goes in "More".
# The COMMAND column's width on a host's screen, in cells.
_COMMAND_WIDTH = 40
_IN_COLUMNS = frozenset(("memory_used", "memory_free", "memory_total", "utilization_gpu", "utilization_memory",
                         "temperature", "temperature_slowdown", "power_draw", "power_limit", "fan_speed", "clock_sm",
                         *ACTIVITY_IN_COLUMN))
VERDICT_WORDS = {"throttled": "THROTTLED", "stalled": "STALLED?", "busy_few_sms": "BUSY, FEW SMs",
                 "memory_bound": "MEMORY-BOUND"}
# Short names for "More", in gputop's units (core.output.export_readings.READINGS and GpuSample's fields).
_MORE: tuple[tuple[str, str, Callable[[float], str]], ...] = (
    ("memory_reserved", "reserved", fmt_bytes),
    ("clock_memory", "mem clock", lambda v: f"{v:.0f}MHz"),
    ("clock_sm_max", "max SM", lambda v: f"{v:.0f}MHz"),
    ("temperature_shutdown", "shutdown", lambda v: f"{v:.0f}°C"),
    ("memory_temperature", "mem temp", lambda v: f"{v:.0f}°C"),
    ("utilization_encoder", "enc", fmt_percent),
    ("utilization_decoder", "dec", fmt_percent),
    ("xid_last", "last XID", lambda v: f"{v:.0f}"),
    ("ecc_dbe_volatile", "ECC DBE vol", lambda v: f"{v:.0f}"),
    ("ecc_dbe_aggregate", "ECC DBE agg", lambda v: f"{v:.0f}"),
    ("retired_pending", "retire pending", lambda v: "yes" if v else "no"),
    ("remapped_correctable", "remapped corr", lambda v: f"{v:.0f}"),
    ("remapped_uncorrectable", "remapped uncorr", lambda v: f"{v:.0f}"),
    ("remap_pending", "remap pending", lambda v: "yes" if v else "no"),
    ("remap_failure", "remap failed", lambda v: "yes" if v else "no"),
    ("clock_event_mask", "clock events", lambda v: f"{int(v):#x}"),
    ("graphics_active", "GR active", fmt_percent),
    ("sm_occupancy", "occupancy", fmt_percent),
    ("fp64_active", "FP64", fmt_percent),
    ("fp32_active", "FP32", fmt_percent),
    ("fp16_active", "FP16", fmt_percent),
    ("pcie_rx", "PCIe rx", fmt_rate),
    ("pcie_tx", "PCIe tx", fmt_rate),
    ("pcie_link_gen", "PCIe gen", lambda v: f"{v:.0f}"),
    ("pcie_link_gen_max", "max gen", lambda v: f"{v:.0f}"),
    ("pcie_link_width", "width", lambda v: f"x{v:.0f}"),
    ("pcie_link_width_max", "max width", lambda v: f"x{v:.0f}"),
    ("pcie_replay_errors", "PCIe replays", lambda v: f"{v:.0f}"),
    ("nvlink_version", "NVLink v", lambda v: f"{v:.0f}"),
    ("nvlink_links_active", "links up", lambda v: f"{v:.0f}"),
    ("nvlink_links_total", "links", lambda v: f"{v:.0f}"),
    ("nvlink_rx", "NVLink rx", fmt_rate),
    ("nvlink_tx", "NVLink tx", fmt_rate),
    ("nvlink_errors_crc", "NVLink CRC", lambda v: f"{v:.0f}"),
    ("nvlink_errors_replay", "NVLink replay", lambda v: f"{v:.0f}"),
    ("nvlink_errors_recovery", "NVLink recovery", lambda v: f"{v:.0f}"),
    ("energy_since_driver_load_j", "energy", energy_text),
    ("energy_since_start_j", "since start", energy_text),
)
PROCESS_COLUMNS = ("GPU", "PID", "User", "Command", "Container", "GPU memory")


def _mhz(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}MHz"


def _power(gpu: ClusterGpu) -> str:
    """``299.4W/400W``: the draw to a tenth of a watt, so the host's row (the sum of its GPUs' draws, rounded
    once) is the sum of what these rows show, not of each one rounded (299 + 299 + 301 for 900)."""
    draw, limit = gpu.figure("power_draw"), gpu.figure("power_limit")
    return (NA if draw is None else f"{draw:.1f}W") + ("" if limit is None else f"/{fmt_watts(limit)}")


def activity_text(gpu: ClusterGpu) -> str:
    """``34%/12%/61%``: SM active, tensor active, DRAM bandwidth; N/A where the host does not serve them."""
    figures = [gpu.figure(key) for key in ACTIVITY_IN_COLUMN]
    return NA if all(value is None for value in figures) else "/".join(fmt_percent(value) for value in figures)


def more_text(gpu: ClusterGpu) -> str:
    """The verdict, then every figure the GPU serves that no column shows, as ``name value`` pairs."""
    shown = [VERDICT_WORDS.get(gpu.verdict, gpu.verdict)] if gpu.verdict else []
    shown += [f"{label} {fmt(value)}" for key, label, fmt in _MORE if (value := gpu.figure(key)) is not None]
    known = {key for key, _, _ in _MORE} | _IN_COLUMNS
    shown += [f"{key.removeprefix('DCGM_FI_')} {value:g}" for key, value in sorted(gpu.figures.items())
              if key not in known]
    return " · ".join(shown)


def _gpu_label(gpu: ClusterGpu) -> Text | str:
    if gpu.mig_instance is not None:
        return f"{gpu.index} MIG {gpu.mig_instance}"
    if gpu.lost:
        return Text(f"{gpu.index} LOST", style="bold red")
    if gpu.answering is False:
        return Text(f"{gpu.index} NOT ANSWERING", style="bold red")
    return str(gpu.index)


def gpu_cells(gpu: ClusterGpu) -> tuple[Text | str, ...]:
    """One cell per GPU_COLUMNS."""
    return (
        _gpu_label(gpu),
        safe_text(gpu.name if gpu.mig_instance is None else gpu.mig_profile),
        safe_text(gpu.uuid),
        memory_bar(gpu),
        f"{fmt_bytes(gpu.figure('memory_used'))}/{fmt_bytes(gpu.figure('memory_total'))}",
        fmt_percent(gpu.figure("utilization_gpu")),
        fmt_percent(gpu.figure("utilization_memory")),
        temperature_text(gpu.figure("temperature"), gpu.figure("temperature_slowdown")),
        _power(gpu),
        fmt_percent(gpu.figure("fan_speed")),
        _mhz(gpu.figure("clock_sm")),
        activity_text(gpu),
        NA if gpu.seconds_to_full is None else fmt_duration(gpu.seconds_to_full),
        problems_text(gpu.problems),
        more_text(gpu),
    )


class HostScreen(Screen[None]):
    """The GPUs and processes of one host, read when the screen opens and with every refresh."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, hostname: str, reader: ClusterFetcher, clock: Callable[[], float], refresh: Refresh) -> None:
        """``reader``: what the host's detail is read through when the screen opens (each refresh brings it
        again, ``show_refresh``); ``clock``: what ages are counted against; ``refresh``: the newest one."""
        super().__init__()
        self.hostname = hostname
        self.detail: HostDetail | None = None
        self.reader = reader
        self.clock = clock
        self.latest = refresh

    def compose(self) -> ComposeResult:
        title = Text.assemble(("Host ", "bold"), (safe_text(self.hostname), "bold"), "  reading…")
        yield Static(title, id="host-title")
        yield DataTable(id="gpus", cursor_type="row")
        yield Static("Processes", id="processes-title")
        yield DataTable(id="processes", cursor_type="row", zebra_stripes=True)
        # A line of keys, not a Footer: a Footer of every app key costs this screen most of its first second.
        yield Static("Esc back · q quit", classes="keys")

    def on_mount(self) -> None:
        self.query_one("#gpus", DataTable).add_columns(*GPU_COLUMNS)
        self.query_one("#processes", DataTable).add_columns(*PROCESS_COLUMNS)
        self.query_one("#processes", DataTable).focus()
        self._fetch_detail()  # at once, not at the next refresh

    @work(thread=True, exit_on_error=False, group="detail")
    def _fetch_detail(self) -> None:
        try:
            detail = self.reader.detail(self.hostname)
        except PrometheusError as error:
            self.post_message(LookupFailed(str(error), error.kind))
        else:
            self.post_message(DetailFetched(detail))

    def on_detail_fetched(self, message: DetailFetched) -> None:
        if message.detail.hostname == self.hostname:
            self.show(message.detail, self._host(), self.clock())

    def on_lookup_failed(self, message: LookupFailed) -> None:
        self.show_error(prometheus_line(replace(self.latest, error=(message.reason, message.kind))))

    def show_refresh(self, refresh: Refresh) -> None:
        """Each refresh brings this host's detail again, or says why Prometheus did not answer."""
        self.latest = refresh
        if refresh.error is not None:
            self.show_error(prometheus_line(refresh))
        elif refresh.answered and refresh.state is not None:
            detail = refresh.state.detail
            if detail is not None and detail.hostname == self.hostname:
                self.show(detail, self._host(), self.clock())

    def _host(self) -> ClusterHost | None:
        state = self.latest.state
        return None if state is None else state.host(self.hostname)

    def show(self, detail: HostDetail, host: ClusterHost | None, now: float) -> None:
        self.detail = detail
        title = Text.assemble(("Host ", "bold"), (safe_text(self.hostname), "bold"), "  ")
        if host is not None:
            title.append_text(host_status(host, now, answering=True))
        elif not detail.gpus:
            title.append("not in Prometheus any more", style="bold red")
        info = detail.info
        if info:
            title.append(
                f"  gputop {safe_text(info.get('version'))} · {safe_text(info.get('source'))}"
                f" · driver {safe_text(info.get('driver_version') or NA)}"
                f" · CUDA {safe_text(info.get('cuda_driver_version') or NA)}"
            )
        if detail.last_sample is not None:
            title.append(f" · sampled {fmt_duration(max(0.0, now - detail.last_sample))} ago")
        if detail.exporter_up is False:
            title.append(" · its latest sample failed", style="bold red")
        if detail.sample_errors:
            title.append(f" · {detail.sample_errors:.0f} failed samples", style="yellow")
        if detail.process_series_dropped:
            title.append(f" · {detail.process_series_dropped:.0f} smallest processes not exported", style="yellow")
        self.query_one("#host-title", Static).update(title)

        gpus: DataTable[Text | str] = self.query_one("#gpus", DataTable)
        gpus.clear()
        for gpu in detail.gpus:
            gpus.add_row(*gpu_cells(gpu))

        processes: DataTable[str] = self.query_one("#processes", DataTable)
        processes.clear()
        heading = self.query_one("#processes-title", Static)
        if not detail.live:
            heading.update("Processes: none live (the host is not answering; GPU figures are the last kept)")
            return
        heading.update(f"Processes ({len(detail.processes)})")
        # Cut in the middle as the local panel cuts them, keeping what tells the ranks of one job apart.
        commands = [safe_text(process.command) for process in detail.processes]
        spans = sibling_spans(commands)
        for process, command, span in zip(detail.processes, commands, spans, strict=True):
            processes.add_row(
                str(process.gpu_index),
                "pod" if process.pid is None else str(process.pid),
                safe_text(process.user, 16),
                fit_command(command, _COMMAND_WIDTH, span),
                safe_text(process.container, 40),
                fmt_bytes(process.gpu_memory),
                key=f"{process.gpu_index}:{process.pid}:{process.container}",
            )

    def show_error(self, message: Text) -> None:
        if self.is_mounted:
            self.query_one("#host-title", Static).update(message)
