"""The detail screen's likely causes of memory no listed process accounts for: "another PID namespace"
comes first only where a process was found hidden by one, is left out where gputop runs in the host's
PID namespace, and comes last, as a condition, where that is not known (the demo, a recording)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gputop.core.analysis.foresight import Watcher
from gputop.core.host.pidns import read_pid_namespace
from gputop.core.model import Snapshot
from gputop.ui.widgets.diagnosis_panel import diagnosis_text

from .factory import GIB, gpu, proc, snapshot

NVIDIA_SMI = "run it with --pid=host, or `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` on the host"
OTHERS = "a process that exited while its GPU context lingers; memory the driver itself holds"


def causes(tick: Snapshot) -> str:
    diagnoses = Watcher().update(tick).diagnoses
    text = diagnosis_text(tick.gpus[0], diagnoses.gpus[0], tick, diagnoses).plain
    [line] = [line.strip() for line in text.splitlines() if line.strip().startswith("Likely:")]
    return line


def leaking(*hidden_reasons: str, source: str = "test") -> Snapshot:
    """GPU 0: one visible process (30 GiB), one hidden per reason (1 GiB each), 20 GiB no process holds."""
    shown = proc(101, 0, 30, "alice", "python train.py", sm=90.0)
    hidden = [replace(proc(200 + n, 0, 1), visible=False, not_visible_reason=reason)
              for n, reason in enumerate(hidden_reasons)]
    tick = snapshot(replace(gpu(0, [shown, *hidden]), memory_used=(50 + len(hidden)) * GIB))
    return replace(tick, source=source)


def test_a_process_hidden_by_another_pid_namespace_puts_that_cause_first() -> None:
    assert causes(leaking("pid_namespace")) == (
        "Likely: processes in another PID namespace (gputop in a container without --pid=host sees none of the"
        f" host's: {NVIDIA_SMI}); {OTHERS}."
    )


def test_where_the_namespace_is_not_known_it_is_the_last_cause_and_a_condition() -> None:
    for tick in (leaking(), leaking("exited", source="demo"), leaking(source="replay")):
        assert causes(tick) == (
            f"Likely: {OTHERS}; or, if gputop runs in a container without --pid=host, processes of the host it"
            f" cannot see ({NVIDIA_SMI})."
        )


@pytest.mark.skipif(read_pid_namespace().host is not True, reason="gputop here is not in the host's PID namespace")
def test_live_in_the_hosts_pid_namespace_another_namespace_is_not_offered() -> None:
    assert causes(leaking("exited", source="nvml")) == (
        f"Likely: {OTHERS} (gputop runs in the host's PID namespace: no process is hidden by one)."
    )
