"""F1 names the network interfaces the host strip's NET counts; with none, NET says so instead of 0."""

from __future__ import annotations

from dataclasses import replace

from textual.widgets import Static

from gputop.ui.screens.help import HelpScreen

from .factory import HOST, gpu, make_app, proc, snapshot


async def test_f1_names_the_interfaces_net_counts_and_none_reads_no_nic() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        counted = snapshot(gpu(0, [proc(101, 0, 10)]))
        app.apply_snapshot(replace(counted, host=replace(HOST, net_interfaces=("eno1", "eno2"))))
        await pilot.pause()
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        notes = str(app.screen.query_one("#help-notes", Static).render())
        assert notes.splitlines()[-1] == (
            "NET counts eno1, eno2; the setting net_interfaces (docs/settings.md) chooses others"
            " (default: those with a device behind them)."
        )
        await pilot.press("escape")
        app.apply_snapshot(replace(counted, host=replace(HOST, net_interfaces=(), net_rx_rate=None, net_tx_rate=None)))
        await pilot.pause()
        strip = app.screen.query_one("#host-strip")
        assert strip.render_line(0).text.rstrip().endswith("NET no NIC")
