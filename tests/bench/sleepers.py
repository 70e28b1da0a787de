"""Real idle processes for benchmarks to list as GPU processes."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sleepers(count: int) -> Iterator[list[int]]:
    """Start `count` sleeping processes; yield their PIDs; end them afterwards."""
    processes = [subprocess.Popen(["sleep", "3600"]) for _ in range(count)]
    try:
        yield [process.pid for process in processes]
    finally:
        for process in processes:
            process.kill()
        for process in processes:
            process.wait()
