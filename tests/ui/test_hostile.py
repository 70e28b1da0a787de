"""Hostile process names and users in the TUI: shown as literal, escaped text everywhere, never acted on.

Textual passes an ESC in a widget's text straight to the terminal, so every
string another user controls must reach the screen through safe_text. These
tests read what the compositor would write and require it to hold no control
character at all, with the escaped name visible.
"""

from __future__ import annotations

import pytest

from gputop.core.format import safe_text
from gputop.core.host.signals import Outcome, SignalResult, signal_name
from gputop.core.model import ProcessIdentity
from gputop.ui.app import GpuTopApp, SamplerFailed
from gputop.ui.screens.detail import DetailScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.user_pick import UserPickScreen

from ..e2e.hostile import CASES
from .factory import StaticSource, gpu, make_app, notices, proc, snapshot

SIZE = (120, 40)
COMMANDS = {case.name: case.argv0.decode("utf-8", "surrogateescape") + " --serve" for case in CASES}
ATTACK = "\x1b]0;pwned\x07\x1b[2J\x9b2J[bold]x[/]"


def rendered(app: GpuTopApp) -> str:
    """Every cell of the screen in view, as the compositor would write it (styles aside)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


def assert_inert(text: str) -> None:
    """No character a terminal would act on: C0 and C1 controls, DEL, lone surrogates."""
    for line in text.split("\n"):
        for char in line:
            code = ord(char)
            assert not (code < 0x20 or 0x7F <= code < 0xA0 or 0xD800 <= code <= 0xDFFF), (
                f"raw {char!r} in {line!r}"
            )


@pytest.mark.parametrize("name", sorted(COMMANDS))
async def test_a_hostile_command_shows_escaped_in_the_panel_the_kill_dialog_and_the_detail_screen(
    name: str,
) -> None:
    command = COMMANDS[name]
    shown = safe_text(command)[:20]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(9, 0, 1, "alice", command), proc(10, 0, 2, "bob", "python x.py")])))
        await pilot.pause()
        main = rendered(app)
        assert_inert(main)
        assert shown in main

        await pilot.press("end", "k")
        assert isinstance(app.screen, KillScreen)
        dialog = rendered(app)
        assert_inert(dialog)
        assert shown in dialog
        await pilot.press("escape")

        await pilot.press("g")
        assert isinstance(app.screen, DetailScreen)
        detail = rendered(app)
        assert_inert(detail)
        assert shown in detail
        assert app.is_running


async def test_click_markup_in_a_command_is_text_not_an_action() -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:  # the whole command, beside GROWTH (shown from 110)
        app.apply_snapshot(snapshot(gpu(0, [proc(9, 0, 1, "alice", "[@click=app.quit]x[/] [@click=app.bell]y")])))
        await pilot.pause()
        row = "".join(segment.text for segment in app.processes.render_line(1))
        column = row.index("[@click=app.quit]x[/]")
        # Click the would-be link: +1 for the panel border, row 1 under the header.
        await pilot.click("#processes", offset=(column + 1 + 17, 2))
        await pilot.pause()
        assert app.is_running
        assert "[@click=app.quit]x[/]" in rendered(app)


async def test_a_hostile_user_name_is_escaped_in_the_picker_and_the_filter_title() -> None:
    user = "ev\x1b]0;pwned\x07il"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(9, 0, 1, user, "python x.py"), proc(10, 0, 2, "bob", "y")])))
        await pilot.pause()
        await pilot.press("u")
        assert isinstance(app.screen, UserPickScreen)
        picker = rendered(app)
        assert_inert(picker)
        assert safe_text(user) in picker
        await pilot.press("down", "down", "enter")  # "all", "bob", then the hostile user (sorted)
        await pilot.pause()
        assert app.main.panel.filter.user == user
        assert app.processes.pids() == [9]
        title = str(app.processes.border_title)
        assert_inert(title)
        assert f"user {safe_text(user)}" in title
        assert_inert(rendered(app))


async def test_a_sampling_error_naming_a_hostile_process_is_an_escaped_notification() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(SamplerFailed(RuntimeError(f"cannot read PID 9 ({ATTACK})")))
        await pilot.pause()
        [message] = notices(app)
        assert_inert(message)
        assert safe_text(ATTACK) in message
        assert_inert(rendered(app))


class HostileOwnerSource(StaticSource):
    """Answers every signal with permission denied, naming an owner with escapes in the name."""

    def signal(self, identity: ProcessIdentity, signal_number: int) -> SignalResult | None:
        name = signal_name(signal_number)
        return SignalResult(identity, name, Outcome.DENIED, f"{name} to PID {identity[0]}: owned by {ATTACK}")


async def test_a_signal_result_naming_a_hostile_owner_is_an_escaped_notification() -> None:
    app = make_app(HostileOwnerSource())
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(9, 0, 1, "alice", ATTACK)])))
        await pilot.pause()
        await pilot.press("k", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        [message] = notices(app)
        assert message == f"SIGTERM to PID 9: owned by {safe_text(ATTACK)}"
        assert_inert(rendered(app))
