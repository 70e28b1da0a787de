"""Shared fixtures: the fake NVML library (see tests/fakenvml) and real idle processes."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fakenvml import SCENARIO_ENV, FakeNvml, Scenario, build_library

from gputop.ui.terminal.textual_imports import YOUNG_COLLECTION_THRESHOLD

if TYPE_CHECKING:  # imported where used: an old standalone pynvml, which gputop refuses, cannot import it
    from gputop.core.sources.nvml import NvmlSource


def _bytecode_outside_the_tree() -> None:
    """With PYTHONDONTWRITEBYTECODE=1 (as on the shared development machine) every pytest process (each
    xdist worker, the serial run) rewrote the asserts of every test module again, about 5 CPU seconds
    each, and every ``python -m gputop`` a test starts compiled gputop again. The bytecode goes to a
    cache outside the tree instead (Python's own pycache_prefix, checked against each source's mtime
    and size as usual), so the checkout stays as clean as the variable keeps it."""
    if not sys.dont_write_bytecode or sys.pycache_prefix:
        return
    prefix = str(Path(tempfile.gettempdir()) / f"gputop-test-pycache-{os.getuid()}")
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
    os.environ["PYTHONPYCACHEPREFIX"] = prefix  # the processes the tests start
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


_bytecode_outside_the_tree()


def pytest_collection_finish(session: pytest.Session) -> None:
    """The collector as gputop sets it for its TUI (ui/terminal/textual_imports.py): what is loaded by
    now frozen, the youngest generation collected every YOUNG_COLLECTION_THRESHOLD allocations. At
    Python's default (700) the cyclic collector took ~20% of a Pilot test's CPU time, scanning the
    modules of the whole collected suite again and again."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


@pytest.fixture(autouse=True)
def private_config_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own XDG_CONFIG_HOME: nothing reads or writes the real ~/.config."""
    home = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return home


@pytest.fixture(scope="session")
def fake_nvml_library() -> Path:
    """Directory with the full fake libnvidia-ml.so.1, compiled once per session."""
    return build_library()


@pytest.fixture
def fake_nvml(
    fake_nvml_library: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[FakeNvml]:
    """A fake NVML driver: write() a Scenario, then load() it here or pass env() to a subprocess."""
    monkeypatch.delenv(SCENARIO_ENV, raising=False)
    fake = FakeNvml(tmp_path / "fakenvml")
    yield fake
    fake.unload()


@pytest.fixture
def nvml_source(fake_nvml: FakeNvml) -> Iterator[Callable[..., NvmlSource]]:
    """Opens an NvmlSource on the fake driver with a scenario, the library without the symbols in ``omit``
    (call counts zeroed); closed after the test."""
    opened: list[NvmlSource] = []

    def start(scenario: Scenario, omit: Iterable[str] = ()) -> NvmlSource:
        fake_nvml.write(scenario)
        fake_nvml.load(omit)
        fake_nvml.reset_counts()  # the library stays loaded from one test to the next
        from gputop.core.sources.nvml import NvmlSource

        nvml = NvmlSource()
        nvml.open()
        opened.append(nvml)
        return nvml

    yield start
    for nvml in opened:
        nvml.close()


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A real idle process (`sleep 600`), ended after the test."""
    process = subprocess.Popen(["sleep", "600"])
    yield process
    process.kill()
    process.wait()


THREADED = (
    "import threading, time\n"
    "thread = threading.Thread(target=time.sleep, args=(600,), daemon=True)\n"
    "thread.start()\n"
    "print(thread.native_id, flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.fixture
def threaded_process() -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A real idle process with a second thread, and that thread's ID (which /proc answers for too)."""
    process = subprocess.Popen([sys.executable, "-c", THREADED], stdout=subprocess.PIPE)
    assert process.stdout is not None
    thread_id = int(process.stdout.readline())
    yield process, thread_id
    process.kill()
    process.wait()
