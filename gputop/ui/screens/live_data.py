"""What the screens over the main one are given besides the ticks: the app builds it, Navigation hands it on.

A screen over the main one is handed the tick shown when it opens and every tick after (``LiveScreen.show``);
this is the rest it reads: the series, the host facts of a process, the replay, the mode. Each screen can
be built and tested with plain values (no running app), and none imports the app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gputop.ui.widgets.process_table import LIVE

if TYPE_CHECKING:
    from gputop.core.analysis.history import History
    from gputop.core.host.procdetail import ProcessDetail
    from gputop.core.model import ProcessIdentity
    from gputop.core.recording.replay import Replay


@dataclass(frozen=True, kw_only=True, slots=True)
class LiveData:
    """What a screen over the main one reads besides the ticks it is handed."""

    history: History  # the session's series; read under the Watcher's lock (the app shows under it)
    process_detail: Callable[[ProcessIdentity], ProcessDetail]  # the host facts of one process (slow: a worker)
    replay: Replay | None = None  # where a replay is, in the detail screen's header
    allows: Callable[[str], bool] = LIVE  # whether an action acts in this mode (read-only, a replay): a table's keys


__all__ = ["LiveData"]
