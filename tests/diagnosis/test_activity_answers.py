"""Answers built on GPM activity, the PCIe link and NVLink, through the real Watcher."""

from __future__ import annotations

from dataclasses import replace

from gputop.core.analysis.foresight import Watcher
from gputop.core.model import Activity, GpuSample, NvLink
from gputop.core.sampler import Sampler
from gputop.core.settings import Thresholds, settings_from_mapping
from gputop.core.sources.demo import DemoSource
from tests.diagnosis.helpers import GIB, cleared, gpu, process, raised, run

FEW_SMS = Activity(
    sm_active=12.0, tensor_active=0.0, dram_active=5.0, fp64_active=0.0, fp32_active=3.0, fp16_active=0.0
)
HEALTHY = Activity(
    sm_active=85.0, tensor_active=60.0, dram_active=40.0, fp64_active=0.0, fp32_active=20.0, fp16_active=5.0
)


def busy(activity: Activity | None, **fields: object) -> GpuSample:
    """A GPU at 100 % util and full power, a process holding 8 GiB."""
    base: dict[str, object] = {
        "utilization_gpu": 100.0,
        "power_draw": 600.0,
        "clock_event_reasons": (),
        "activity": activity,
        "processes": (process(sm=90.0),),
    }
    return gpu(used=40 * GIB, **{**base, **fields})


def test_busy_with_few_sms_raises_its_alert_after_the_delay_and_not_before_and_clears_once() -> None:
    few = busy(FEW_SMS)
    frames = [(t * 10.0, few) for t in range(14)] + [(t * 10.0, busy(HEALTHY)) for t in range(14, 17)]
    _, ticks = run(frames)
    verdicts = [f.diagnoses.gpus[0].verdict for f in ticks]
    assert verdicts.index("busy_few_sms") == 12  # busy_idle_after_s = 120 s after the first tick
    assert verdicts[11] is None and verdicts[14:] == [None, None, None]
    assert [(e.time, e.message) for e in raised(ticks, "busy")] == [
        (
            120.0,
            "GPU 0 busy on few SMs: 100% busy but only 12% of its SMs active (tiny kernels, launch-bound,"
            " small batches or a waiting collective?)",
        )
    ]
    # Healthy from 140 s: the alert clears once that has held 15 s, on the tick at 160 s.
    assert [(e.time, e.message) for e in cleared(ticks, "busy")] == [(160.0, "GPU 0 no longer busy on few SMs")]


def test_busy_idle_after_s_is_the_users_setting() -> None:
    few = busy(FEW_SMS)
    _, ticks = run([(0.0, few), (30.0, few)], Thresholds(busy_idle_after_s=30.0))
    assert [f.diagnoses.gpus[0].verdict for f in ticks] == [None, "busy_few_sms"]


def test_a_healthy_busy_gpu_an_idle_gpu_one_without_gpm_and_one_holding_no_memory_raise_nothing() -> None:
    for sample in (
        busy(HEALTHY),
        gpu(activity=Activity(sm_active=0.0, tensor_active=0.0)),  # idle: util 0
        busy(None),  # no GPM: SM activity unknown, never guessed
        replace(busy(FEW_SMS), processes=()),  # nothing holds memory there
    ):
        _, ticks = run([(t * 30.0, sample) for t in range(10)])
        assert {f.diagnoses.gpus[0].verdict for f in ticks} == {None}
        assert [e for f in ticks for e in f.events] == []


def test_a_gap_in_sm_activity_starts_the_count_over() -> None:
    few = busy(FEW_SMS)
    frames = [(0.0, few), (60.0, few), (90.0, busy(None)), (120.0, few), (200.0, few), (240.0, few)]
    _, ticks = run(frames)
    assert [f.diagnoses.gpus[0].verdict for f in ticks] == [None, None, None, None, None, "busy_few_sms"]


def test_memory_bound_is_a_verdict_without_an_alert() -> None:
    bound = busy(replace(HEALTHY, dram_active=92.0, tensor_active=2.0, fp32_active=8.0, fp16_active=0.0))
    _, ticks = run([(0.0, bound), (1.0, bound)])
    assert [f.diagnoses.gpus[0].verdict for f in ticks] == ["memory_bound", "memory_bound"]
    assert [e for f in ticks for e in f.events] == []
    # A pipe not known: not judged.
    _, ticks = run([(0.0, busy(replace(HEALTHY, dram_active=92.0, tensor_active=None)))])
    assert ticks[0].diagnoses.gpus[0].verdict is None


def test_the_stall_verdict_asks_sm_activity_where_it_is_known() -> None:
    # Low power and memory flat, but SMs working: not stalled (power alone would say so).
    working = busy(HEALTHY, power_draw=150.0)
    _, ticks = run([(t * 10.0, working) for t in range(14)])
    assert "stalled" not in [f.diagnoses.gpus[0].verdict for f in ticks]
    # An NCCL hang at moderate power: SM and tensor near idle under full utilization.
    hung = busy(Activity(sm_active=2.0, tensor_active=0.0), power_draw=400.0)
    _, ticks = run([(t * 10.0, hung) for t in range(14)])
    assert [f.diagnoses.gpus[0].verdict for f in ticks][12:] == ["stalled", "stalled"]


LINK = {"pcie_link_gen": 4, "pcie_link_width": 8, "pcie_link_gen_max": 5, "pcie_link_width_max": 16}


def test_a_degraded_pcie_link_under_load_is_named_after_10_s_and_an_idle_down_trained_one_is_not() -> None:
    loaded = busy(HEALTHY, **LINK)
    _, ticks = run([(t * 5.0, loaded) for t in range(4)])
    assert [(e.time, e.message) for e in raised(ticks, "health")] == [
        (10.0, "GPU 0 health: PCIe Gen4 x8 (max Gen5 x16) under load: the link trained below its maximum")
    ]
    idle = gpu(activity=HEALTHY, **LINK)  # util 0: down-trained to save power
    _, ticks = run([(t * 5.0, idle) for t in range(10)])
    assert raised(ticks, "health") == []
    at_max = busy(HEALTHY, **{**LINK, "pcie_link_gen": 5, "pcie_link_width": 16})
    _, ticks = run([(t * 5.0, at_max) for t in range(10)])
    assert raised(ticks, "health") == []


NVLINK = NvLink(version=4, links_active=18, links_total=18, errors_crc=0, errors_replay=0, errors_recovery=0)


def test_a_link_going_down_and_errors_climbing_are_health_problems_named_by_link() -> None:
    down = replace(NVLINK, links_active=17, links_down=(5,))
    erring = replace(down, errors_crc=7, errors_replay=2, errors_by_link=((11, 9),))
    frames = [
        (0.0, busy(HEALTHY, nvlink=NVLINK)),
        (1.0, busy(HEALTHY, nvlink=down)),
        (2.0, busy(HEALTHY, nvlink=erring)),
    ]
    _, ticks = run(frames)
    assert [(e.time, e.message) for e in raised(ticks, "health")] == [
        (1.0, "GPU 0 health: NVLink link 5 is down (17 of 18 up)"),
        (2.0, "GPU 0 health: NVLink link 11 errors climbing (9 CRC, replay and recovery)"),
    ]
    # Errors already there when gputop starts are not "climbing".
    already = busy(HEALTHY, nvlink=replace(erring, links_down=()))
    _, ticks = run([(0.0, already), (1.0, already)])
    assert raised(ticks, "health") == []


def test_a_degraded_link_found_under_load_stays_a_problem_while_idle_until_the_link_is_back_at_its_maximum() -> None:
    loaded, idle = busy(HEALTHY, **LINK), gpu(activity=HEALTHY, **LINK)
    fixed = replace(idle, pcie_link_gen=5, pcie_link_width=16)
    frames = [(0.0, loaded), (10.0, loaded), (20.0, idle), (30.0, idle), (40.0, fixed)]
    _, ticks = run(frames)
    assert [[p.key for p in f.diagnoses.gpus[0].health] for f in ticks] == [
        [],
        ["pcie_link"],  # 10 s under load
        ["pcie_link"],  # idle (down-trained further, as idle GPUs do): still the link found degraded
        ["pcie_link"],
        [],
    ]
    assert [(e.time, e.message) for e in cleared(ticks, "health")] == [
        (40.0, "GPU 0 health: the PCIe link is back at its maximum")
    ]


def test_busy_idle_after_s_is_read_from_the_settings_file() -> None:
    settings, problems = settings_from_mapping({"thresholds": {"busy_idle_after_s": 45}}, "settings.toml")
    assert (settings.thresholds.busy_idle_after_s, problems) == (45.0, [])
    settings, problems = settings_from_mapping({"thresholds": {"busy_idle_after_s": 0}}, "settings.toml")
    assert settings.thresholds.busy_idle_after_s == 120.0 and len(problems) == 1


def test_the_demo_shows_each_answer() -> None:
    now = [1_750_000_000.0]
    # The default four GPUs (issue 29: "the demo shows each").
    sampler = Sampler(DemoSource(gpu_count=4, clock=lambda: now[0]), clock=lambda: now[0])
    sampler.open()
    watcher = Watcher()
    memory_bound, alerts, busy_at = set(), set(), []
    for tick in range(1, 131):
        now[0] += 1.0
        foresight = watcher.update(sampler.sample())
        memory_bound |= {index for index, found in foresight.diagnoses.gpus.items() if found.memory_bound}
        alerts |= {(e.gpu_index, e.kind, e.subject) for e in foresight.events if not e.cleared}
        busy_at += [tick for found in foresight.diagnoses.gpus.values() if found.busy_few_sms]
    assert memory_bound == {0}
    assert {(2, "health", "pcie_link"), (3, "busy", None), (1, "stall", None)} <= alerts
    assert not {alert for alert in alerts if alert[1] == "busy" and alert[0] != 3}
    # After busy_idle_after_s (120 s) of history, not from the first frame: the demo claims no past.
    assert busy_at[0] == 121
