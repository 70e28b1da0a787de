"""How the TUI is imported and how its garbage is collected: the one place gputop tunes either.

This module runs before Textual is imported, and imports nothing of Textual's itself.

- **ssl.** asyncio imports it for TLS, which the TUI never speaks; it loads OpenSSL, 4 MiB of the
  TUI's memory. While the TUI is imported it is blocked, and asyncio runs as on a Python built
  without ssl; an ``import ssl`` after that still works.
- **The collector during the import.** What is imported lives as long as the process: the collector
  is off while it is imported (a tenth of the import's CPU) and then freezes it, so no collection
  walks it again (each full one would walk every object of Textual, Rich and gputop: 40-60 ms).
- **The collector while the TUI runs** (``collecting_rarely``). Each frame makes some thousands of
  short-lived containers (strips, segments, styles), nearly all freed by their reference counts. At
  Python's threshold (700) the youngest generation is collected several times a second, and every
  tenth and hundredth collection walks the older ones too: 10,000 makes all of them about fifteen
  times rarer; the few cycles a frame leaves wait a few seconds longer to be freed.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between two collections of the youngest generation while the TUI runs.
YOUNG_COLLECTION_THRESHOLD = 10_000


@contextmanager
def importing_tui() -> Iterator[None]:
    """While the TUI is imported (by the command line, ``cli → ui``): no ssl, the collector off; frozen after."""
    blocked = "ssl" not in sys.modules
    if blocked:
        sys.modules["ssl"] = None  # type: ignore[assignment]
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if blocked and "ssl" in sys.modules and sys.modules["ssl"] is None:
            del sys.modules["ssl"]
        gc.freeze()
        if collecting:
            gc.enable()


@contextmanager
def collecting_rarely() -> Iterator[None]:
    """While the TUI runs: the youngest generation collected every YOUNG_COLLECTION_THRESHOLD allocations."""
    threshold = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)


__all__ = ["collecting_rarely", "importing_tui"]
