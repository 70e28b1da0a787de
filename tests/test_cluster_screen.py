"""The cluster view's keys live on the screen they act on: the host list's on the fleet screen, q everywhere."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Static

from gputop.core.cluster.client import PrometheusError
from gputop.ui.cluster.gpu_list import GpuListScreen
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.view import ClusterApp

from .test_cluster_view import URL, FakeReader, make_app, row_order, started, text_of, until


async def filling_gpus(app: ClusterApp, pilot: Pilot[int]) -> GpuListScreen:
    """``f`` on the fleet screen: the filling GPUs' screen, once they are read."""
    await pilot.press("f")
    screen = app.screen
    assert isinstance(screen, GpuListScreen)
    await until(pilot, lambda: bool(screen.gpus))
    return screen


async def test_the_fleet_s_keys_do_not_act_on_the_hidden_list_from_a_host_or_a_count_s_gpus() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("down", "enter")
        host = app.screen
        assert isinstance(host, HostScreen) and host.hostname == "gpu-b"
        # A filter, a sort, a count's GPUs and the owners are the fleet screen's: none opens or changes here.
        await pilot.press("slash", "M", "f", "o")
        assert app.screen is host and len(app.screen_stack) == 2
        await pilot.press("escape")
        assert not isinstance(app.screen, HostScreen)
        assert text_of(app, ".keys").startswith("Enter host")  # not typing a filter
        assert text_of(app, "#filter") == "/ filter hostnames: text, or re:REGEX"
        assert "sort: host ↑" in text_of(app, "#status") and row_order(app) == ["gpu-a", "gpu-b", "node-c"]
        gpus = await filling_gpus(app, pilot)
        await pilot.press("i")  # another count's key: the fleet screen's, not this one's
        assert app.screen is gpus and len(app.screen_stack) == 2
        await pilot.press("q")  # the app's: it quits from any screen
        await pilot.pause()
    assert app.return_code == 0


async def test_enter_on_a_count_s_gpu_opens_its_host_which_reads_its_detail() -> None:
    reader = FakeReader()
    app = make_app(reader)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await filling_gpus(app, pilot)
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, HostScreen))
        host = app.screen
        assert isinstance(host, HostScreen) and host.hostname == "gpu-b" and len(app.screen_stack) == 2
        await until(pilot, lambda: host.detail is not None)
        assert reader.details == ["gpu-b"]
        await pilot.press("escape")
        assert not isinstance(app.screen, (HostScreen, GpuListScreen))


async def test_a_host_s_screen_follows_the_refreshes_it_is_handed_a_failure_then_the_answer() -> None:
    reader = FakeReader()
    app = make_app(reader, interval_s=0.1)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("down", "enter")
        host = app.screen
        assert isinstance(host, HostScreen)
        await until(pilot, lambda: host.detail is not None)
        title = host.query_one("#host-title", Static)
        reader.failure = PrometheusError("connection refused", "unreachable")
        await until(pilot, lambda: "unreachable" in str(title.render()))
        assert str(title.render()).startswith(f"Prometheus unreachable at {URL}: connection refused — retrying in ")
        asked = len(reader.details)
        reader.failure = None
        # The next refresh brings the host's detail (asked with it, not read apart).
        await until(pilot, lambda: str(title.render()).startswith("Host gpu-b  live  gputop 0.1.0"), timeout_s=10)
        assert reader.calls[-1][1] == "gpu-b" and len(reader.details) == asked
