"""Diagnoses: what is wrong with a GPU, and whose process it is (core, no UI)."""

from gputop.core.analysis.diagnosis.diagnoser import (
    NO_DIAGNOSES,
    Diagnoser,
    Diagnoses,
    GpuDiagnosis,
    ProcessDiagnosis,
    Verdict,
)
from gputop.core.analysis.diagnosis.health import HealthProblem
from gputop.core.analysis.diagnosis.memory import Unattributed

__all__ = [
    "NO_DIAGNOSES",
    "Diagnoser",
    "Diagnoses",
    "GpuDiagnosis",
    "HealthProblem",
    "ProcessDiagnosis",
    "Unattributed",
    "Verdict",
]
