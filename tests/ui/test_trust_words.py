"""What the screen says where figures alone would mislead (issue 28): the XID that explains a lost GPU,
and MIG mode on with no MIG instance, on the card and the detail screen, as a user opens them."""

from __future__ import annotations

import dataclasses
import time

from gputop.core.model import GpuHealth, XidEvent
from gputop.ui.screens.alert_log import AlertLogScreen

from .factory import NOW, gpu, make_app, proc, screen_text, snapshot


def machine() -> tuple:  # type: ignore[type-arg]
    lost = dataclasses.replace(
        gpu(0, lost=True), health=GpuHealth(xid_events=(XidEvent(13, NOW - 30.0), XidEvent(79, NOW - 2.0)))
    )
    mig_empty = dataclasses.replace(gpu(1, [proc(201, 1, 4)]), mig_mode=True)
    return lost, mig_empty


async def test_the_cards_say_which_xid_lost_the_gpu_and_that_mig_has_no_instances() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(snapshot(*machine()))
        await pilot.pause()
        text = screen_text(app)
        assert "✖ GPU lost: XID 79: GPU has fallen off the bus" in text
        assert "fallen off the bus?" not in text
        assert "MIG on · no instances" in text


async def test_the_detail_screen_says_it_too() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(snapshot(*machine()))
        await pilot.pause()
        await pilot.press("g")  # the detail screen of the selected process's GPU: GPU 1
        await pilot.pause()
        lines = screen_text(app).splitlines()
        assert lines[0].startswith(" GPU 1  NVIDIA H100 80GB HBM3  memory 4.5GiB/80.0GiB")
        assert lines[2].rstrip() == "MIG on · no instances"
        await pilot.press("escape")
        await pilot.pause()
        app.navigation.detail(0)  # as a click on GPU 0's card does
        await pilot.pause()
        assert screen_text(app).splitlines()[0].rstrip() == (
            " GPU 0  NVIDIA H100 80GB HBM3  LOST  XID 79: GPU has fallen off the bus"
        )


async def test_the_alert_log_shows_a_climbing_counter_once_with_its_start_and_latest_count() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        for t in range(20):
            sick = dataclasses.replace(gpu(0), health=GpuHealth(ecc_uncorrected_volatile=t + 1))
            app.apply_snapshot(snapshot(sick, timestamp=NOW + 10.0 * t))
        await pilot.pause()
        await pilot.press("exclamation_mark")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AlertLogScreen)
        assert screen.lines() == [
            f"{clock(0)} ⚠ GPU 0 health: 20 uncorrected ECC errors since the driver loaded · updated {clock(190)}"
        ]


def clock(seconds_after_now: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(NOW + seconds_after_now))
