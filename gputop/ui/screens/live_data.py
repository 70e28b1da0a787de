"""What the screens over the main one read of the data: the app builds it, Navigation hands it on.

The process and detail screens take this, not the app: each reads only these functions, so either can be
built and tested with plain ones (no running app), and neither imports the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gputop.ui.widgets.process_table import LIVE

if TYPE_CHECKING:
    from gputop.core.analysis.alerts import AlertEvent
    from gputop.core.analysis.diagnosis import Diagnoses
    from gputop.core.analysis.forecast import Forecasts
    from gputop.core.analysis.history import History
    from gputop.core.host.procdetail import ProcessDetail
    from gputop.core.model import ProcessIdentity, Snapshot
    from gputop.core.recording.replay import Replay
    from gputop.ui.widgets.rows import SortOrder


@dataclass(frozen=True, kw_only=True, slots=True)
class LiveData:
    """The app's data as a screen over the main one reads it, each as of the newest tick shown."""

    current: Callable[[], Snapshot | None]  # the snapshot on screen (None before the first)
    history: History  # the session's series; read under the Watcher's lock (the app shows under it)
    forecasts: Callable[[], Forecasts | None]
    diagnoses: Callable[[], Diagnoses | None]
    raised: Callable[[], tuple[AlertEvent, ...]]  # the alerts active as of the newest tick
    sort: Callable[[], SortOrder]  # the process panel's, which the detail screen's table follows
    process_detail: Callable[[ProcessIdentity], ProcessDetail]  # the host facts of one process (slow: a worker)
    replay: Replay | None = None  # where a replay is, in the detail screen's header
    allows: Callable[[str], bool] = LIVE  # whether an action acts in this mode (read-only, a replay): a table's keys


__all__ = ["LiveData"]
