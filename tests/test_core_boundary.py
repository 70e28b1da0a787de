"""The data side never imports Textual: it must run headless (record, export, --json)."""

import subprocess
import sys
from pathlib import Path

import gputop

CORE = Path(gputop.__file__).parent / "core"


def test_importing_every_core_module_and_the_cli_loads_no_textual() -> None:
    modules = sorted(
        "gputop." + str(path.relative_to(CORE.parent).with_suffix("")).replace("/", ".")
        for path in CORE.rglob("*.py")
        if path.name != "__init__.py"
    )
    assert "gputop.core.model" in modules and "gputop.core.sampler" in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules + ['gputop.cli.main']!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'plotext')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_live_start_imports_none_of_what_only_other_runs_or_other_screens_need() -> None:
    # What the live TUI and the NVML source import before the first frame; each module below is
    # imported by the run or the screen that uses it (recording, replay, a settings file, the
    # tree view, the process screen, the detail screen's charts).
    later = ["gputop.core.recording.record", "gputop.core.recording.replay", "gputop.ui.controls.replay_control",
             "gputop.core.output.snapshot_json", "gzip", "tomllib", "gputop.core.analysis.tree",
             "gputop.core.host.procdetail", "plotext"]
    code = (
        "import sys\n"
        "import gputop.cli.main, gputop.ui.app, gputop.core.sources.nvml\n"
        f"print(sorted(m for m in {later!r} if m in sys.modules))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
