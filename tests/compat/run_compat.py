"""Run the tests that lean on Textual's insides against another Textual, in a throwaway venv.

    python tests/compat/run_compat.py                    # the newest Textual the registry has
    python tests/compat/run_compat.py --textual 8.0.0    # or a given version (any pip specifier)

It creates a venv in a temporary directory, installs gputop's other dependencies and test tools
as pyproject.toml lists them, then the Textual asked for (last, so nothing pulls it back), and
runs, on a copy of this checkout taken at the start (so work can go on meanwhile), the
changed-cell writer's tests (terminal diff, the real command in a pty, the private-name checks),
the SVG snapshot tests and every Pilot test. The global Python is never touched. Exit status:
pytest's. See CONTRIBUTING.md, "Upgrading Textual".
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
# What depends on Textual's behaviour, private names included.
TESTS = [
    "tests/test_textual_private.py",
    "tests/ui",  # Pilot tests, SVG snapshots (tests/ui/test_snapshots.py), the terminal diff
    "tests/e2e/test_changed_cells_fallback.py",
    "tests/e2e/test_colour.py",
    "tests/e2e/test_resize_pty.py",
]


def _requirements() -> list[str]:
    """The project's dependencies and test tools, Textual left out."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [spec for spec in wanted if re.split(r"[ <>=!~;\[]", spec, maxsplit=1)[0].lower() != "textual"]


def copy_checkout(directory: Path) -> Path:
    """A copy of this checkout's code and tests in ``directory``, so that work can go on during a run."""
    checkout = directory / "gputop"
    skip = shutil.ignore_patterns("__pycache__", "_build", ".mypy_cache", ".ruff_cache")
    for part in ("gputop", "tests"):
        shutil.copytree(ROOT / part, checkout / part, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, checkout / name)
    return checkout


def run(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> int:
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, check=False, cwd=cwd, env=env).returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--textual", default="", metavar="VERSION", help="a version or specifier (default: newest)")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    textual = "textual" + (f"=={args.textual}" if re.fullmatch(r"[\d.]+\w*", args.textual) else args.textual)
    with tempfile.TemporaryDirectory(prefix="gputop-compat-") as directory:
        checkout = copy_checkout(Path(directory))
        venv = Path(directory) / "venv"
        python = str(venv / "bin" / "python")
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [python, "-m", "pip", "install", "--quiet", "--no-warn-script-location", *_requirements()],
            [python, "-m", "pip", "install", "--quiet", "--upgrade", textual],
        ]
        for step in steps:
            if (status := run(step)) != 0:
                return status
        versions = "from importlib.metadata import version as v; print('textual', v('textual'), '/ rich', v('rich'))"
        run([python, "-c", versions])
        # From the copy, never from site-packages: gputop is not installed in the venv.
        env = dict(os.environ, PYTHONPATH=str(checkout))
        env.pop("PYTHONHOME", None)
        return run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS, *args.pytest_args],
                    cwd=checkout, env=env)


if __name__ == "__main__":
    raise SystemExit(main())
