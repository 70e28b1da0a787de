"""The TUI is imported without ssl and without the widget modules ``textual.types`` would pull in;
the command palette still opens and finds gputop's commands, and every name of ``textual.types``
is still there when asked for."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import textual._types
import textual.types

from gputop.ui import textual_imports

ROOT = Path(__file__).resolve().parents[2]
UNUSED = ["textual.widgets._directory_tree", "textual.widgets._tree", "textual.widgets._select",
          "textual.widgets._placeholder", "ssl"]

LIVE = r"""
import json, sys
from gputop.ui.textual_imports import load_tui
load_tui()  # first: asyncio would import ssl
report = {"loaded": [name for name in UNUSED if name in sys.modules],
          "stand_in": type(sys.modules["textual.types"]).__name__}
import asyncio
from textual.command import CommandPalette
from tests.ui.factory import make_app  # the tests' fake sources: these import ssl, the TUI does not

async def palette():
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        report["palette"] = isinstance(app.screen, CommandPalette)
        await pilot.press(*"freeze")
        for _ in range(40):  # the palette searches in a worker
            await pilot.pause(0.05)
            titles = [str(option.prompt) for option in app.screen.query("CommandList").first().options]
            if any(title.startswith("Freeze") for title in titles):
                break
        report["found"] = any(title.startswith("Freeze") for title in titles)

asyncio.run(palette())
report["after"] = [name for name in UNUSED[:-1] if name in sys.modules]
from textual.types import DirEntry, IgnoreReturnCallbackType
from textual.widgets._directory_tree import DirEntry as real_dir_entry
from textual._types import IgnoreReturnCallbackType as real_alias
import textual.types
report["real"] = [DirEntry is real_dir_entry, IgnoreReturnCallbackType is real_alias,
                  type(sys.modules["textual.types"]).__name__, sorted(textual.types.__all__) == sorted(ALL)]
try:
    from textual.types import NoSuchName
except ImportError as error:
    report["unknown"] = str(error).split(" (")[0]
print(json.dumps(report))
"""


def test_the_tui_is_imported_without_what_it_never_uses_and_the_palette_still_works() -> None:
    script = f"UNUSED = {UNUSED!r}\nALL = {list(textual.types.__all__)!r}\n" + LIVE
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["loaded"] == [] and report["stand_in"] == "_TypesStandIn"
    assert report["palette"] is True and report["found"] is True
    assert report["after"] == []
    assert report["real"] == [True, True, "module", True]
    assert report["unknown"] == "cannot import name 'NoSuchName' from 'textual.types'"


def test_nothing_is_done_once_textual_types_is_imported() -> None:
    assert "textual.types" in sys.modules
    assert textual_imports.defer_textual_types() is False
    assert sys.modules["textual.types"] is textual.types


def test_a_textual_types_without_that_import_is_left_as_it_is() -> None:
    class Loader:
        def get_source(self, name: str) -> str:
            return "from textual.widgets._tree import TreeNode\nfrom textual._types import CallbackType as Renamed\n"

    spec = importlib.util.spec_from_loader("textual.types", Loader())  # type: ignore[arg-type]
    assert spec is not None
    assert textual_imports._cheap_names(spec) is None
    real = importlib.util.find_spec("textual.types")
    assert real is not None
    names = textual_imports._cheap_names(real)
    assert names is not None and "IgnoreReturnCallbackType" in names  # the one the command palette imports
    assert [name for name in names if getattr(textual.types, name) is not getattr(textual._types, name)] == []
