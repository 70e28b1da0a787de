"""The TUI is imported without ssl, the collector off meanwhile and frozen after; it runs with the
collector's youngest generation collected rarely, and the threshold is given back after."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from gputop.ui.terminal.textual_imports import YOUNG_COLLECTION_THRESHOLD, collecting_rarely

ROOT = Path(__file__).resolve().parents[2]

LIVE = r"""
import gc, json, sys
from gputop.cli.main import _load_tui  # the command line starts the TUI so
frozen_before = gc.get_freeze_count()
_load_tui()  # first: asyncio would import ssl
report = {"ssl": "ssl" in sys.modules, "textual": "textual.app" in sys.modules,
          "frozen": gc.get_freeze_count() > frozen_before, "collecting": gc.isenabled()}
import ssl  # an import after the TUI's still works
report["ssl_after"] = ssl.OPENSSL_VERSION.startswith(("OpenSSL", "LibreSSL"))
print(json.dumps(report))
"""


def test_the_tui_is_imported_without_ssl_and_frozen_for_the_collector() -> None:
    done = subprocess.run([sys.executable, "-c", LIVE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"ssl": False, "textual": True, "frozen": True, "collecting": True, "ssl_after": True}


def test_while_the_tui_runs_the_youngest_generation_is_collected_rarely_then_as_before() -> None:
    before = gc.get_threshold()
    with collecting_rarely():
        assert gc.get_threshold() == (YOUNG_COLLECTION_THRESHOLD, *before[1:])
    assert gc.get_threshold() == before
