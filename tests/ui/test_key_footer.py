"""The key footer: the bindings of what has the focus, rebuilt once for a burst of changes."""

from __future__ import annotations

from collections.abc import Iterator

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Footer, Static

from gputop.ui.widgets.key_footer import KeyFooter


class Left(Static, can_focus=True):
    BINDINGS = [Binding("l", "noop", "Left")]


class Right(Static, can_focus=True):
    BINDINGS = [Binding("r", "noop", "Right")]


class Panes(App[None]):
    BINDINGS = [Binding("q", "quit", "Quit")]
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, footer: type[Footer]) -> None:
        super().__init__()
        self.footer_type = footer
        self.builds = 0

    def compose(self) -> ComposeResult:
        app = self

        class Counted(self.footer_type):  # type: ignore[name-defined,misc]
            def compose(self) -> Iterator[Widget]:
                app.builds += 1
                yield from super().compose()

        yield Left("left", id="left")
        yield Right("right", id="right")
        yield Counted()

    def shown(self) -> list[str]:
        return [str(key.description) for key in self.query("FooterKey")]


async def burst(footer: type[Footer]) -> tuple[int, list[str]]:
    """Rebuilds for three focus changes made between two frames, and the keys shown after them."""
    app = Panes(footer)
    async with app.run_test() as pilot:
        left, right = app.query_one("#left"), app.query_one("#right")
        left.focus()
        await pilot.pause()
        assert app.shown() == ["Left", "Quit"]
        before = app.builds
        app.screen.set_focus(right)
        app.screen.set_focus(left)
        app.screen.set_focus(right)
        await pilot.pause()
        return app.builds - before, app.shown()


async def test_a_burst_of_binding_changes_rebuilds_the_footer_once_more_with_the_last_bindings() -> None:
    ours, shown = await burst(KeyFooter)
    theirs, shown_by_textual = await burst(Footer)
    assert shown == shown_by_textual == ["Right", "Quit"]
    # Textual's Footer rebuilds for each change; this one for the changes made before it is drawn
    # once, then for those that come after (the focus events themselves).
    assert ours <= 2 < theirs


async def test_bindings_asked_for_again_unchanged_do_not_rebuild_the_footer_and_a_change_still_does() -> None:
    app = Panes(KeyFooter)
    async with app.run_test() as pilot:
        left, right = app.query_one("#left"), app.query_one("#right")
        left.focus()
        await pilot.pause()
        await pilot.pause()
        before = app.builds
        for _ in range(3):  # as Textual does after each focus change, and the app's own key checks
            app.screen.refresh_bindings()
            await pilot.pause()
        assert app.builds == before
        assert app.shown() == ["Left", "Quit"]
        right.focus()
        await pilot.pause()
        await pilot.pause()
        assert app.builds > before
        assert app.shown() == ["Right", "Quit"]
