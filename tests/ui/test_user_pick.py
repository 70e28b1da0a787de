"""u: the user picker shows each user's process count and GPU memory."""

from __future__ import annotations

from dataclasses import replace

from gputop.ui.screens.user_pick import UserPickScreen

from .factory import gpu, make_app, proc, screen_text, snapshot


def users_snapshot():  # type: ignore[no-untyped-def]
    """alice: 101 on GPUs 0 and 1 (one process, 10+6 GiB) and 102 (20 GiB); bob: 201 (4 GiB) and 202
    (memory not reported); carol: 301 (512 MiB)."""
    both = proc(101, 0, 10, "alice")
    return snapshot(
        gpu(0, [both, proc(102, 0, 20, "alice"), proc(301, 0, 0.5, "carol")]),
        gpu(1, [replace(both, gpu_index=1, gpu_memory=6 << 30), proc(201, 1, 4, "bob"),
                replace(proc(202, 1, 0, "bob"), gpu_memory=None)]),
    )


async def test_u_lists_each_user_with_their_processes_and_gpu_memory() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:  # the narrowest the dialog must fit
        app.apply_snapshot(users_snapshot())
        await pilot.pause()
        await pilot.press("u")
        assert isinstance(app.screen, UserPickScreen)
        text = screen_text(app)
        assert "alice  2 processes   36.0GiB" in text  # 101 counts once, on two GPUs
        assert "bob    2 processes    4.0GiB" in text  # 202's memory is not known
        assert "carol    1 process  512.0MiB" in text
        await pilot.press("down", "down", "enter")
        assert app.processes.pids() == [201, 202]
