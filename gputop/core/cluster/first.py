"""The first refresh, started before the view is built, so that Textual's start-up and Prometheus' answer overlap."""

from __future__ import annotations

import threading
from collections.abc import Collection
from concurrent.futures import Future
from typing import Protocol

from gputop.core.cluster.model import ClusterState, Partial


class Fetcher(Protocol):
    def fetch(
        self,
        history_for: Collection[str] = (),
        detail_for: str | None = None,
        timeout_s: float | None = None,
        partial: Partial | None = None,
    ) -> ClusterState: ...


class FirstRefresh:
    """One ``fetch`` on its own thread, begun at once; whoever waits for it also gets each part as it comes."""

    def __init__(self, reader: Fetcher, timeout_s: float) -> None:
        self._lock = threading.Lock()
        self._latest: ClusterState | None = None
        self._listener: Partial | None = None
        self._done: Future[ClusterState] = Future()
        threading.Thread(target=self._run, args=(reader, timeout_s), name="first-refresh", daemon=True).start()

    def _run(self, reader: Fetcher, timeout_s: float) -> None:
        try:
            state = reader.fetch((), None, timeout_s, self._partial)
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits, who reports it
            self._done.set_exception(error)
        else:
            self._done.set_result(state)

    def _partial(self, state: ClusterState) -> None:
        # Under the lock: a listener that attaches now gets the parts in the order they came.
        with self._lock:
            self._latest = state
            if self._listener is not None:
                self._listener(state)

    def result(self, listener: Partial) -> ClusterState:
        """The whole refresh (raising what it raised); ``listener`` gets the latest part at once, and each later one."""
        with self._lock:
            self._listener = listener
            if self._latest is not None:
                listener(self._latest)
        return self._done.result()
