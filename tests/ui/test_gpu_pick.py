"""GPUs 10 and up: # lists every GPU, digits for GPUs that do not exist are refused in words,
and the card of the GPU the panel is filtered to is marked."""

from __future__ import annotations

import pytest
from rich.text import Text

from gputop.ui.app import GpuTopApp
from gputop.ui.screens.gpu_pick import GpuPickScreen
from gputop.ui.widgets.gpu_card import GpuCard

from .factory import demo_snapshots, make_app, notices, screen_text, two_gpu_snapshot

SIXTEEN = demo_snapshots(16, 3)


def marked(app: GpuTopApp) -> list[int]:
    return [card.index for card in app.query(GpuCard) if card.has_class("-filtered")]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_hash_lists_every_gpu_and_picks_gpu_12(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        for snapshot in SIXTEEN:
            app.apply_snapshot(snapshot)
        await pilot.pause()
        await pilot.press("number_sign")
        assert isinstance(app.screen, GpuPickScreen)
        assert "Show processes of GPU" in screen_text(app)
        assert len(app.screen.options) == 17  # "all" and 16 GPUs
        await pilot.press(*["down"] * 13, "enter")
        assert app.main.panel.filter.gpu == 12 and marked(app) == [12]
        assert {row.process.gpu_index for row in app.processes.rows} <= {12}
        assert "filter: GPU 12" in screen_text(app)
        card = app.query_one("#gpu-12", GpuCard)
        index = next(iter(card.render_line(0)))  # the first piece the card draws
        assert index.text == "12" and index.style is not None and index.style.reverse
        await pilot.press("a")
        assert app.main.panel.filter.gpu is None and marked(app) == []


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_digit_for_a_gpu_that_does_not_exist_is_refused_in_words(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(two_gpu_snapshot())
        await pilot.pause()
        await pilot.press("7")
        assert notices(app) == ["there is no GPU 7: this machine has GPUs 0-1 (# lists them)"]
        assert app.main.panel.filter.gpu is None and len(app.processes.rows) == 5
        await pilot.press("1")
        assert app.main.panel.filter.gpu == 1 and marked(app) == [1]
        title = app.query_one("#gpu-1", GpuCard)._titles[0]
        assert isinstance(title, Text) and title.plain.startswith(" 1 ")
        assert "reverse" in str(title.get_style_at_offset(app.console, 1))
        await pilot.press("escape")
        assert marked(app) == []
