"""Shared fixtures: the fake NVML library (see tests/fakenvml)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import SCENARIO_ENV, FakeNvml, build_library


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
