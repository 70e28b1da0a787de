"""What the title bar and the detail screen say of a replay: where it is, and whether the recording is damaged."""

from __future__ import annotations

from rich.text import Text

from gputop.core.format import fmt_duration
from gputop.core.recording.replay import Replay, clock_text


def replay_status(replay: Replay) -> str:
    """Where the replay is: "3/10 12:00:05 +5s 2x paused"."""
    state = "paused" if replay.paused else "playing"
    return (
        f"{replay.position + 1}/{len(replay)} {clock_text(replay.current.timestamp)}"
        f" +{fmt_duration(replay.elapsed_s)} {replay.speed:g}x {state}"
    )


def replay_title(replay: Replay) -> Text:
    """The title bar's mode during a replay: REPLAY, where it is, and whether the recording is damaged."""
    text = Text()
    text.append("  REPLAY ", style="bold reverse magenta")
    text.append(f" {replay_status(replay)}", style="bold")
    if replay.damage is not None:
        text.append(f"  ⚠ damaged: ends after snapshot {len(replay)}", style="bold red")
    return text
