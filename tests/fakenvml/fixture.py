"""The object behind the `fake_nvml` pytest fixture."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pynvml

from .build import LIBRARY_NAME, build_library
from .scenario import Scenario

SCENARIO_ENV = "FAKE_NVML_SCENARIO"


class FakeNvml:
    """A scenario file plus the fake library, for this process or a subprocess.

    In a test:  fake_nvml.write(Scenario().gpu()); fake_nvml.load()  # pynvml now uses it
    For gputop: subprocess.run(["gputop", "--json"], env=fake_nvml.env())
    """

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.scenario_path = directory / "scenario.txt"
        self._library: ctypes.CDLL | None = None

    def write(self, scenario: Scenario) -> Path:
        """Write the scenario; a loaded library picks it up on its next call."""
        return scenario.write(self.scenario_path)

    def library_dir(self, omit: Iterable[str] = ()) -> Path:
        """The directory to put on LD_LIBRARY_PATH (built on demand)."""
        return build_library(omit)

    def env(
        self, omit: Iterable[str] = (), base: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """A full environment for a subprocess that should see the fake driver."""
        env = dict(os.environ if base is None else base)
        library_path = str(self.library_dir(omit))
        if env.get("LD_LIBRARY_PATH"):
            library_path += os.pathsep + env["LD_LIBRARY_PATH"]
        env["LD_LIBRARY_PATH"] = library_path
        env[SCENARIO_ENV] = str(self.scenario_path)
        return env

    def load(self, omit: Iterable[str] = ()) -> ctypes.CDLL:
        """Make pynvml in this process use the fake library (undone by unload())."""
        os.environ[SCENARIO_ENV] = str(self.scenario_path)
        library = ctypes.CDLL(str(self.library_dir(omit) / LIBRARY_NAME))
        reset_pynvml(library)
        self._library = library
        return library

    def unload(self) -> None:
        """Forget the library in pynvml, so the next test starts clean."""
        reset_pynvml(None)
        self._library = None

    def call_count(self, symbol: str) -> int:
        """How many times the loaded library's `symbol` was called (since reset_counts)."""
        counter = self._hook("fake_nvml_call_count")
        counter.restype = ctypes.c_ulonglong
        counter.argtypes = [ctypes.c_char_p]
        return int(counter(symbol.encode()))

    def sleeping(self) -> int:
        """How many calls into the loaded library are asleep in a delay right now."""
        return int(self._hook("fake_nvml_sleeping")())

    def event_sets_in_use(self) -> int:
        """How many event sets the loaded library has handed out and not had freed."""
        return int(self._hook("fake_nvml_event_sets_in_use")())

    def reset_counts(self) -> None:
        """Zero the call counters."""
        self._hook("fake_nvml_reset_counts")()

    def _hook(self, name: str) -> ctypes._NamedFuncPointer:
        if self._library is None:
            raise RuntimeError("load() the fake library first")
        return getattr(self._library, name)  # type: ignore[no-any-return]


def reset_pynvml(library: ctypes.CDLL | None) -> None:
    """Point pynvml at `library` (None: not loaded) and drop its cached state."""
    with pynvml.libLoadLock:
        pynvml.nvmlLib = library
        pynvml._nvmlGetFunctionPointer_cache.clear()
        pynvml._nvmlLib_refcount = 0


@contextmanager
def loaded(fake: FakeNvml, omit: Iterable[str] = ()) -> Iterator[ctypes.CDLL]:
    """load() for the duration of a with block."""
    try:
        yield fake.load(omit)
    finally:
        fake.unload()
