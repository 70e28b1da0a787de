"""u: pick one user among those with GPU processes ("all" first), each with its processes and GPU memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text
from textual.widgets.option_list import Option

from gputop.core.format import fmt_bytes, safe_text
from gputop.core.model import Snapshot
from gputop.ui.screens.pick import PickScreen

# A name longer than this is cut, so the counts stay in the dialog.
_NAME_WIDTH = 32


@dataclass(frozen=True, slots=True)
class UserUsage:
    """What one user holds: processes (one per process, however many GPUs it uses) and GPU memory."""

    processes: int
    gpu_memory: int | None  # None: no process of the user reports its memory


def user_usage(snapshot: Snapshot | None) -> dict[str, UserUsage]:
    """Each user's processes and GPU memory in ``snapshot``; a process on two GPUs counts once."""
    if snapshot is None:
        return {}
    processes: dict[str, set[tuple[int, float | None]]] = {}
    memory: dict[str, int | None] = {}
    for process in snapshot.processes():
        if process.user is None:
            continue
        processes.setdefault(process.user, set()).add(process.identity)
        known = memory.get(process.user)
        if process.gpu_memory is not None:
            memory[process.user] = process.gpu_memory + (known or 0)
        else:
            memory.setdefault(process.user, None)
    return {user: UserUsage(len(found), memory[user]) for user, found in processes.items()}


def _label(name: str, width: int, usage: UserUsage | None) -> Text:
    if usage is None:
        return Text(name)
    count = f"{usage.processes} process{'es' if usage.processes != 1 else ''}"
    return Text.assemble(f"{name:<{width}} ", (f"{count:>12}", "dim"), (f" {fmt_bytes(usage.gpu_memory):>9}", "cyan"))


class UserPickScreen(PickScreen):
    """Returns the chosen user, ALL for every user, or None when cancelled."""

    ALL = "\x00all"

    def __init__(self, users: list[str], current: str | None, usage: Mapping[str, UserUsage] | None = None) -> None:
        self.users = users
        usage = usage or {}
        options = [Option(Text("all", style="bold"), id=self.ALL)]
        names = [safe_text(user, _NAME_WIDTH) for user in users]
        width = max((len(name) for name in names), default=0)
        for name, user in zip(names, users, strict=True):
            options.append(Option(_label(name, width, usage.get(user)), id=user))
        highlighted = 1 + users.index(current) if current in users else 0
        super().__init__("Show processes of", options, highlighted, id="user-screen")
