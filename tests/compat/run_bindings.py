"""Run the NVML tests on each nvidia-ml-py gputop admits, each in a throwaway venv, and print a table.

    python tests/compat/run_bindings.py                         # every binding below
    python tests/compat/run_bindings.py --only 12.535           # the cases whose spec holds this text
    python tests/compat/run_bindings.py --binding nvidia-ml-py==12.560.30   # another one, expected to run

Each venv is made with ``--system-site-packages`` (the project's other dependencies and test tools
come from this Python) and the binding is installed into it with ``--no-deps --ignore-installed``, so
that its module and dist-info shadow this Python's, even where this Python has the same version. The
tests run on a copy of this checkout taken at the start, with the fake libnvidia-ml.so.1: the NVML
tests (the source, the field batch, the command line, the diagnoses' reads, doctor, faults and stalls,
the no-false-alarm run) and ``tests/compat/test_installed_binding.py`` (gputop lists processes through
the installed module, and doctor agrees; or, for the old standalone pynvml package, both refuse it in
the same words). The global Python is never touched. Exit status: 0 when every case passed. The table
is the one in docs/trust.md, "The binding".

The default cases are the lowest admitted nvidia-ml-py, the top of the 12.535-12.555 range that lacked
``c_nvmlProcessInfo_v3_t`` (the struct gputop's process lists once took from pynvml), the newest 12.x
and 13.x, the deprecated ``pynvml`` wrapper (which depends on nvidia-ml-py and warns on import) and the
old standalone ``pynvml`` package, which gputop refuses (versions as the registry listed them,
``pip index versions nvidia-ml-py``, 2026-12-05).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

from run_compat import copy_checkout, run

# (what pip installs, what gputop must do with it, what the case is)
CASES = [
    ("nvidia-ml-py==12.535.77", "run", "the lowest admitted"),
    ("nvidia-ml-py==12.555.43", "run", "the newest 12.5xx of the range once refused"),
    ("nvidia-ml-py==12.575.51", "run", "the newest 12.x"),
    ("nvidia-ml-py==13.615.71", "run", "the newest 13.x"),
    ("pynvml==13.0.1 nvidia-ml-py==13.615.71", "run", "the deprecated pynvml wrapper"),
    ("pynvml==11.5.3", "refuse", "the old standalone pynvml package"),
]
NVML_TESTS = [
    "tests/compat/test_installed_binding.py",
    "tests/test_bindings.py",
    "tests/test_nvml_source.py",
    "tests/test_nvml_batch.py",
    "tests/test_nvml_fake.py",
    "tests/test_cli_nvml.py",
    "tests/test_trust_nvml.py",
    "tests/diagnosis/test_nvml_reads.py",
    "tests/test_doctor.py",
    "tests/test_activity_json.py",
    "tests/test_faults.py",
    "tests/test_cli_faults.py",
    "tests/test_stall.py",
    "tests/test_cli_stall.py",
    "tests/test_visibility.py",
    "tests/test_podresources.py",
    "tests/test_fake_delay.py",
    "tests/test_no_false_alarm.py",
]
# What a venv's Python says it imports: the module's file and the distributions that may own it.
WHICH = (
    "import importlib.metadata as m, importlib.util as u\n"
    "def v(name):\n"
    "    try:\n"
    "        return m.version(name)\n"
    "    except m.PackageNotFoundError:\n"
    "        return '-'\n"
    "print(f\"nvidia-ml-py {v('nvidia-ml-py')}, pynvml {v('pynvml')}: {u.find_spec('pynvml').origin}\")\n"
)


@dataclass(frozen=True)
class Outcome:
    spec: str
    expect: str
    installed: str
    passed: int
    failed: int
    skipped: int
    seconds: float


def run_case(spec: str, expect: str, checkout: Path, directory: Path, pytest_args: list[str]) -> Outcome:
    """Make the case's venv, install its binding, run the tests; the counts from pytest's JUnit XML."""
    venv = directory / ("venv-" + spec.replace(" ", "+").replace("=", ""))
    python = str(venv / "bin" / "python")
    started = time.monotonic()
    steps = [
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
        [python, "-m", "pip", "install", "--quiet", "--no-deps", "--ignore-installed", "--disable-pip-version-check",
         *spec.split()],
    ]
    for step in steps:
        if run(step) != 0:
            return Outcome(spec, expect, "not installed", 0, 0, 0, time.monotonic() - started)
    installed = subprocess.run([python, "-W", "ignore", "-c", WHICH], capture_output=True, text=True).stdout.strip()
    print(installed, flush=True)
    report = directory / f"{venv.name}.xml"
    tests = NVML_TESTS if expect == "run" else NVML_TESTS[:1]
    env = dict(os.environ, PYTHONPATH=str(checkout), GPUTOP_BINDING_EXPECT=expect)
    env.pop("PYTHONHOME", None)
    run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", *tests, *pytest_args],
        cwd=checkout, env=env)
    seconds = time.monotonic() - started
    if not report.exists():
        return Outcome(spec, expect, installed, 0, 0, 0, seconds)
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None
    total, skipped = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
    failed = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
    return Outcome(spec, expect, installed, total - failed - skipped, failed, skipped, seconds)


def table(outcomes: list[Outcome], cases: dict[str, str]) -> str:
    lines = [
        "| installed with pip | case | gputop must | distributions in the venv | passed | failed | skipped | time |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        found = o.installed.split(":", 1)[0]
        lines.append(
            f"| `{o.spec}` | {cases.get(o.spec, 'asked for')} | {o.expect} | {found} | {o.passed} | {o.failed}"
            f" | {o.skipped} | {o.seconds:.0f} s |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="run only the default cases whose spec holds this text")
    parser.add_argument("--binding", action="append", default=[], metavar="SPEC",
                        help="another pip spec to run the NVML tests on (repeatable); gputop must run on it")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    args = parser.parse_args()
    chosen = [(spec, expect) for spec, expect, _ in CASES if args.only in spec]
    chosen += [(spec, "run") for spec in args.binding]
    with tempfile.TemporaryDirectory(prefix="gputop-bindings-") as directory:
        os.chmod(directory, 0o755)  # tests that drop to user nobody read the checkout copy
        checkout = copy_checkout(Path(directory))
        outcomes = [run_case(spec, expect, checkout, Path(directory), args.pytest_args) for spec, expect in chosen]
    print()
    print(table(outcomes, {spec: what for spec, _, what in CASES}))
    return 0 if all(o.failed == 0 and o.passed > 0 for o in outcomes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
