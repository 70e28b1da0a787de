"""The verdict of each GPU as a Prometheus family: what its activity, clocks and history add up to.

``gputop_gpu_verdict{verdict}`` is 1 for the GPU's verdict and 0 for the others (as the clock event
reasons are served), so ``gputop_gpu_verdict{verdict="busy_few_sms"} == 1`` finds those GPUs and a
dashboard can count them. A GPU the diagnoses have not judged (lost, not answering, the first tick)
serves none: unknown, not "no verdict".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from prometheus_client.core import GaugeMetricFamily, Metric

from gputop.core.analysis.diagnosis import Diagnoses
from gputop.core.model import GpuSample, Snapshot
from gputop.core.output.metric_names import GPU_VERDICT, VERDICT_LABEL, VERDICTS


def verdict_family(
    snapshot: Snapshot,
    diagnoses: Diagnoses,
    gpu_labels: Callable[[GpuSample], Sequence[str]],
    label_names: Sequence[str],
) -> Iterator[Metric]:
    """One series per GPU judged and verdict, 1 for the one that holds (all 0: nothing to say)."""
    family = GaugeMetricFamily(
        GPU_VERDICT,
        "1 for the GPU's verdict (throttled, stalled, busy_few_sms, memory_bound), else 0.",
        labels=[*label_names, VERDICT_LABEL],
    )
    for gpu in snapshot.gpus:
        diagnosis = diagnoses.gpus.get(gpu.index)
        if diagnosis is None or gpu.lost or not gpu.answering:
            continue
        for verdict in VERDICTS:
            family.add_metric([*gpu_labels(gpu), verdict], 1.0 if diagnosis.verdict == verdict else 0.0)
    yield family
