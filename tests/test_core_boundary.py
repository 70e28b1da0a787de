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
        f"for name in {modules + ['gputop.cli']!r}: importlib.import_module(name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich', 'plotext')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
