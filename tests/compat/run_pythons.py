"""Run the whole default test run on other Python interpreters, each in a throwaway venv.

    python tests/compat/run_pythons.py                       # 3.10 and the newest 3.x found here
    python tests/compat/run_pythons.py --python python3.12   # or the interpreters named

`requires-python` says 3.10+, and pyproject.toml's classifiers list exactly the versions this
script passed on (docs/trust.md has its last table). For each interpreter it creates a venv in a
temporary directory, installs this checkout (a copy taken at the start, so work can go on meanwhile)
with its test extra, and runs the README's test command there. The global Python is never touched.
Exit status: 0 when every interpreter passed. Each step's whole output is kept beside the temporary
folder (`/tmp/gputop-python-VERSION-stepN.log`).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOWEST = (3, 10)


def _version(interpreter: str) -> tuple[int, int, int] | None:
    try:
        out = subprocess.run(
            [interpreter, "-c", "import sys; print(*sys.version_info[:3])"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    major, minor, micro = (int(part) for part in out.split())
    return major, minor, micro


def _found() -> dict[tuple[int, int, int], str]:
    """Every Python 3 interpreter on PATH or under pyenv, by version."""
    candidates = {shutil.which(f"python3.{minor}") for minor in range(8, 20)}
    candidates |= set(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    found: dict[tuple[int, int, int], str] = {}
    for candidate in sorted(c for c in candidates if c):
        version = _version(candidate)
        if version is not None and version[:2] >= LOWEST:
            found.setdefault(version, candidate)
    return found


def _default_choice(found: dict[tuple[int, int, int], str]) -> list[str]:
    lowest = [version for version in found if version[:2] == LOWEST]
    chosen = [max(lowest)] if lowest else []
    newest = max(found, default=None)
    if newest is not None and newest not in chosen:
        chosen.append(newest)
    return [found[version] for version in chosen]


def _test_command() -> list[str]:
    """The README's pytest commands (the apt-get part is the machine's, done once)."""
    line = next(line for line in (ROOT / "README.md").read_text().splitlines() if "python -m pytest" in line)
    return [part.strip() for part in line.split("&&") if "python -m pytest" in part]


def _run_one(interpreter: str, checkout: Path, directory: Path) -> tuple[str, str, float]:
    version = ".".join(map(str, _version(interpreter) or ()))
    venv = directory / f"venv-{version}"
    started = time.monotonic()
    steps = [
        f"{interpreter} -m venv {venv}",
        f"{venv}/bin/python -m pip install -q -e '{checkout}[test]'",
        *(command.replace("python -m pytest", f"{venv}/bin/python -m pytest", 1) for command in _test_command()),
    ]
    results = []
    for number, step in enumerate(steps):
        print("+", step, flush=True)
        done = subprocess.run(["bash", "-c", step], cwd=checkout, capture_output=True, text=True, check=False)
        output = done.stdout + done.stderr
        (directory.parent / f"gputop-python-{version}-step{number}.log").write_text(output)
        sys.stdout.write(output[-3000:])
        if number >= 2:  # a pytest step: its summary, and the next one runs whatever this one said
            results.append(("" if done.returncode == 0 else "FAILED ") + _summary(output))
        elif done.returncode != 0:
            return version, f"FAILED to install: {_summary(output)}", time.monotonic() - started
    verdict = "passed: " if not any(r.startswith("FAILED") for r in results) else "FAILED: "
    return version, verdict + "; ".join(results), time.monotonic() - started


def _summary(output: str) -> str:
    lines = [line for line in output.splitlines() if re.search(r"\d+ (passed|failed|error)", line)]
    return lines[-1].strip("= ") if lines else (output.strip().splitlines() or ["(no output)"])[-1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--python", action="append", default=[], metavar="INTERPRETER")
    args = parser.parse_args()
    found = _found()
    interpreters = args.python or _default_choice(found)
    if not interpreters:
        print("no Python 3.10+ interpreter found besides this one", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory(prefix="gputop-pythons-") as name:
        directory = Path(name)
        # Tests that drop to another user run the venv's Python as that user: the folder must be open to them.
        directory.chmod(0o755)
        checkout = directory / "gputop"
        shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(".git", "_build", "__pycache__", "*.egg-info"))
        for interpreter in interpreters:
            rows.append(_run_one(interpreter, checkout, directory))
    print("\n| Python | result | time |\n| --- | --- | --- |")
    for version, result, seconds in rows:
        print(f"| {version} | {result} | {seconds:.0f} s |")
    return 0 if all(result.startswith("passed") for _, result, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
