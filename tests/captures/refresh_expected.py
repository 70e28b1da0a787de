"""Take the expected ``--json`` of captures again, from what this gputop makes of their NVML answers.

When gputop changes a figure on purpose, the ticks recorded with a capture no longer match its replay
(tests/test_captures.py says which tick and field). The NVML answers are what a capture keeps that
cannot be had again; the expected ``--json`` can. Run from the repository root:

    python tests/captures/refresh_expected.py [FILE ...]          # what would change, tick by tick
    python tests/captures/refresh_expected.py --write [FILE ...]  # and write it

Without FILE: every capture in this folder. Read the differences before writing them.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent.parent), str(HERE.parent)]

from capture_compare import differences, recorded_ticks, replay_documents  # noqa: E402

from gputop.core.capture.capture_file import read_capture, write_capture  # noqa: E402


def refresh(path: Path, write: bool) -> int:
    """How many ticks change; with ``write``, the capture is written with them changed."""
    capture = read_capture(str(path))
    ticks = [tick for tick in capture.ticks if tick.json is not None]
    replayed = replay_documents(path, len(recorded_ticks(capture)))
    changed = 0
    for number, (tick, document) in enumerate(zip(ticks, replayed, strict=True), start=1):
        found = differences(tick.json, document)
        if found:
            changed += 1
            print(f"{path.name} tick {number}: " + "; ".join(found[:5]) + (" ..." if len(found) > 5 else ""))
        tick.json = {**document, "source": tick.json["source"] if tick.json else "nvml"}
    if write and changed:
        write_capture(capture.document(), str(path))
    return changed


if __name__ == "__main__":
    arguments = sys.argv[1:]
    write = "--write" in arguments
    paths = [Path(a) for a in arguments if a != "--write"] or sorted(
        p for p in HERE.iterdir() if p.name.endswith((".json", ".json.gz"))
    )
    total = sum(refresh(path, write) for path in paths)
    print(f"{total} ticks {'rewritten' if write else 'would change'} in {len(paths)} captures")
