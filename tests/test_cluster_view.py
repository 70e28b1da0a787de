"""The cluster view with a hand-made cluster: sorting, the host filter, the host screen, errors, staleness."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static

from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.model import ClusterGpu, ClusterHost, ClusterOptions, ClusterProcess, ClusterState
from gputop.ui.cluster.app import ClusterApp
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.render import sparkline

GIB = 1024**3
URL = "http://prometheus.test:9090"
NOW = 1_700_000_000.0


def gpu(host: str, index: int, used_gib: float, temperature: float, utilization: float) -> ClusterGpu:
    return ClusterGpu(
        hostname=host,
        index=index,
        flavour="gputop",
        name="NVIDIA H100 80GB HBM3",
        memory_total=80 * GIB,
        memory_used=used_gib * GIB,
        temperature=temperature,
        utilization_gpu=utilization,
        power_draw=300.0,
        last_sample=NOW - 1,
    )


def host(name: str, *gpus: ClusterGpu, stale: bool = False, age_s: float = 1.0) -> ClusterHost:
    return ClusterHost(hostname=name, gpus=gpus, stale=stale, last_sample=NOW - age_s, age_s=age_s, down=stale)


HOSTS = (
    host("gpu-a", gpu("gpu-a", 0, 10, 50, 20), gpu("gpu-a", 1, 20, 55, 40)),  # fullest 25%, hottest 55
    host("gpu-b", gpu("gpu-b", 0, 72, 40, 90)),  # 90%, 40
    host("node-c", gpu("node-c", 0, 40, 81, 60), stale=True, age_s=42),  # 50%, 81
)
PROCESSES = (
    ClusterProcess("gpu-b", 0, 4242, "alice", "python", "k8s:pod-1", 70 * GIB),
    ClusterProcess("gpu-b", 0, 4343, "mallory", "evil\x1b[31mname", None, 1 * GIB),
)


class FakeReader:
    """Answers like ClusterReader, from hand-made hosts; ``failure`` makes every fetch fail."""

    def __init__(self, hosts: tuple[ClusterHost, ...] = HOSTS) -> None:
        self.hosts = hosts
        self.failure: PrometheusError | None = None
        self.calls: list[str | None] = []

    def fetch(self, processes_for: str | None = None) -> ClusterState:
        self.calls.append(processes_for)
        if self.failure is not None:
            raise self.failure
        processes = tuple(p for p in PROCESSES if p.hostname == processes_for)
        return ClusterState(URL, self.hosts, processes_for, processes)


def make_app(reader: FakeReader, interval_s: float = 60.0) -> ClusterApp:
    return ClusterApp(ClusterOptions.create(URL, interval_s=interval_s), reader=reader)


async def until(pilot: Pilot[int], condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    """Let the app run until ``condition`` holds; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


def row_order(app: ClusterApp) -> list[str]:
    table: DataTable[Text] = app.query_one("#hosts", DataTable)
    return [str(row.key.value) for row in table.ordered_rows]


def cell(app: ClusterApp, hostname: str, column: str) -> str:
    table: DataTable[Text] = app.query_one("#hosts", DataTable)
    return str(table.get_cell(hostname, column))


def status_text(app: ClusterApp) -> str:
    return str(app.query_one("#status", Static).render())


async def test_hosts_are_listed_by_name_with_a_line_per_gpu() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]
        assert cell(app, "gpu-a", "GPU") == "0\n1"
        assert cell(app, "gpu-a", "Used/Total") == "10.0GiB/80.0GiB\n20.0GiB/80.0GiB"
        assert cell(app, "gpu-a", "Temp") == "50°C\n55°C"
        assert cell(app, "gpu-b", "Util") == "90%"
        assert cell(app, "gpu-b", "Memory") == "█" * 11 + "░" + "  90%"
        assert cell(app, "gpu-a", "Status") == "live"
        assert "3 hosts, 4 GPUs, 1 stale" in status_text(app)


async def test_a_stale_host_shows_the_age_of_its_last_sample() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        assert cell(app, "node-c", "Status") == "stale 42s"


async def test_pressing_m_sorts_by_gpu_memory_largest_first_and_i_inverts() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("M")
        assert row_order(app) == ["gpu-b", "node-c", "gpu-a"]
        assert "sort: memory ↓" in status_text(app)
        await pilot.press("I")
        assert row_order(app) == ["gpu-a", "node-c", "gpu-b"]
        assert "sort: memory ↑" in status_text(app)


async def test_pressing_t_sorts_by_temperature_hottest_first() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("T")
        assert row_order(app) == ["node-c", "gpu-a", "gpu-b"]


async def test_angle_brackets_step_through_the_sort_columns() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("greater_than_sign")  # host -> memory
        assert row_order(app) == ["gpu-b", "node-c", "gpu-a"]
        await pilot.press("greater_than_sign")  # memory -> utilization (gpu-a averages 30%)
        assert row_order(app) == ["gpu-b", "node-c", "gpu-a"]
        assert "sort: utilization ↓" in status_text(app)
        await pilot.press("less_than_sign", "less_than_sign")  # back to host
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]


async def test_the_filter_matches_plain_text_anywhere_ignoring_case() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash")
        assert app.query_one("#filter", Input).has_focus
        await pilot.press(*"GPU-")
        assert row_order(app) == ["gpu-a", "gpu-b"]
        await pilot.press("enter")
        assert app.query_one("#hosts", DataTable).has_focus
        assert row_order(app) == ["gpu-a", "gpu-b"]


async def test_an_invalid_regex_shows_its_error_and_keeps_the_last_good_filter() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"re:^node")
        assert row_order(app) == ["node-c"]
        await pilot.press(*"(")
        error = app.query_one("#filter-error", Static)
        assert error.display
        assert str(error.render()) == "invalid regex: missing ), unterminated subpattern at position 5"
        assert row_order(app) == ["node-c"]
        await pilot.press("backspace")
        assert not error.display


async def test_escape_clears_the_filter() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("slash", *"re:^gpu-b$")
        assert row_order(app) == ["gpu-b"]
        await pilot.press("escape")
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]
        assert not app.query_one("#filter", Input).display
        assert app.query_one("#hosts", DataTable).has_focus


async def test_enter_on_a_host_shows_its_gpus_and_processes() -> None:
    reader = FakeReader()
    app = make_app(reader)
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, HostScreen) and app.screen.hostname == "gpu-b"
        assert reader.calls[-1] == "gpu-b"  # fetched at once, with the host's processes
        processes: DataTable[str] = app.screen.query_one("#processes", DataTable)
        rows = [[str(c) for c in processes.get_row(row.key)] for row in processes.ordered_rows]
        assert rows == [
            ["0", "4242", "alice", "python", "k8s:pod-1", "70.0GiB"],
            ["0", "4343", "mallory", "evil\\x1b[31mname", "N/A", "1.0GiB"],
        ]
        gpus: DataTable[str] = app.screen.query_one("#gpus", DataTable)
        assert gpus.row_count == 1
        await pilot.press("escape")
        assert not isinstance(app.screen, HostScreen)


async def test_an_unreachable_prometheus_is_reported_and_retried_each_interval() -> None:
    reader = FakeReader()
    reader.failure = PrometheusError("connection refused", unreachable=True)
    app = make_app(reader, interval_s=0.1)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "unreachable" in status_text(app))
        assert status_text(app).endswith(f"Prometheus unreachable at {URL}: connection refused — retrying")
        await until(pilot, lambda: len(reader.calls) >= 3)
        reader.failure = None
        await until(pilot, lambda: "unreachable" not in status_text(app))
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]


async def test_q_quits() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


def test_sparkline_scales_to_the_gpu_memory_and_leaves_gaps_blank() -> None:
    assert sparkline([0.0, 40.0, None, 80.0], maximum=80.0, width=4) == "▁▅ █"
    assert sparkline([10.0, 20.0, 30.0, 40.0], maximum=40.0, width=2) == "▅█"
    assert sparkline([], maximum=80.0) == ""
