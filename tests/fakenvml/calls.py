"""Which driver symbol gputop calls for a figure where that depends on the nvidia-ml-py release installed
(a test that makes the call fail must name the one gputop makes: tests/compat/run_bindings.py runs the
tests on older releases)."""

from __future__ import annotations

import pynvml

# nvidia-ml-py before 12.570 has no nvmlDeviceGetTemperatureV: gputop asks nvmlDeviceGetTemperature.
TEMPERATURE_CALL = (
    "nvmlDeviceGetTemperatureV" if hasattr(pynvml, "nvmlDeviceGetTemperatureV") else "nvmlDeviceGetTemperature"
)
