"""The binding installed in this Python, for real: ``tests/compat/run_bindings.py`` runs this in each of its
venvs, saying in ``GPUTOP_BINDING_EXPECT`` whether gputop must run on it (``run``) or refuse it
(``refuse``: the old standalone pynvml package). Outside such a venv it skips."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakenvml import NOT_AVAILABLE, GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.sources.binding import SUPPORTED

EXPECT = os.environ.get("GPUTOP_BINDING_EXPECT")
pytestmark = pytest.mark.skipif(EXPECT is None, reason="run by tests/compat/run_bindings.py in a venv of its own")
NEXT_STEP = " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU\n"


def gputop(fake_nvml: FakeNvml, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True, text=True,
                          env=fake_nvml.env(), timeout=60)


def pynvml_file() -> str:
    spec = importlib.util.find_spec("pynvml")
    assert spec is not None and spec.origin is not None
    return spec.origin


def checks(document: dict[str, Any]) -> dict[str, tuple[str, str, str | None]]:
    return {c["name"]: (c["status"], c["found"], c["advice"]) for c in document["checks"]}


@pytest.mark.skipif(EXPECT != "run", reason="this binding is one gputop refuses")
def test_gputop_lists_processes_through_this_binding_and_doctor_says_it_can_run(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu(memory_total=80 * GiB).process(gpu=0, pid=4242, used=3 * GiB, kind="C")
                    .process(gpu=0, pid=4343, used=NOT_AVAILABLE, kind="G"))
    result = gputop(fake_nvml, "--json")
    assert (result.returncode, result.stderr) == (0, "")
    listed = [(p["pid"], p["type"], p["gpu_memory"]) for p in json.loads(result.stdout)["gpus"][0]["processes"]]
    assert sorted(listed) == [(4242, "C", 3 * GiB), (4343, "G", None)]
    once = gputop(fake_nvml, "--once")
    assert (once.returncode, once.stderr) == (0, "")
    doctor = gputop(fake_nvml, "doctor", "--json")
    assert (doctor.returncode, doctor.stderr) == (0, "")
    version = importlib.metadata.version("nvidia-ml-py")
    assert checks(json.loads(doctor.stdout))["pynvml"] == ("ok", f"nvidia-ml-py {version} ({pynvml_file()})", None)


@pytest.mark.skipif(EXPECT != "refuse", reason="this binding is one gputop runs on")
def test_gputop_and_doctor_refuse_the_old_standalone_pynvml_saying_what_to_remove_and_install(
    fake_nvml_library: Path, tmp_path: Path
) -> None:
    # Not the fake_nvml fixture: its teardown resets nvidia-ml-py's state in this process, which this
    # pynvml does not have.
    fake_nvml = FakeNvml(tmp_path / "fakenvml")
    fake_nvml.write(Scenario().gpu())
    words = (
        f"`import pynvml` finds the old standalone pynvml {importlib.metadata.version('pynvml')} package"
        f" ({pynvml_file()}), not nvidia-ml-py"
    )
    advice = f"`pip uninstall pynvml`, then `pip install --force-reinstall '{SUPPORTED}'`"
    result = gputop(fake_nvml, "--json")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"gputop: NVML is not available: {words}: {advice}{NEXT_STEP}"
    doctor = gputop(fake_nvml, "doctor", "--json")
    assert (doctor.returncode, doctor.stderr) == (1, "")
    document = json.loads(doctor.stdout)
    assert document["summary"] == f"gputop cannot run: {words}"
    assert checks(document)["pynvml"] == ("error", words, advice)
