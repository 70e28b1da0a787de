"""Keys typed ahead: over SSH several keys often arrive in one read. Each must go where the key
before it sent the focus (the filter box after ``/``, the panel after Enter, the dialog after ``k``).

Textual routes each queued key to the widget focused when the key is dispatched, so ``/`` is a
priority binding (it moves the focus as it arrives) and the filter box applies Enter itself and
passes on keys that were queued to it after the focus left.
"""

from __future__ import annotations

from textual import events

from gputop.ui.app import GpuTopApp
from gputop.ui.main_screen import MainScreen
from gputop.ui.screens.kill import KillScreen
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.terminal.early_keys import EarlyKeys, typed_keys

from .factory import SIGTERM, RecordingSource, make_app, two_gpu_snapshot

SIZE = (120, 40)

_CHARACTERS = {"slash": "/", "enter": "\r", "escape": "\x1b"}


def burst(app: GpuTopApp, *keys: str) -> None:
    """Queue every key at once, as a terminal read holding them all would."""
    for key in keys:
        app.post_message(events.Key(key, _CHARACTERS.get(key, key)))


async def test_slash_then_a_pid_then_enter_in_one_burst_filters_by_that_pid() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        burst(app, "slash", "2", "0", "4", "enter")
        await pilot.pause()
        await pilot.pause()
        assert app.main.panel.filter.text == "204"
        assert app.main.panel.filter.gpu is None, "the digits went to the GPU keys instead of the filter box"
        assert app.processes.pids() == [204]
        assert app.focused is app.processes


async def test_filter_enter_k_enter_in_one_burst_signals_the_filtered_process() -> None:
    source = RecordingSource()
    app = make_app(source)
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        burst(app, "slash", "2", "0", "4", "enter", "k")
        await pilot.pause()
        await pilot.pause()
        assert app.main.panel.filter.text == "204", "k went into the filter box"
        assert isinstance(app.screen, KillScreen)
        burst(app, "enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert [(identity[0], number) for identity, number in source.sent] == [(204, SIGTERM)]


async def test_keys_read_before_the_main_screen_listens_are_acted_on_in_order_once_it_does() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        app.early_keys = EarlyKeys()  # as at start: the main screen not ready yet
        burst(app, "slash", "2", "0", "4", "enter", "enter")
        await pilot.pause()
        shown = app.main.panel.filter
        assert shown.text == "" and shown.gpu is None, "a key acted before the screen was ready"
        # Ready (as the app's start does): the keys held, then one read after them.
        app.call_later(app.early_keys.release, app.on_event)
        burst(app, "k")
        for _ in range(4):
            await pilot.pause()
        assert app.main.panel.filter.text == "204" and app.main.panel.filter.gpu is None
        # / 204 Enter filtered, Enter opened the process, k asked to signal it there.
        assert [type(screen) for screen in app.screen_stack] == [MainScreen, ProcessScreen, KillScreen]
        assert app.screen_stack[1].identity[0] == 204


def test_what_was_typed_while_gputop_waited_on_the_driver_is_the_keys_textual_reads_from_it() -> None:
    from textual._xterm_parser import XTermParser  # Textual's own reading of the terminal, to compare with

    typed = "N/4121\r\x1b[A\x1b[B\x1bOP\x1b[17~\x1b[21~\x1b[5~\x1b[6~\x1b[H\x1b[F\tI<> \x7f\x0c\x1b[Zué"
    parser = XTermParser()
    textuals = [(event.key, event.character) for event in [*parser.feed(typed), *parser.feed("")]]

    keys = [(key.key, key.character) for key in typed_keys(typed.encode())]

    assert keys == textuals
    assert keys[:7] == [("N", "N"), ("slash", "/"), ("4", "4"), ("1", "1"), ("2", "2"), ("1", "1"), ("enter", "\r")]


async def test_enter_typed_before_gputop_took_the_terminal_is_enter() -> None:
    # `/bob` Enter typed 0.1 s after start reached gputop as "/bob\n" (the terminal still in its line mode,
    # which turns Enter into a line feed): Enter was read as ctrl+j, and the filter box stayed open.
    early = EarlyKeys(typed_keys(b"/b\n"))
    assert early.hold(events.Key("o", "o")) and early.hold(events.Key("ctrl+j", "\n"))
    released: list[tuple[str, str | None]] = []

    async def dispatch(key: events.Key | events.Paste) -> None:
        assert isinstance(key, events.Key)
        released.append((key.key, key.character))

    await early.release(dispatch)

    assert released == [("slash", "/"), ("b", "b"), ("enter", "\r"), ("o", "o"), ("enter", "\r")]
