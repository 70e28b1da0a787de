"""GPM activity, energy, NVLink and the PCIe link as the user sees them: cards, the detail screen, the host strip."""

from __future__ import annotations

from dataclasses import replace

from textual_plotext import PlotextPlot

from gputop.core.analysis.diagnosis import NO_DIAGNOSES, GpuDiagnosis
from gputop.core.analysis.diagnosis.memory import gpu_unattributed
from gputop.core.model import Activity, Energy, GpuSample, HostSample, MigSample, NvLink, Snapshot
from gputop.ui.screens.detail import DetailScreen, header_fields
from gputop.ui.widgets.card_lines import CardContent, compact_lines, full_lines
from gputop.ui.widgets.diagnosis_panel import diagnosis_text
from gputop.ui.widgets.host_strip import host_text

from .factory import NOW, make_app, screen_text

GIB = 1024**3
ACTIVITY = Activity(
    sm_active=34.0,
    sm_occupancy=20.0,
    tensor_active=12.0,
    dram_active=61.0,
    fp64_active=0.0,
    fp32_active=8.0,
    fp16_active=3.0,
)
HOPPER = GpuSample(
    index=0,
    name="NVIDIA H100 80GB HBM3",
    memory_total=80 * GIB,
    memory_used=20 * GIB,
    utilization_gpu=97.0,
    temperature=60.0,
    power_draw=450.0,
    power_limit=700.0,
    pcie_link_gen=4,
    pcie_link_gen_max=5,
    pcie_link_width=8,
    pcie_link_width_max=16,
    activity=ACTIVITY,
    energy=Energy(since_driver_load_j=36_000_000.0, since_start_j=5_400.0),
    nvlink=NvLink(
        version=4,
        links_active=17,
        links_total=18,
        rx=2.0 * GIB,
        tx=1.0 * GIB,
        errors_crc=3,
        errors_replay=0,
        errors_recovery=1,
        links_down=(5,),
    ),
)
AMPERE = GpuSample(
    index=1,
    name="NVIDIA A100-SXM4-80GB",
    memory_total=80 * GIB,
    memory_used=GIB,
    utilization_gpu=10.0,
    power_draw=90.0,
    power_limit=400.0,
)


def test_a_gpm_card_has_the_act_line_under_util_and_a_card_without_gpm_has_none() -> None:
    lines = [line.plain for line in full_lines(CardContent(HOPPER), 60)]
    assert [line[:5] for line in lines] == ["MEM  ", "UTIL ", "ACT  ", "TEMP "]
    assert lines[2].startswith("ACT  SM 34%  TENSOR 12%  DRAM 61%")
    assert [line.plain[:5] for line in full_lines(CardContent(AMPERE), 60)] == ["MEM  ", "UTIL ", "TEMP "]
    # The one-line card: SM active beside GPU-Util.
    assert " 97% sm 34%" in compact_lines(CardContent(HOPPER), 100, False)[0].plain
    assert " sm" not in compact_lines(CardContent(AMPERE), 100, False)[0].plain


def test_a_mig_devices_activity_is_in_the_detail_header() -> None:
    mig = MigSample(
        index=0,
        name="NVIDIA H100 MIG 1g.10gb",
        memory_total=10 * GIB,
        memory_used=GIB,
        activity=Activity(sm_active=80.0, tensor_active=40.0),
    )
    groups = header_fields(replace(HOPPER, mig_mode=True, mig_devices=(mig,)), None, NOW)
    assert groups[-1][0].plain == "MIG 0 1g.10gb 1.0GiB/10.0GiB 10% SM 80% tensor 40%"


def test_the_host_strip_adds_up_the_gpus_power_and_energy_since_start() -> None:
    text = host_text(HostSample(), 150, (HOPPER, AMPERE)).plain
    assert "GPU 540W 1.5 Wh" in text  # 450 + 90 W; 5400 J


async def test_the_detail_screen_shows_activity_charts_and_figures_in_words() -> None:
    app = make_app()
    async with app.run_test(size=(140, 50)) as pilot:
        for n in range(2):
            gpus = (replace(HOPPER, activity=replace(ACTIVITY, sm_active=30.0 + n)), AMPERE)
            app.apply_snapshot(Snapshot(timestamp=NOW + n, hostname="h", host=HostSample(), gpus=gpus))
        await pilot.pause()
        assert "ACT  SM 31%  TENSOR 12%  DRAM 61%" in screen_text(app)
        # No process holds the cursor (a (no process) row never takes it): the first card, as a user
        # reaches it, Tab then Enter.
        await pilot.press("tab", "enter")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.index == 0
        await pilot.pause()
        title = str(screen.query_one("#detail-title").content)
        for words in (
            "SM active 31% (occupancy 20%)",
            "FP64 0% FP32 8% FP16 3%",
            "PCIe Gen4 x8 (max Gen5 x16)",
            "NVLink 4 17/18 links rx 2.0GiB/s tx 1.0GiB/s",
            "NVLink errors CRC 3 replay 0 recovery 1",
            "energy 1.5 Wh since start, 10.00 kWh since the driver loaded",
        ):
            assert words in title, words
        # Memory, temperature, util, power; SM, tensor, DRAM (a GPU without GPM has the first four:
        # test_detail.py).
        assert len(screen.query(PlotextPlot)) == 7
        assert screen.query_one("#chart-sm_active").border_title == "SM active (%)"


def test_the_detail_screen_says_busy_on_few_sms_and_memory_bound_in_words() -> None:
    snapshot = Snapshot(timestamp=NOW, hostname="h", host=HostSample(), gpus=(HOPPER,))
    unattributed = gpu_unattributed(HOPPER, 1.0, 5.0)
    diagnosis = GpuDiagnosis(
        verdict="busy_few_sms",
        limiting=(),
        unattributed=unattributed,
        health=(),
        new_ecc_errors=False,
        busy_few_sms=True,
        memory_bound=True,
    )
    text = diagnosis_text(HOPPER, diagnosis, snapshot, NO_DIAGNOSES).plain
    assert text.startswith(
        " BUSY, FEW SMs the GPU counts as busy, but its kernels keep only 34% of its SMs working: tiny kernels,"
    )
    assert " MEMORY-BOUND DRAM bandwidth at 61% while the tensor and FP pipes idle" in text
