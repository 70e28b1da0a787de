"""A card whose content did not change keeps its lines instead of building them again (issues 27, 36).

A card is handed its ``CardContent`` (built once a tick) and compares it, whole, with the last one,
with its width, form and filter mark; it builds its lines and titles again only when one of them differs,
and otherwise moves its sparklines on, keeping each line whose cells are the same (what they draw is
bounded by the sparklines' values, ``spark_windows`` here: the key these tests check). Over seeded random
runs that change one input at a time (each field of the GPU's sample, its history, forecasts, alerts,
diagnosis, the clock, the width, compact/full, the filter mark), the lines a card keeps or builds are
exactly the lines built afresh; a card shown each value of each field of a sample, one after the other,
draws what a new card draws (lines and titles); and each field a card shows changes its lines or titles
when it changes, so a shown field the comparison left out fails these tests.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import fields, replace
from unittest import mock

import pytest

from gputop.core.analysis.diagnosis import GpuDiagnosis
from gputop.core.analysis.diagnosis.health import HealthProblem
from gputop.core.analysis.diagnosis.memory import Unattributed
from gputop.core.analysis.forecast import Forecast
from gputop.core.analysis.history import History
from gputop.core.model import (
    Activity,
    Allocation,
    Energy,
    GpuHealth,
    GpuSample,
    MigSample,
    NvLink,
    XidEvent,
)
from gputop.ui.widgets import gpu_card as gpu_card_module
from gputop.ui.widgets.card_lines import (
    CardContent,
    card_titles,
    compact_lines,
    full_lines,
    spark_room,
)
from gputop.ui.widgets.gpu_card import GpuCard
from gputop.ui.widgets.styled_line import StyledLine

from .factory import GIB, NOW, StaticSource, gpu, make_app, proc, snapshot

P1, P2 = proc(101, 0, 1.0), proc(102, 1, 2.0)
MIG0 = MigSample(index=0, name="NVIDIA A100 MIG 3g.40gb", memory_total=40 * GIB, memory_used=GIB, processes=(P1,))
MIG1 = MigSample(index=1, name="NVIDIA A100 MIG 1g.10gb", memory_total=10 * GIB, memory_used=0)

# Values each field of a GPU's sample takes in the runs: every field, shown on a card or not.
CHOICES: dict[str, list[object]] = {
    "index": [0, 3, 11],
    "name": ["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", None],
    "uuid": ["GPU-0000", "GPU-1111", None],
    "pci_bus_id": ["00000000:01:00.0", "00000000:41:00.0", None],
    "lost": [False, True],
    "answering": [True, False],
    "not_answering_since": [None, NOW - 14, NOW - 130],
    "last_error": [None, "nvmlDeviceGetPowerUsage did not answer within 2s", "read failed: nvmlX: boom"],
    "read_failed": [False, True],
    "memory_total": [80 * GIB, 40 * GIB, None],
    "memory_used": [GIB // 2, 30 * GIB, 79 * GIB, None],
    "memory_free": [None, 10 * GIB],
    "memory_reserved": [None, GIB // 4],
    "utilization_gpu": [50.0, 97.0, 3.0, None],
    "utilization_memory": [25.0, 80.0, None],
    "utilization_encoder": [None, 0.0, 40.0],
    "utilization_decoder": [None, 0.0, 40.0],
    "temperature": [60.0, 85.0, 91.0, None],
    "temperature_slowdown": [87.0, 80.0, None],
    "temperature_shutdown": [92.0, 100.0, None],
    "memory_temperature": [None, 70.0],
    "fan_speed": [None, 30.0, 80.0],
    "power_draw": [300.0, 690.0, None],
    "power_limit": [700.0, 400.0, None],
    "clock_sm": [1500, 1980, None],
    "clock_memory": [None, 2619],
    "clock_sm_max": [None, 1980],
    "clock_memory_max": [None, 2619],
    "clock_event_reasons": [None, (), ("sw_thermal",)],
    "pstate": [0, 2, None],
    "pcie_rx": [None, 1e9, 2e9],
    "pcie_tx": [None, 1e9, 2e9],
    "pcie_link_gen": [None, 4, 5],
    "pcie_link_gen_max": [None, 5],
    "pcie_link_width": [None, 8, 16],
    "pcie_link_width_max": [None, 16],
    "pcie_replay_errors": [None, 0, 12],
    "activity": [
        None,
        Activity(sm_active=40.0, tensor_active=10.0, dram_active=60.0),
        Activity(sm_active=90.0, tensor_active=10.0, dram_active=60.0),
        Activity(sm_active=40.0, tensor_active=55.0, dram_active=5.0),
    ],
    "energy": [None, Energy(since_driver_load_j=1000.0, since_start_j=10.0), Energy(2000.0, 20.0)],
    "nvlink": [None, NvLink(version=4, links_active=18, links_total=18)],
    "mig_mode": [False, True, None],
    "health": [
        GpuHealth(),
        GpuHealth(xid_events=(XidEvent(code=79, time=NOW - 5),)),
        GpuHealth(xid_events=(XidEvent(code=48, time=NOW - 3),)),
        GpuHealth(ecc_uncorrected_volatile=2),
    ],
    "mig_devices": [
        (),
        (MIG0,),
        (MIG0, MIG1),
        (replace(MIG0, memory_used=30 * GIB),),
        (replace(MIG0, processes=(P1, P2)),),
        (replace(MIG0, name="NVIDIA A100 MIG 2g.20gb"),),
    ],
    "processes": [(), (P1,), (P1, P2), (replace(P1, cpu_percent=77.0),)],
    "allocation": [None, Allocation(namespace="ml", pod="train-0", container="main", resource="nvidia.com/gpu")],
    "processes_known": [True, False],
}

# The fields a card's lines show (its title's, such as the clocks and the fan, are not lines).
SHOWN = {
    "index", "name", "lost", "answering", "not_answering_since", "last_error", "read_failed",
    "memory_total", "memory_used", "utilization_gpu", "utilization_memory", "temperature",
    "temperature_slowdown", "temperature_shutdown", "power_draw", "power_limit", "activity",
    "mig_mode", "health", "mig_devices",
}

# Values each field of a MIG device takes, in the GPU's first MIG device; and those a card shows.
MIG_CHOICES: dict[str, list[object]] = {
    "index": [0, 5],
    "uuid": [None, "MIG-aaaa"],
    "name": ["NVIDIA A100 MIG 3g.40gb", "NVIDIA A100 MIG 2g.20gb", None],
    "gpu_instance_id": [None, 1, 2],
    "compute_instance_id": [None, 0, 1],
    "memory_total": [40 * GIB, 20 * GIB, None],
    "memory_used": [GIB, 30 * GIB, None],
    "memory_free": [None, 9 * GIB],
    "processes": [(), (P1,), (P1, P2)],
    "activity": [None, Activity(sm_active=20.0)],
    "allocation": [None, Allocation(namespace="ml", pod="t-1", container="main", resource="nvidia.com/mig-3g.40gb")],
    "processes_known": [True, False],
}
MIG_SHOWN = {"index", "name", "memory_total", "memory_used", "processes"}

FORECASTS = [
    None,
    Forecast(seconds_to_full=None, growth_rate=0.0),
    Forecast(seconds_to_full=300.0, growth_rate=1e6),
    Forecast(seconds_to_full=5000.0, growth_rate=1e5),
    Forecast(seconds_to_full=None, growth_rate=0.0, full=True),
]
UNATTRIBUTED = Unattributed(memory=0, shown=False)
DIAGNOSES = [
    None,
    GpuDiagnosis(verdict="stalled", limiting=(), unattributed=UNATTRIBUTED, health=(), new_ecc_errors=False),
    GpuDiagnosis(
        verdict="throttled", limiting=("sw_thermal",), unattributed=UNATTRIBUTED, health=(), new_ecc_errors=False
    ),
    GpuDiagnosis(
        verdict=None, limiting=(), unattributed=UNATTRIBUTED,
        health=(HealthProblem(key="ecc", since=NOW, text="2 uncorrected ECC errors"),), new_ecc_errors=True,
    ),
]
ALERTS = [(), ("memory",), ("thermal", "forecast")]
WIDTHS = [30, 44, 60, 90, 120]


def fresh(content: CardContent, width: int, compact: bool, filtered: bool) -> list[StyledLine]:
    """The card's lines built afresh, as a new card builds them: no sparklines kept, dimmed when silent."""
    lines = compact_lines(content, width, filtered) if compact else full_lines(content, width)
    if not content.gpu.answering:
        for line in lines:
            line.stylize("dim")
    return [line.fit(width) for line in lines]


def spark_windows(content: CardContent, width: int, compact: bool) -> tuple[object, ...] | None:
    """The values a card's sparklines draw (None: no history): a sparkline is a function of its last
    values (as many as it is wide, ``spark_room``) and its scale (the sample's, or the memory size the
    history last knew), not of the stamps. The card compares its sparklines as drawn; equal windows must
    draw equal cells, and these tests hold the card's lines to that bound."""
    history = content.history
    if history is None:
        return None
    room = spark_room(width, compact, content.gpu.answering)
    # Lists compare None by identity where the arrays behind them would not compare NaN equal.
    return (
        history.memory_total,
        window(history.memory_used, room),
        window(history.utilization, room),
        window(history.temperature, room),
        window(history.sm_active, room) if content.gpu.activity is not None else None,
    )


def window(values: Sequence[float | None] | Sequence[int | None], width: int) -> Sequence[object]:
    """The last ``width`` values: all a sparkline at most ``width`` cells wide draws."""
    return values[-width:] if width > 0 else ()


def key(content: CardContent, width: int, compact: bool, filtered: bool) -> tuple[object, ...]:
    """What a card compares before building its lines again: the content, width, form and filter mark,
    and the sparklines' values."""
    return (content, width, compact, filtered), spark_windows(content, width, compact)


def test_every_field_of_a_gpu_sample_is_changed_in_the_runs() -> None:
    # A field added to GpuSample must be added here: the runs then prove the key has it, or needs not.
    assert set(CHOICES) == {f.name for f in fields(GpuSample)}
    assert set(CHOICES) >= SHOWN
    assert set(MIG_CHOICES) == {f.name for f in fields(MigSample)}
    assert set(MIG_CHOICES) >= MIG_SHOWN


def base_gpus() -> list[GpuSample]:
    """Samples in which each shown field can be seen: a healthy GPU, one in MIG mode, a silent one, one
    whose read failed, a lost one."""
    healthy = replace(gpu(0, (P1,)), activity=CHOICES["activity"][1], fan_speed=40.0)  # type: ignore[arg-type]
    migs = gpu(1, migs=(MIG0, MIG1))
    silent = replace(healthy, answering=False, not_answering_since=NOW - 14, last_error="read failed: x: y")
    failed = replace(silent, read_failed=True)  # its error said instead of its silence's age
    lost = replace(healthy, lost=True, health=CHOICES["health"][1])  # type: ignore[arg-type]
    return [healthy, migs, silent, failed, lost]


def with_history(sample: GpuSample, ticks: int = 8) -> History:
    history = History(gpu_maxlen=40)
    for n in range(ticks):
        figures = replace(sample, utilization_gpu=10.0 * n, temperature=40.0 + 6 * n, lost=False, answering=True)
        history.add(snapshot(figures, timestamp=NOW - ticks + n))
    return history


def lines_change(base: GpuSample, other: GpuSample) -> bool:
    """Whether the lines of a card showing ``base`` change for ``other`` (full or compact, two widths),
    having checked that wherever they do, the key does too."""
    history = with_history(base).gpus[base.index]
    changed = False
    for width in (60, 120):
        for compact in (False, True):
            before = CardContent(base, history=history, now=NOW)
            after = CardContent(other, history=history, now=NOW)
            if fresh(before, width, compact, False) != fresh(after, width, compact, False):
                changed = True
                assert key(before, width, compact, False) != key(after, width, compact, False)
        if card_titles(before, False) != card_titles(after, False):
            assert key(before, width, False, False) != key(after, width, False, False)
    return changed


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_each_field_a_card_shows_changes_its_lines_and_key(name: str) -> None:
    changed = False
    for base in base_gpus():
        for value in CHOICES[name]:
            if value != getattr(base, name):
                changed |= lines_change(base, replace(base, **{name: value}))
    assert changed == (name in SHOWN), name


def shown(card: GpuCard, content: CardContent, width: int, compact: bool) -> list[StyledLine]:
    """What the card draws when handed ``content`` (its lines; its titles are ``card._titles``)."""
    card.content, card.compact = content, compact
    return card._make_lines(width)


@pytest.mark.parametrize("name", sorted(CHOICES))
def test_a_card_shown_each_value_of_a_field_in_turn_draws_what_a_new_card_draws(name: str) -> None:
    # The card compares the content it is given: a field it shows but left out of that comparison would
    # leave the card drawing the value before (issue 36: no hand-listed key to forget a field in).
    for base in base_gpus():
        history = with_history(base).gpus[base.index]
        for compact in (False, True):
            card = GpuCard(base.index)
            shown(card, CardContent(base, history=history, now=NOW), 90, compact)
            for value in [*CHOICES[name], getattr(base, name)]:
                content = CardContent(replace(base, **{name: value}), history=history, now=NOW)
                assert shown(card, content, 90, compact) == fresh(content, 90, compact, False), (name, value)
                if not compact:
                    assert card._titles == card_titles(content, False), (name, value)


@pytest.mark.parametrize("name", sorted(MIG_CHOICES))
def test_each_field_of_a_mig_device_the_card_shows_changes_its_lines_and_key(name: str) -> None:
    base = base_gpus()[1]
    first = base.mig_devices[0]
    changed = False
    for value in MIG_CHOICES[name]:
        if value != getattr(first, name):
            other = replace(base, mig_devices=(replace(first, **{name: value}), *base.mig_devices[1:]))
            changed |= lines_change(base, other)
    assert changed == (name in MIG_SHOWN), name


@pytest.mark.parametrize(
    "change",
    [
        {"memory_used": 70 * GIB},
        {"utilization_gpu": 99.0},
        {"temperature": 88.0},
        {"activity": Activity(sm_active=95.0, tensor_active=10.0, dram_active=60.0)},
    ],
)
def test_the_newest_value_of_each_sparkline_changes_the_key(change: dict[str, object]) -> None:
    base = base_gpus()[0]  # with GPM activity: four sparklines
    histories = []
    for last in (base, replace(base, **change)):
        history = History(gpu_maxlen=40)
        for n in range(59):
            history.add(snapshot(base, timestamp=NOW + n))
        history.add(snapshot(last, timestamp=NOW + 59))
        histories.append(history.gpus[0])
    # The same sample on the card (the newest one in the bars and figures): only a sparkline differs.
    before, after = (CardContent(base, history=history, now=NOW) for history in histories)
    assert fresh(before, 60, False, False) != fresh(after, 60, False, False)
    assert key(before, 60, False, False) != key(after, 60, False, False)


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("silent", [False, True])
def test_no_sparkline_draws_a_value_older_than_the_key_holds(compact: bool, silent: bool) -> None:
    # Two histories that differ only in the value just older than the key's window: the lines agree.
    base = base_gpus()[2 if silent else 0]
    for width in range(24, 200, 11):
        room = spark_room(width, compact, not silent)
        histories = []
        for odd in (False, True):
            history = History(gpu_maxlen=260)
            for n in range(240):
                moved = odd and n == 240 - room - 1
                figures = replace(
                    base, utilization_gpu=(n * 7) % 100 if not moved else 99.5, temperature=30.0 + n % 50,
                    memory_used=(n % 70 + (9 if moved else 0)) * GIB,
                    activity=Activity(sm_active=(n * 3) % 100 if not moved else 99.5),
                )
                history.add(snapshot(figures, timestamp=NOW + n))
            histories.append(history.gpus[0])
        before, after = (CardContent(base, history=history, now=NOW) for history in histories)
        assert spark_windows(before, width, compact) == spark_windows(after, width, compact)
        assert fresh(before, width, compact, False) == fresh(after, width, compact, False), width


@pytest.mark.parametrize("seed", range(8))
def test_a_card_keeps_or_builds_exactly_the_lines_built_afresh(seed: int) -> None:
    rng = random.Random(seed)
    sample = rng.choice(base_gpus())
    history = History(gpu_maxlen=30)  # short: runs fill it, and then a tick of the same figures changes nothing
    forecast, mig_forecasts, alerts, diagnosis = None, {}, (), None
    now, width, compact, filtered = NOW, 60, False, False
    card = GpuCard(sample.index)
    kept = built = 0
    for step in range(300):
        roll = rng.random()
        if roll < 0.35:
            name = rng.choice(sorted(CHOICES))
            values = [value for value in CHOICES[name] if value != getattr(sample, name)]
            sample = replace(sample, **{name: rng.choice(values)})
        elif roll < 0.7:
            # A tick: the history takes the sample in (most often figures that did not change).
            now += rng.choice([1.0, 1.0, 2.0])
            history.add(snapshot(replace(sample, index=0), timestamp=now))
        elif roll < 0.75:
            forecast = rng.choice(FORECASTS)
        elif roll < 0.8:
            mig_forecasts = {0: rng.choice(FORECASTS)} if rng.random() < 0.7 else {}
        elif roll < 0.84:
            alerts = rng.choice(ALERTS)
        elif roll < 0.88:
            diagnosis = rng.choice(DIAGNOSES)
        elif roll < 0.92:
            now += rng.choice([0.5, 1.0, 60.0])  # the clock alone (a silent GPU's age)
        elif roll < 0.95:
            width = rng.choice(WIDTHS)
        elif roll < 0.98:
            compact = not compact
        else:
            filtered = not filtered
        content = CardContent(
            sample, history=history.gpus.get(0), forecast=forecast, mig_forecasts=mig_forecasts,
            alert_kinds=alerts, diagnosis=diagnosis, now=now,
        )
        card.content, card.compact, card.filtered = content, compact, filtered
        before = card._built
        lines = card._make_lines(width)
        kept += lines is before
        built += lines is not before
        assert lines == fresh(content, width, compact, filtered), (seed, step)
    # Both happened many times: a card that always builds (or never) is not what is tested here. (A change
    # of a field no card shows, a third of the rolls, builds the lines again too: the content differs.)
    assert kept > 15 and built > 40, (kept, built)


async def test_a_tick_of_the_same_figures_builds_no_card_and_a_changed_figure_one() -> None:
    gpus = (gpu(0, (P1,)), gpu(1, (P2,)))
    source = StaticSource(gpus)
    app = make_app(source)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        # The history is full of these figures (more of them than a sparkline is wide): a tick of
        # them changes no line.
        for _ in range(130):
            app.apply_snapshot(app.sampler.sample(), quiet=True)  # taken in, not drawn
        app.apply_snapshot(app.sampler.sample())
        await pilot.pause()
        cards = list(app.query(GpuCard))
        assert len(cards) == 2
        with (
            mock.patch.object(gpu_card_module, "full_lines", wraps=full_lines) as full,
            mock.patch.object(gpu_card_module, "compact_lines", wraps=compact_lines) as short,
        ):
            lines = [card._lines for card in cards]
            app.apply_snapshot(app.sampler.sample())
            await pilot.pause()
            assert full.call_count + short.call_count == 0
            assert all(card._lines is kept for card, kept in zip(cards, lines, strict=True))
            source.gpus = (gpus[0], replace(gpus[1], utilization_gpu=97.0))
            app.apply_snapshot(app.sampler.sample())
            await pilot.pause()
            assert [call.args[0].gpu.index for call in full.call_args_list + short.call_args_list] == [1]
            assert cards[0]._lines is lines[0]
            assert " 97%" in "\n".join(line.plain for line in cards[1]._lines)


async def test_a_tick_builds_each_card_s_content_once_and_c_lays_the_same_contents_out_again() -> None:
    # Issue 36: what a card shows is built once a tick (by the main screen); the room plans from those
    # contents and the cards draw the very same ones; `c` lays them out again without building any.
    built: list[CardContent] = []
    original = CardContent.__init__

    def counted(self: CardContent, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)  # type: ignore[arg-type]
        built.append(self)

    app = make_app(StaticSource((gpu(0, (P1,)), gpu(1, (P2,)))))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        with mock.patch.object(CardContent, "__init__", counted):
            app.apply_snapshot(app.sampler.sample())
            await pilot.pause()
            cards = list(app.query(GpuCard))
            assert [content.gpu.index for content in built] == [0, 1]
            assert [card.content for card in cards] == built
            assert all(card.content is content for card, content in zip(cards, built, strict=True))
            compact = cards[0].compact
            await pilot.press("c")
            await pilot.pause()
            assert len(built) == 2 and cards[0].compact is not compact
            assert all(card.content is content for card, content in zip(cards, built, strict=True))
