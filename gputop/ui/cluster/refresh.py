"""What the cluster app hands its screens at each refresh: the newest fleet, and how Prometheus answered.

The app reads Prometheus on its clock; each answer (a whole refresh, a part of the first one) or failure
becomes one ``Refresh``, handed to every screen open that shows the fleet (``show_refresh``). A screen
keeps the last one it was handed: nothing below the app asks the app for data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from gputop.core.cluster.client import ErrorKind
from gputop.core.cluster.model import ClusterState


@dataclass(frozen=True, slots=True)
class Refresh:
    """The newest refresh as the app has it, and Prometheus's last answer (for the status line)."""

    url: str
    state: ClusterState | None  # the newest hosts and counts; None until Prometheus first answered
    part: bool = False  # a part of the first refresh (the rest is still coming in)
    error: tuple[str, ErrorKind] | None = None  # why the last refresh was not answered; None: it was
    took_s: float | None = None  # how long the last answered refresh took
    slow: bool = False  # the last answer took more than half the interval
    next_s: float = 0.0  # when Prometheus is asked again

    @property
    def answered(self) -> bool:
        """A whole refresh came in (not a part of the first, not a failure)."""
        return self.state is not None and not self.part and self.error is None


@runtime_checkable
class ShowsRefreshes(Protocol):
    """A screen that shows the fleet: the app hands it every refresh while it is open."""

    def show_refresh(self, refresh: Refresh) -> None: ...
