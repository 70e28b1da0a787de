"""The title bar is one line: on a narrow terminal it ends in `…`, never in a word with its value gone to
a hidden second line (`driver` without its version)."""

from __future__ import annotations

from .factory import make_app, screen_text, snapshot, two_gpu_snapshot


async def test_a_title_too_long_for_the_terminal_ends_in_an_ellipsis_after_its_true_start() -> None:
    app = make_app()
    async with app.run_test(size=(40, 10)) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        first = screen_text(app).splitlines()[0]
        assert first == " gputop  node-07  2 GPUs  driver 560.35…"


async def test_a_title_that_fits_is_whole() -> None:
    app = make_app()
    async with app.run_test(size=(120, 10)) as pilot:
        app.apply_snapshot(snapshot())
        await pilot.pause()
        first = screen_text(app).splitlines()[0].rstrip()
        assert first == " gputop  node-07  0 GPUs  driver 560.35.03  CUDA 12.6  [test]  every 1s"
