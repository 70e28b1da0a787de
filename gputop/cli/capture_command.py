"""``gputop doctor --capture FILE``: the doctor's verdict, then a capture of what NVML answers here
(the doctor's findings in it), written to FILE for a bug report."""

from __future__ import annotations

import argparse
import sys

from gputop.cli.args import fail

ATTACH = "attach it to a bug report"


def run_capture(args: argparse.Namespace) -> int:
    """0 when gputop can run here (as ``gputop doctor``), 1 when it cannot; the capture is written either way."""
    import json

    from gputop.core.capture.capture_file import CaptureError, write_capture
    from gputop.core.capture.take import CaptureOptions, take_capture
    from gputop.core.doctor import diagnose

    try:
        diagnosis = diagnose()
    except KeyboardInterrupt:  # before anything was captured: nothing to write
        return 130
    print(f"gputop doctor: {diagnosis.summary}", file=sys.stderr, flush=True)
    options = CaptureOptions(
        seconds=args.seconds, interval_s=args.interval, anonymize=not args.no_anonymize, keep_names=args.keep_names
    )
    print(f"gputop: capturing what NVML answers for {options.seconds:g}s…", file=sys.stderr, flush=True)
    taken = take_capture(options, args.settings, json.loads(diagnosis.to_json()))
    try:
        size = write_capture(taken.document, args.capture)
    except CaptureError as error:
        return fail(str(error))
    kept = "identifiers kept" if args.no_anonymize else "identifiers replaced"
    kept += ", users and commands kept" if args.keep_names else ", users and commands replaced"
    # Where NVML would not start, its answer is the capture (the advice after the dash is the doctor's).
    what = f"why NVML would not start ({taken.failure.split(' — ')[0]})" if taken.failure else (
        f"{taken.ticks} tick{'s' if taken.ticks != 1 else ''} of {taken.gpus} GPU{'s' if taken.gpus != 1 else ''}"
    )
    print(f"gputop: captured {what} to {args.capture} ({size:,} bytes; {kept}): {ATTACH}", file=sys.stderr)
    return 0 if diagnosis.runnable else 1
