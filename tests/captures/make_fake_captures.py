"""Write the captures of the fake driver kept here (run from the repository root, after a change to
what a capture holds): ``python tests/captures/make_fake_captures.py``.

Each scenario stresses a part of the reading code; ``tests/test_captures.py`` replays every capture in
this folder, these and those of real machines alike.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

from fakenvml import NO_SUCH_PID, OLD_DRIVER, GiB, MiB, Scenario  # noqa: E402
from fakenvml.fixture import FakeNvml  # noqa: E402

from gputop.core.capture.capture_file import write_capture  # noqa: E402
from gputop.core.capture.take import CaptureOptions, take_capture  # noqa: E402
from gputop.core.settings import Settings  # noqa: E402

TICKS = 4
INTERVAL_S = 0.1


def mig() -> Scenario:
    """An A100 in MIG mode with two instances, a process in each; a GPU beside it not in MIG mode."""
    return (
        Scenario()
        .gpu(name="NVIDIA A100-SXM4-80GB", mig_mode=1, util_gpu=None)
        .mig(0, 0, name="NVIDIA A100-SXM4-80GB MIG 3g.40gb", memory_total=40 * GiB, memory_used=12 * GiB)
        .mig(0, 1, name="NVIDIA A100-SXM4-80GB MIG 1g.10gb", memory_used=3 * GiB, compute_instance_id=0)
        .gpu(name="NVIDIA A100-SXM4-80GB")
        .process(0, NO_SUCH_PID, used=11 * GiB, mig=0)
        .process(0, NO_SUCH_PID + 1, used=3 * GiB, mig=1)
        .process(1, NO_SUCH_PID + 2, used=5 * GiB, sm=40)
    )


def gpm_and_pre_hopper() -> Scenario:
    """An H100 with GPM (activity, energy, NVLink by GPM) beside an A100 without GPM (NVLink counters)."""
    return (
        Scenario()
        .gpu(name="NVIDIA H100 80GB HBM3", gpm=1, sm_active=71.0, sm_occupancy=40.0, tensor_active=33.0,
             dram_active=52.0, fp16_active=20.0, graphics_active=75.0, energy_mj=9_000_000, memory_temp=64,
             nvlink_count=18, nvlink_version=4, gpm_nvlink_rx_mibs=1000.0, gpm_nvlink_tx_mibs=900.0,
             pcie_gen=5, pcie_gen_max=5, pcie_width=16, pcie_width_max=16, util_gpu=98, power_mw=640_000)
        .gpu(name="NVIDIA A100-SXM4-40GB", memory_total=40 * GiB, energy_mj=4_000_000, nvlink_count=12,
             nvlink_version=3, pcie_gen=4, pcie_gen_max=4, pcie_width=16, pcie_width_max=16)
        .process(0, NO_SUCH_PID, used=60 * GiB, sm=90)
        .process(1, NO_SUCH_PID + 1, used=2 * GiB, sm=0)
    )


def size_probe_success() -> Scenario:
    """Process lists that answer their size probe with SUCCESS and the count, many processes."""
    scenario = Scenario(size_probe="success").gpu().gpu()
    for index in range(12):
        scenario.process(index % 2, NO_SUCH_PID + index, used=(index + 1) * 256 * MiB, kind="CG"[index % 2], sm=index)
    return scenario


def not_supported() -> Scenario:
    """A GPU that answers NOT_SUPPORTED to most figures, and NO_PERMISSION to its power."""
    return (
        Scenario()
        .gpu(name="NVIDIA GeForce RTX 3090", fan=None, power_limit_mw=None, temperature_slowdown=None,
             temperature_shutdown=None, clock_sm_max=None, clock_mem_max=None, clocks_event_reasons=None,
             ecc_volatile=None, ecc_aggregate=None, remap_corrected=None, remap_uncorrected=None,
             remap_pending=None, remap_failure=None, encoder=None, decoder=None, pcie_rx_kbs=None,
             pcie_tx_kbs=None, max_mig=None, mig_mode=None, memory_reserved=None)
        .error("nvmlDeviceGetPowerUsage", "NO_PERMISSION")
        .error("nvmlDeviceGetProcessUtilization", "NOT_SUPPORTED")
        .process(0, NO_SUCH_PID, used="na", kind="G")
    )


def lost_gpu() -> Scenario:
    """Two GPUs; the second is lost after the first ticks (see LATER)."""
    return Scenario().gpu().gpu(name="NVIDIA L40S").process(1, NO_SUCH_PID, used=GiB, sm=5)


def hung_gpu() -> Scenario:
    """Two GPUs; the second's power reading never comes back while the capture runs (a hung driver
    call: the GPU is listed as not answering, its calls not asked again until it returns)."""
    return Scenario().gpu().gpu(name="NVIDIA L40S").delay("nvmlDeviceGetPowerUsage", 30.0, gpu=1)


# A scenario the driver changes to while the capture runs: (seconds after the start, the new scenario).
LATER: dict[str, tuple[float, Callable[[], Scenario]]] = {
    "lost_gpu": (0.25, lambda: lost_gpu().lost(1)),
}

SCENARIOS: dict[str, tuple[Callable[[], Scenario], tuple[str, ...]]] = {
    "mig": (mig, ()),
    "gpm_and_pre_hopper": (gpm_and_pre_hopper, ()),
    "size_probe_success": (size_probe_success, ()),
    "not_supported": (not_supported, ()),
    "lost_gpu": (lost_gpu, ()),
    "old_driver": (size_probe_success, tuple(OLD_DRIVER)),
    "hung_gpu": (hung_gpu, ()),
}
# The driver deadline of each capture (the settings' driver_deadline_s; a replay keeps it).
DEADLINE_S = {"hung_gpu": 0.5}


def make(name: str, work: Path) -> Path:
    build, omit = SCENARIOS[name]
    fake = FakeNvml(work / name)
    fake.write(build())
    fake.load(omit=omit)
    timer = None
    if name in LATER:
        after, later = LATER[name]
        timer = threading.Timer(after, lambda: fake.write(later()))
        timer.start()
    try:
        settings = Settings(driver_deadline_s=DEADLINE_S.get(name, Settings().driver_deadline_s))
        # The first tick waits the deadline out for a hung GPU: as much longer again for the rest.
        seconds = settings.driver_deadline_s + (TICKS - 0.5) * INTERVAL_S if name in DEADLINE_S else (
            (TICKS - 0.5) * INTERVAL_S
        )
        taken = take_capture(CaptureOptions(seconds=seconds, interval_s=INTERVAL_S), settings)
    finally:
        if timer is not None:
            timer.join()
        fake.unload()
    path = HERE / f"fake-{name.replace('_', '-')}.json.gz"
    size = write_capture(taken.document, str(path))
    print(f"{path.name}: {taken.ticks} ticks of {taken.gpus} GPUs, {size:,} bytes")
    return path


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as work:
        for scenario in sys.argv[1:] or SCENARIOS:
            make(scenario, Path(work))
