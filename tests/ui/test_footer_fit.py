"""The footer shows each key whole or not at all: Textual's clipped the last one that did not fit
(`Enter P` for `Enter Process`), with no mark; F1 lists every key."""

from __future__ import annotations

from .factory import make_app, screen_text, two_gpu_snapshot


def footer(app: object) -> str:
    return screen_text(app).splitlines()[-1].rstrip()  # type: ignore[arg-type]


async def test_keys_that_do_not_fit_whole_are_left_out_and_come_back_with_room() -> None:
    app = make_app()
    async with app.run_test(size=(60, 15)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.pause()
        assert footer(app) == " F1 Help  / Filter  <> Sort  k Kill         ▏Ctrl+P palette"
        await pilot.resize_terminal(120, 15)
        await pilot.pause()
        await pilot.pause()
        assert footer(app).startswith(" F1 Help  / Filter  <> Sort  k Kill  Enter Process  ! Alerts ")
        await pilot.resize_terminal(40, 15)
        await pilot.pause()
        await pilot.pause()
        assert footer(app) == " F1 Help  / Filter      ▏Ctrl+P palette"
