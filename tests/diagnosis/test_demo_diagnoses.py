"""The demo machine shows every diagnosis, so screenshots and new users see them."""

from __future__ import annotations

from gputop.core.analysis.diagnosis.problems import problems
from gputop.core.analysis.foresight import Watcher
from gputop.core.sampler import Sampler
from gputop.core.sources.demo import DemoSource


def test_two_minutes_of_the_demo_show_each_diagnosis() -> None:
    now = [1_750_000_000.0]
    sampler = Sampler(DemoSource(gpu_count=4, clock=lambda: now[0]), clock=lambda: now[0])
    sampler.open()
    watcher = Watcher()
    kinds: set[tuple[int, str]] = set()
    alerts: set[tuple[int, str]] = set()
    for _ in range(130):
        now[0] += 1.0
        snapshot = sampler.sample()
        foresight = watcher.update(snapshot)
        kinds |= {(problem.gpu_index, problem.kind) for problem in problems(snapshot, foresight.diagnoses)}
        alerts |= {(event.gpu_index, event.kind) for event in foresight.events if not event.cleared}
    assert {(0, "throttled"), (1, "stalled"), (2, "health"), (3, "unattributed"), (3, "idle")} <= kinds
    assert {(1, "stall"), (2, "health"), (3, "idle")} <= alerts
    # GPU 0 works as set (a power cap, no alert); GPU 3's idle notebook is the only idle process.
    assert (0, "throttle") not in alerts
    assert {kind for gpu, kind in kinds if gpu == 0} == {"throttled"}
