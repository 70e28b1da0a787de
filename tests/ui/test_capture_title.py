"""The TUI on a capture (`gputop --nvml-capture FILE`) says in its title whose machine it is and that it
is a capture."""

from __future__ import annotations

from pathlib import Path

from gputop.core.run_config import RunConfig
from gputop.core.sampler import Sampler
from gputop.core.sources.nvml_capture import open_capture
from gputop.ui.app import GpuTopApp

CAPTURE = Path(__file__).parent.parent / "captures" / "fake-mig.json.gz"


async def test_the_title_names_the_captured_host_and_says_capture() -> None:
    sampler = Sampler(open_capture(str(CAPTURE), deadline_s=5.0))
    sampler.open()
    app = GpuTopApp(sampler, RunConfig(interval_s=0.2))
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(0.5)
            title = str(app.query_one("#title-bar").content)
            assert title.startswith(" gputop  host-1  2 GPUs  driver 550.54.15  CUDA 12.4  [capture]"), title
            # The ticks are as old as the capture, and none is late: the capture's clock is the measure.
            assert title.endswith("[capture]  every 0.2s"), title
            # The processes' host facts are the captured machine's, not this one's /proc.
            assert app.snapshot is not None
            process = app.snapshot.gpus[0].mig_devices[0].processes[0]
            assert (process.visible, process.not_visible_reason) == (False, "exited")
    finally:
        sampler.close()
