"""The cluster view on a hand-made cluster: rows, sorting, the filter, the host screen, a slow or failing Prometheus."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection
from dataclasses import replace

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from gputop.core.cluster.client import PrometheusError
from gputop.core.cluster.first import FirstRefresh, Partial
from gputop.core.cluster.model import (
    ClusterGpu,
    ClusterHost,
    ClusterOptions,
    ClusterProcess,
    ClusterState,
    CountValue,
    GpuFinding,
    HostDetail,
)
from gputop.core.cluster.pacing import Pacer
from gputop.ui.cluster import host_list as host_list_module
from gputop.ui.cluster.gpu_list import GpuListScreen
from gputop.ui.cluster.host_screen import HostScreen
from gputop.ui.cluster.render import BAR_WIDTH, level_style
from gputop.ui.cluster.view import ClusterApp
from gputop.ui.widgets.sparkline import bar, sparkline

GIB = 1024**3
URL = "http://prometheus.test:9090"
NOW = 1_700_000_000.0  # the view's clock: ages are counted against it


def host(
    name: str,
    percent: float,
    temperature: float,
    utilization: float,
    state: str = "live",
    age_s: float = 1.0,
    problems: int | None = 0,
) -> ClusterHost:
    return ClusterHost(
        hostname=name,
        flavour="gputop",
        state=state,  # type: ignore[arg-type]
        gpus=2,
        model="NVIDIA H100 80GB HBM3",
        memory_used=percent / 100 * 80 * GIB,
        memory_total=160 * GIB,
        memory_percent=percent,
        utilization=utilization,
        temperature=temperature,
        power_draw=600.0,
        problems=problems,
        last_sample=NOW - age_s,
    )


def three_hosts() -> tuple[ClusterHost, ...]:
    """Hosts whose figures were taken 1 s (42 s for the stale one) before now."""
    return (
        host("gpu-a", 25, 55, 30),
        host("gpu-b", 90, 40, 90, problems=3),
        host("node-c", 50, 81, 60, state="stale", age_s=42, problems=None),
    )
COUNTS = (
    CountValue("f", "filling", 1),
    CountValue("h", "hot", 0),
    CountValue("l", "lost", 0),
    CountValue("i", "idle-hogged", None),
    CountValue("u", "unhealthy", None),
)
DETAIL = HostDetail(
    hostname="gpu-b",
    live=True,
    gpus=(
        ClusterGpu(
            index=0,
            uuid="GPU-b0",
            name="NVIDIA H100 80GB HBM3",
            figures={"memory_used": 72 * GIB, "memory_total": 80 * GIB},
            problems={"idle": 1, "health": 2},
        ),
        ClusterGpu(index=1, uuid="GPU-b1", name="NVIDIA H100 80GB HBM3", lost=True),
        ClusterGpu(index=2, uuid="GPU-b2", name="NVIDIA H100 80GB HBM3", answering=False),
    ),
    processes=(
        ClusterProcess(
            hostname="gpu-b",
            gpu_index=0,
            pid=4242,
            user="alice",
            command="python",
            container="k8s:pod-1",
            gpu_memory=70 * GIB,
        ),
        ClusterProcess(
            hostname="gpu-b",
            gpu_index=0,
            pid=4343,
            user="mallory",
            command="evil\x1b[31mname",
            container=None,
            gpu_memory=1 * GIB,
        ),
    ),
    exporter_up=True,
    sample_errors=0.0,
    info={"version": "0.1.0", "source": "nvml", "driver_version": "560.35.03", "cuda_driver_version": "12.6"},
)


class FakeReader:
    """Answers like ClusterReader, from hand-made hosts; ``failure`` makes every fetch fail."""

    def __init__(
        self,
        hosts: tuple[ClusterHost, ...] | None = None,
        duration_s: float = 0.01,
        history: tuple[float | None, ...] = (10 * GIB, None, 160 * GIB),
    ) -> None:
        self.hosts = hosts or three_hosts()
        self.memory_history = history
        self.duration_s = duration_s
        self.failure: PrometheusError | None = None
        self.calls: list[tuple[list[str], str | None]] = []
        self.details: list[str] = []
        self.timeouts: list[float | None] = []

    def fetch(
        self,
        history_for: Collection[str] = (),
        detail_for: str | None = None,
        timeout_s: float | None = None,
        partial: Partial | None = None,
    ) -> ClusterState:
        self.calls.append((list(history_for), detail_for))
        self.timeouts.append(timeout_s)
        if self.failure is not None:
            raise self.failure
        history = self.history(history_for)
        detail = DETAIL if detail_for == "gpu-b" else None
        return ClusterState(
            url=URL, at=NOW, duration_s=self.duration_s, hosts=self.hosts, counts=COUNTS, history=history, detail=detail
        )

    def history(self, hostnames: Collection[str]) -> dict[str, tuple[float | None, ...]]:
        return {name: self.memory_history for name in hostnames}

    def detail(self, hostname: str) -> HostDetail:
        self.details.append(hostname)
        return DETAIL

    def gpus(self, key: str) -> tuple[GpuFinding, ...]:
        return (GpuFinding("gpu-b", 0, 3600.0),)


def make_app(reader: FakeReader, interval_s: float = 60.0) -> ClusterApp:
    return ClusterApp(ClusterOptions.create(URL, interval_s=interval_s), reader=reader, clock=lambda: NOW)


async def until(pilot: Pilot[int], condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    """Let the app run until ``condition`` holds; fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


def row_order(app: ClusterApp) -> list[str]:
    return [h.hostname for h in app.fleet.host_list.hosts]


def rows(app: ClusterApp) -> list[str]:
    return [app.fleet.host_list.line(i).plain.rstrip() for i in range(len(app.fleet.host_list.hosts))]


def text_of(app: ClusterApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def started(app: ClusterApp, pilot: Pilot[int]) -> None:
    await until(pilot, lambda: app.state is not None)


async def test_a_line_per_host_with_its_summary_and_the_fleet_line_above() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: len(app.fleet.host_list.history) == 3)
        assert rows(app) == [
            " gpu-a                live          2 NVIDIA H100 80GB HB… ██▌░░░░░░░  25%  20.0GiB/160.0GiB  30%  55°C"
            "   600W        0                  ▁ █",
            " gpu-b                live          2 NVIDIA H100 80GB HB… █████████░  90%  72.0GiB/160.0GiB  90%  40°C"
            "   600W        3                  ▁ █",
            " node-c               stale 42s     2 NVIDIA H100 80GB HB… █████░░░░░  50%  40.0GiB/160.0GiB  60%  81°C"
            "   600W      N/A                  ▁ █",
        ]
        assert text_of(app, "#summary") == (
            "Hosts 2 live · 1 stale · 0 down   GPUs 6   memory 132.0GiB/480.0GiB   filling 1 [f]   hot 0 [h]"
            "   lost 0 [l]   idle-hogged N/A [i]   unhealthy N/A [u]"
        )
        assert text_of(app, "#status").endswith("Prometheus answered in 0.01s")


async def test_pressing_m_sorts_by_the_fullest_gpu_and_i_inverts_without_asking_prometheus() -> None:
    reader = FakeReader()
    app = make_app(reader)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        asked = len(reader.calls)
        await pilot.press("M")
        assert row_order(app) == ["gpu-b", "node-c", "gpu-a"]
        assert "sort: memory ↓" in text_of(app, "#status")
        # The screen shows the new order, sorted from the hosts already here.
        drawn = [app.fleet.host_list.render_line(y).text.split()[0] for y in (1, 2, 3)]
        assert drawn == ["gpu-b", "node-c", "gpu-a"]
        await pilot.press("I")
        assert row_order(app) == ["gpu-a", "node-c", "gpu-b"]
        assert "sort: memory ↑" in text_of(app, "#status")
        await pilot.press("slash", "g", "escape")
        assert len(reader.calls) == asked


class HeldReader(FakeReader):
    """A first refresh whose hosts answer at once and whose other figures wait until ``release`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def fetch(
        self,
        history_for: Collection[str] = (),
        detail_for: str | None = None,
        timeout_s: float | None = None,
        partial: Partial | None = None,
    ) -> ClusterState:
        if partial is not None:
            bare = tuple(replace(h, memory_used=None, memory_total=None, memory_percent=None) for h in self.hosts)
            pending = frozenset(("memory_used", "memory_total", "memory_percent", "count:f", "count:h"))
            partial(ClusterState(url=URL, at=NOW, duration_s=0.01, hosts=bare, counts=COUNTS, pending=pending))
            assert self.release.wait(10), "never released"
        return super().fetch(history_for, detail_for, timeout_s)


async def test_the_first_rows_show_before_the_slower_figures_have_answered_which_say_they_are_being_read() -> None:
    reader = HeldReader()
    # As ``gputop cluster`` starts it: the first refresh asked before the view was built.
    app = ClusterApp(
        ClusterOptions.create(URL, interval_s=60), reader=reader, clock=lambda: NOW, first=FirstRefresh(reader, 40)
    )
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: len(app.fleet.host_list.hosts) == 3)
        # What has answered is shown; memory, not in yet, says it is being read (not N/A).
        assert rows(app) == [
            " gpu-a                live          2 NVIDIA H100 80GB HB… …                               …  30%  55°C"
            "   600W        0",
            " gpu-b                live          2 NVIDIA H100 80GB HB… …                               …  90%  40°C"
            "   600W        3",
            " node-c               stale 42s     2 NVIDIA H100 80GB HB… …                               …  60%  81°C"
            "   600W      N/A",
        ]
        assert text_of(app, "#summary").startswith("Hosts 2 live · 1 stale · 0 down   GPUs 6   memory …   filling …")
        assert "lost 0 [l]" in text_of(app, "#summary")
        reader.release.set()
        await until(pilot, lambda: app.state is not None and not app.state.pending)
        assert rows(app)[1][:97] == (
            " gpu-b                live          2 NVIDIA H100 80GB HB… █████████░  90%  72.0GiB/160.0GiB  90%"
        )
        assert text_of(app, "#summary").startswith("Hosts 2 live · 1 stale · 0 down   GPUs 6   memory 132.0GiB")


async def test_t_sorts_hottest_first_and_angle_brackets_step_through_the_columns() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("T")
        assert row_order(app) == ["node-c", "gpu-a", "gpu-b"]
        await pilot.press("less_than_sign")  # temperature -> utilization
        assert row_order(app) == ["gpu-b", "node-c", "gpu-a"]
        assert "sort: utilization ↓" in text_of(app, "#status")
        await pilot.press("less_than_sign", "less_than_sign")  # -> memory -> host
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]


async def test_pressing_p_sorts_by_problems_most_first_hosts_that_do_not_say_last() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("P")
        assert row_order(app) == ["gpu-b", "gpu-a", "node-c"]
        assert "sort: problems ↓" in text_of(app, "#status")


async def test_the_cursor_stays_on_its_host_when_the_order_changes() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("down")
        assert app.fleet.host_list.selected is not None and app.fleet.host_list.selected.hostname == "gpu-b"
        await pilot.press("M")
        assert app.fleet.host_list.cursor == 0 and app.fleet.host_list.selected.hostname == "gpu-b"


async def test_the_filter_matches_text_anywhere_a_bad_regex_keeps_the_last_good_one_escape_clears() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        assert text_of(app, "#filter") == "/ filter hostnames: text, or re:REGEX"
        await pilot.press("slash")
        assert text_of(app, "#filter") == "filter: ▏"
        assert text_of(app, ".keys").startswith("Enter keep the filter  Esc clear it")
        # M, q, i… are letters of the filter while it is typed, not the app's keys.
        await pilot.press(*"GPU-")
        assert row_order(app) == ["gpu-a", "gpu-b"] and text_of(app, "#filter") == "filter: GPU-▏"
        await pilot.press("backspace", "backspace", "backspace", "backspace", *"pu-")
        assert row_order(app) == ["gpu-a", "gpu-b"]
        await pilot.press("enter")
        assert text_of(app, "#filter") == "filter: pu-" and text_of(app, ".keys").startswith("Enter host")
        await pilot.press("down")  # the list has had the keys all along
        assert app.fleet.host_list.has_focus and app.fleet.host_list.selected is not None
        assert app.fleet.host_list.selected.hostname == "gpu-b"
        await pilot.press("escape")
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]
        await pilot.press("slash", *"re:^node")
        assert row_order(app) == ["node-c"]
        await pilot.press("(")
        assert text_of(app, "#filter") == (
            "filter: re:^node(▏  invalid regex: missing ), unterminated subpattern at position 5"
        )
        assert row_order(app) == ["node-c"]
        await pilot.press("escape")
        assert row_order(app) == ["gpu-a", "gpu-b", "node-c"]
        assert text_of(app, "#filter") == "/ filter hostnames: text, or re:REGEX"
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0  # q is the app's again


async def test_enter_opens_the_host_at_once_with_its_gpus_and_processes() -> None:
    reader = FakeReader()
    app = make_app(reader)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("down", "enter")
        screen = app.screen
        assert isinstance(screen, HostScreen) and screen.hostname == "gpu-b"
        await until(pilot, lambda: screen.detail is not None)
        assert reader.details == ["gpu-b"]  # read at once, not at the next refresh a minute away
        assert str(screen.query_one("#host-title", Static).render()) == (
            "Host gpu-b  live  gputop 0.1.0 · nvml · driver 560.35.03 · CUDA 12.6"
        )
        processes: DataTable[str] = screen.query_one("#processes", DataTable)
        assert [[str(c) for c in processes.get_row(r.key)] for r in processes.ordered_rows] == [
            ["0", "4242", "alice", "python", "k8s:pod-1", "70.0GiB"],
            ["0", "4343", "mallory", "evil\\x1b[31mname", "N/A", "1.0GiB"],
        ]
        gpus: DataTable[str] = screen.query_one("#gpus", DataTable)
        assert [str(c) for c in gpus.get_row_at(0)][4:6] == ["72.0GiB/80.0GiB", "N/A"]
        assert [str(c) for c in gpus.get_row_at(0)][-2:] == ["idle 1 · health 2", ""]  # Problems; More: nothing more
        assert [str(gpus.get_row_at(row)[0]) for row in (1, 2)] == ["1 LOST", "2 NOT ANSWERING"]
        assert [str(c) for c in gpus.get_row_at(1)][-2:] == ["-", ""]
        await pilot.press("escape")
        assert not isinstance(app.screen, HostScreen)


async def test_a_hosts_processes_are_cut_in_the_middle_keeping_each_rank_in_view() -> None:
    command = "python -u train_llama_pretrain_with_fsdp.py --local-rank {} --config llama70b-fsdp-ac"
    ranks = tuple(
        ClusterProcess(hostname="gpu-b", gpu_index=rank, pid=500 + rank, user="alice", command=command.format(rank),
                       container=None, gpu_memory=10 * GIB)
        for rank in range(2)
    )

    class RanksReader(FakeReader):
        def detail(self, hostname: str) -> HostDetail:
            self.details.append(hostname)
            return replace(DETAIL, processes=ranks)

    app = make_app(RanksReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("down", "enter")
        screen = app.screen
        assert isinstance(screen, HostScreen)
        await until(pilot, lambda: screen.detail is not None)
        processes: DataTable[str] = screen.query_one("#processes", DataTable)
        assert [str(processes.get_row(r.key)[3]) for r in processes.ordered_rows] == [
            "python -u train_llama_pr…--local-rank 0…", "python -u train_llama_pr…--local-rank 1…"]


async def test_a_click_selects_a_host_and_a_double_click_opens_it() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.click("#hosts", offset=(5, 3))  # the header, then gpu-a, gpu-b, node-c
        assert app.fleet.host_list.selected is not None and app.fleet.host_list.selected.hostname == "node-c"
        assert not isinstance(app.screen, HostScreen)
        await pilot.click("#hosts", offset=(5, 2), times=2)
        assert isinstance(app.screen, HostScreen) and app.screen.hostname == "gpu-b"


async def test_a_count_key_lists_its_gpus_and_an_absent_count_says_what_it_needs() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("f")
        screen = app.screen
        assert isinstance(screen, GpuListScreen)
        await until(pilot, lambda: bool(screen.gpus))
        table: DataTable[str] = screen.query_one("#gpu-list", DataTable)
        assert [str(c) for c in table.get_row_at(0)] == ["gpu-b", "0", "1h00m"]
        await pilot.press("escape", "i")
        assert isinstance(app.screen, GpuListScreen)
        assert str(app.screen.query_one("#gpus-title", Static).render()) == (
            "GPUs idle-hogged: N/A — no exporter serves gputop_process_idle_seconds"
        )


async def test_an_unreachable_prometheus_turns_every_row_into_the_age_of_its_figures_and_backs_off() -> None:
    reader = FakeReader()
    app = make_app(reader, interval_s=0.1)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        reader.failure = PrometheusError("connection refused", "unreachable")
        await until(pilot, lambda: "unreachable" in text_of(app, "#status"))
        assert text_of(app, "#status").endswith(
            f"Prometheus unreachable at {URL}: connection refused — retrying in {app.next_delay_s:.2f}s"
        )
        assert [line[22:32].rstrip() for line in rows(app)] == ["1s old", "1s old", "42s old"]
        await until(pilot, lambda: "retrying in 0.80s" in text_of(app, "#status"))
        reader.failure = None
        await until(pilot, lambda: "unreachable" not in text_of(app, "#status"))
        assert [line[22:32].rstrip() for line in rows(app)] == ["live", "live", "stale 42s"]


async def test_a_slow_prometheus_is_shown_slow_with_its_time_and_asked_less_often() -> None:
    app = make_app(FakeReader(duration_s=0.3), interval_s=0.4)
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        assert text_of(app, "#status").endswith("Prometheus slow: its last answer took 0.30s — next refresh in 0.60s")


async def test_a_query_that_times_out_is_slow_not_unreachable() -> None:
    reader = FakeReader()
    reader.failure = PrometheusError("no answer within 5s", "slow")
    app = make_app(reader, interval_s=5)
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: "slow" in text_of(app, "#status"))
        assert text_of(app, "#status").endswith(f"Prometheus slow at {URL}: no answer within 5s — retrying in 10s")
        # The first refresh waited the longest limit (8 intervals): nothing was on screen yet.
        assert reader.timeouts[0] == 40


async def test_ten_thousand_hosts_draw_only_the_lines_on_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    many = tuple(host(f"node-{i:05d}", i % 100, 40 + i % 50, i % 90) for i in range(10_000))
    drawn: list[str] = []
    cells = host_list_module.host_cells

    def counting(host: ClusterHost, *args: object) -> object:
        drawn.append(host.hostname)
        return cells(host, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(host_list_module, "host_cells", counting)
    app = make_app(FakeReader(many))
    async with app.run_test(size=(160, 40)) as pilot:
        await started(app, pilot)
        ever: set[str] = set(drawn)
        for key in ("end", "M", "pageup"):
            await pilot.pause()
            shown_before = set(app.fleet.host_list.on_screen())
            drawn.clear()
            await pilot.press(key)
            await pilot.pause()
            ever |= set(drawn)
            shown = set(app.fleet.host_list.on_screen())
            # The new screenful is drawn (or was, and is the same); nothing off screen ever is.
            assert len(shown) == app.fleet.host_list.size.height - 1
            assert shown <= ever and set(drawn) <= shown | shown_before
            if key == "M":
                selected = app.fleet.host_list.selected
                assert selected is not None and selected.hostname == "node-09999"
        # A repaint with nothing changed (another screen closing, the focus moving) builds no line again.
        await until(pilot, lambda: all(h in app.fleet.host_list.history for h in app.fleet.host_list.on_screen()))
        await pilot.pause()
        drawn.clear()
        app.fleet.host_list.refresh()
        await pilot.pause()
        assert drawn == []


def test_backing_off_doubles_the_wait_up_to_eight_intervals_and_an_answer_resets_it() -> None:
    pacer = Pacer(interval_s=5, base_timeout_s=5)
    assert pacer.timeout_s == 40  # nothing on screen yet: the first answer may take its time
    assert [pacer.failed(too_slow=False) for _ in range(5)] == [10, 20, 40, 40, 40]
    assert pacer.timeout_s == 40  # unreachable is not slow: no longer wait for an answer
    assert pacer.answered(0.2) == 5 and not pacer.slow and pacer.timeout_s == 5
    assert pacer.answered(4.0) == 8.0 and pacer.slow and pacer.timeout_s == 8.0


def test_a_prometheus_too_slow_for_the_limit_gets_a_longer_one_each_time_up_to_eight_intervals() -> None:
    pacer = Pacer(interval_s=5, base_timeout_s=5)
    pacer.answered(1.0)
    assert pacer.timeout_s == 5
    for expected in (10, 20, 40, 40):
        pacer.failed(too_slow=True)
        assert pacer.timeout_s == expected
    pacer.answered(7.0)  # it answered, slowly: the next limit leaves it room, not the whole 40 s
    assert pacer.timeout_s == 14.0


async def test_q_quits() -> None:
    app = make_app(FakeReader())
    async with app.run_test(size=(160, 40)) as pilot:
        await pilot.press("q")
        await pilot.pause()
    assert app.return_code == 0


async def test_a_row_draws_its_memory_with_the_cards_bar_sparkline_and_colours() -> None:
    history = (0.0,) * 19 + (None, 80 * GIB, 160 * GIB)
    app = make_app(FakeReader(history=history))
    async with app.run_test(size=(160, 40)) as pilot:
        await until(pilot, lambda: len(app.fleet.host_list.history) == 3)
        line = app.fleet.host_list.line(1)  # gpu-b: its fullest GPU 90 % full
        cards_bar = bar(90.0, BAR_WIDTH, level_style(90.0))
        assert line.plain[59:74] == cards_bar.plain + "  90%"
        assert {span.style for span in line.spans if line.plain[span.start : span.end] == "█████████"} == {
            level_style(90.0)
        } == {"bold red"}
        # The newest 20 points, scaled to the host's 160 GiB, exactly as a card draws its memory.
        assert line.plain.rstrip().endswith(sparkline(history, 20, 0.0, 160 * GIB).rstrip())
        assert line.plain.rstrip()[-20:] == "▁" * 17 + " ▅█"
