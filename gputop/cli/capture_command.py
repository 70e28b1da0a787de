"""``gputop doctor --capture FILE``: the doctor's findings, then a capture of what NVML answers here,
written to FILE for a bug report."""

from __future__ import annotations

import argparse
import json
import sys

from gputop.cli.args import fail

ATTACH = "attach it to a bug report"


def run_capture(args: argparse.Namespace, doctor_json: str | None) -> int:
    from gputop.core.capture.capture_file import CaptureError, write_capture
    from gputop.core.capture.take import CaptureOptions, take_capture

    options = CaptureOptions(
        seconds=args.seconds, interval_s=args.interval, anonymize=not args.no_anonymize, keep_names=args.keep_names
    )
    print(f"gputop: capturing what NVML answers for {options.seconds:g}s…", file=sys.stderr, flush=True)
    taken = take_capture(options, args.settings, None if doctor_json is None else json.loads(doctor_json))
    try:
        size = write_capture(taken.document, args.capture)
    except CaptureError as error:
        return fail(str(error))
    kept = "identifiers kept" if args.no_anonymize else "identifiers replaced"
    kept += ", users and commands kept" if args.keep_names else ", users and commands replaced"
    what = f"nvmlInit failed ({taken.failure})" if taken.failure else f"{taken.ticks} ticks of {taken.gpus} GPUs"
    print(
        f"gputop: captured {what} to {args.capture} ({size:,} bytes; {kept}): {ATTACH}",
        file=sys.stderr,
    )
    return 0
