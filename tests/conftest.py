"""Shared fixtures: the fake NVML library (see tests/fakenvml) and real idle processes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import SCENARIO_ENV, FakeNvml, build_library


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
