"""The small texts a GPU's card is made of, shared with the detail screen and the host strip:
the colour of a level, memory as used/total, a short model name, "full in ~3m", "not answering 14s"."""

from __future__ import annotations

from gputop.core.analysis.diagnosis.activity import pcie_link_text
from gputop.core.analysis.forecast import Forecast
from gputop.core.analysis.levels import Level, load_level, temperature_level
from gputop.core.format import NA, fmt_age, fmt_duration, fmt_percent, fmt_rate
from gputop.core.model import GpuSample, MigSample

GIB = 1024**3

# How each level looks on screen (the cut-offs are in core.analysis.levels, shared with --once and the cluster view).
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
        return f"{NA}" if used is None else f"{used / GIB:.1f}GiB/{NA}"
    unit, scale = ("GiB", GIB) if total >= GIB else ("MiB", 1024**2)
    return f"{used / scale:.1f}/{total / scale:.1f}{unit[0] if short else unit}"


def short_name(name: str | None) -> str:
    if name is None:
        return NA
    for prefix in ("NVIDIA GeForce ", "NVIDIA ", "Tesla "):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def forecast_text(forecast: Forecast | None, short: bool = False) -> str:
    """'full in ~3m10s' when the memory is forecast to fill; 'FULL' at 100 %; '' when flat, falling or far off."""
    if forecast is not None and forecast.full:
        return "FULL"
    if forecast is None or forecast.seconds_to_full is None:
        return ""
    return f"{'full' if short else 'full in'} ~{fmt_duration(forecast.seconds_to_full)}"


def silence_text(gpu: GpuSample, now: float | None) -> str:
    """'not answering 14s': how long the GPU's driver calls have not come back, as of ``now``;
    'read failed: <call>: <error>' for a read that raised instead (no hang: no age to count)."""
    if gpu.read_failed:
        return gpu.last_error or "read failed"
    since = gpu.not_answering_since
    if now is None or since is None:
        return "not answering"
    return f"not answering {fmt_age(now - since)}"


def mig_profile(mig: MigSample) -> str:
    if mig.name and " MIG " in mig.name:
        return mig.name.rsplit(" MIG ", 1)[1]
    return mig.name or NA


J_PER_WH = 3600.0


def energy_text(joules: float | None) -> str:
    """Energy in the unit a power bill uses: '812 Wh', '3.42 kWh', '1.2 MWh'."""
    if joules is None:
        return NA
    wh = joules / J_PER_WH
    if wh < 1000:
        return f"{wh:.0f} Wh" if wh >= 10 else f"{wh:.1f} Wh"
    if wh < 1_000_000:
        return f"{wh / 1000:.2f} kWh"
    return f"{wh / 1_000_000:.1f} MWh"


def activity_figures(gpu: GpuSample) -> list[str]:
    """The detail screen's figures of GPM, energy, the PCIe link and NVLink, each a field; [] where none is known."""
    fields: list[str] = []
    activity = gpu.activity
    if activity is not None:
        fields.append(f"SM active {fmt_percent(activity.sm_active)} (occupancy {fmt_percent(activity.sm_occupancy)})")
        fields.append(
            f"FP64 {fmt_percent(activity.fp64_active)} FP32 {fmt_percent(activity.fp32_active)}"
            f" FP16 {fmt_percent(activity.fp16_active)}"
        )
    link = pcie_link_text(gpu)
    if link is not None:
        fields.append(link)
    nvlink = gpu.nvlink
    if nvlink is not None:
        version = "" if nvlink.version is None else f" {nvlink.version}"
        links = f"{'?' if nvlink.links_active is None else nvlink.links_active}/{nvlink.links_total or '?'} links"
        fields.append(f"NVLink{version} {links} rx {fmt_rate(nvlink.rx)} tx {fmt_rate(nvlink.tx)}")
        errors = (nvlink.errors_crc, nvlink.errors_replay, nvlink.errors_recovery)
        fields.append(
            "NVLink errors "
            + " ".join(
                f"{name} {NA if count is None else count}"
                for name, count in zip(("CRC", "replay", "recovery"), errors, strict=True)
            )
        )
    energy = gpu.energy
    if energy is not None:
        fields.append(
            f"energy {energy_text(energy.since_start_j)} since start,"
            f" {energy_text(energy.since_driver_load_j)} since the driver loaded"
        )
    return fields
