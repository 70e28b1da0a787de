"""A fake libnvidia-ml.so.1 for tests: scenario builder, build helper and fixture object.

    def test_something(fake_nvml):
        fake_nvml.write(Scenario().gpu().process(gpu=0, pid=1234, used=2 * GiB))
        fake_nvml.load()                      # in-process: pynvml uses the fake
        env = fake_nvml.env()                 # or: a subprocess sees it

See fake_nvml.c for the scenario file format and scenario.py for the builder.
"""

from .build import MEMORY_V2, OLD_DRIVER, PROCESS_V2, PROCESS_V3, build_library
from .fixture import SCENARIO_ENV, FakeNvml, loaded, reset_pynvml
from .scenario import (
    INIT_FUNCTIONS,
    NO_SUCH_PID,
    NOT_AVAILABLE,
    DelayRule,
    ErrorRule,
    GiB,
    GpuSpec,
    KiB,
    MiB,
    MigSpec,
    ProcessSpec,
    Scenario,
    build_scenario,
    error_code,
)

__all__ = [
    "INIT_FUNCTIONS",
    "DelayRule",
    "MEMORY_V2",
    "NOT_AVAILABLE",
    "NO_SUCH_PID",
    "OLD_DRIVER",
    "PROCESS_V2",
    "PROCESS_V3",
    "SCENARIO_ENV",
    "ErrorRule",
    "FakeNvml",
    "GiB",
    "GpuSpec",
    "KiB",
    "MiB",
    "MigSpec",
    "ProcessSpec",
    "Scenario",
    "build_library",
    "build_scenario",
    "error_code",
    "loaded",
    "reset_pynvml",
]
