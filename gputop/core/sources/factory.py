"""Which GPU source a command line asks for: the demo machine or the real driver (NVML).

Here, in core, so that every command (the TUI, ``--once``, ``record``, ``export``, ``serve``'s checks)
opens its source the same way without reaching back up into the command line's module.
"""

from __future__ import annotations

import argparse
import sys

from gputop.core.settings import Settings
from gputop.core.sources.base import GpuSource, SourceUnavailable, unavailable


def open_source(args: argparse.Namespace, settings: Settings, patient: bool = False) -> GpuSource:
    """The demo machine, a capture, or the real driver; `patient`: wait on a slow nvmlInit, saying so, not give up."""
    if getattr(args, "nvml_capture", None):
        if args.demo:
            raise SourceUnavailable("--demo and --nvml-capture each choose the GPUs: give one of them")
        from gputop.core.sources.nvml_capture import open_capture

        return open_capture(args.nvml_capture, settings.driver_deadline_s)
    if args.demo:
        from gputop.core.sources.demo import DemoSource

        if not 1 <= args.demo_gpus <= 16:
            raise SourceUnavailable("--demo-gpus must be between 1 and 16")
        return DemoSource(gpu_count=args.demo_gpus)
    from gputop.core.sources.binding import inspect_binding

    binding = inspect_binding()  # the check `gputop doctor` makes too
    if binding.refused:
        raise SourceUnavailable(unavailable(binding.refusal))
    from gputop.core.sources.nvml import NvmlSource

    return NvmlSource(settings.driver_deadline_s, on_init_slow=_say_init_is_slow if patient else None)


def _say_init_is_slow(deadline_s: float) -> None:
    print(
        f"gputop: nvmlInit has not answered within {deadline_s:g}s: the NVIDIA driver may be hung"
        " or still starting; waiting for it (q or Ctrl+C quits)",
        file=sys.stderr,
        flush=True,
    )
