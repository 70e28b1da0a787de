"""The process panel's tree view: the rows under their launchers and sessions, folded subtrees, and what a
launcher's line says when it cannot act (it is made from its workers)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace

from gputop.core.format import safe_text
from gputop.core.host.ancestry import Ancestor
from gputop.core.model import ProcessSample
from gputop.core.output.command_text import command_text
from gputop.ui.widgets.row_order import sort_rows
from gputop.ui.widgets.rows import ProcessRow, RowKey, SortOrder


def tree_rows(
    rows: list[ProcessRow], order: SortOrder, ancestors: Mapping[int, Ancestor] | None = None
) -> list[ProcessRow]:
    """The rows as a tree (see core.analysis.tree), sorted within it: launchers (and the processes above them,
    ``ancestors``, up to the session) get a row of their own."""
    from gputop.core.analysis.tree import build_tree  # here: only the tree view (t) needs it
    from gputop.core.host.ancestry import user_name

    ordered = sort_rows(rows, order)
    lines = build_tree([row.process for row in ordered], ancestors)
    out = []
    for position, line in enumerate(lines):
        subtree = line.subtree_memory if line.descendants or line.index is None else None
        if line.index is not None:
            out.append(replace(ordered[line.index], guide=line.guide, subtree_memory=subtree))
            continue
        # A launcher: what its workers say of it (the command line read with theirs), nothing of its own.
        worker = lines[position + 1].index  # a launcher line is followed by its first worker's
        first = ordered[worker if worker is not None else 0]
        users = {row.process.user for row in ordered if row.process.parent_pid == line.pid}
        # A session's line names what it runs under (tmux, sshd): the chain above it, collapsed.
        under = f"  (under {', '.join(line.above)})" if line.above else ""
        launcher = ProcessSample(
            pid=line.pid,
            gpu_index=first.process.gpu_index,
            type="",
            started=line.started,
            user=user_name(line.uid) if line.uid is not None else users.pop() if len(users) == 1 else None,
            name=command_text(line.launcher_command).split(" ", 1)[0] or None,
            command=(line.launcher_command or "") + under,
            container=first.process.container,
            visible=True,
        )
        out.append(
            ProcessRow(
                process=launcher,
                gpu_memory_total=None,
                now=first.now,
                guide=line.guide,
                subtree_memory=subtree,
                launcher=True,
            )
        )
    return out


def fold_rows(rows: list[ProcessRow], folded: Collection[RowKey]) -> list[ProcessRow]:
    """The tree's ``rows`` with the subtree under each ``folded`` line hidden, that line saying how many
    processes it hides (``[+3]``); a folded line with nothing under it shows as it is."""
    out: list[ProcessRow] = []
    hiding_deeper_than: int | None = None
    for position, row in enumerate(rows):
        depth = len(row.guide)
        if hiding_deeper_than is not None:
            if depth > hiding_deeper_than:
                continue
            hiding_deeper_than = None
        if row.key in folded:
            below = []
            for other in rows[position + 1 :]:
                if len(other.guide) <= depth:
                    break
                below.append(other)
            if below:
                hidden = {other.process.identity for other in below if not other.launcher and not other.unattributed}
                out.append(replace(row, folded=max(1, len(hidden))))
                hiding_deeper_than = depth
                continue
        out.append(row)
    return out


# Why a launcher's line has no process behind it, by the snapshot's source (else: a live machine).
_UNREAD_LAUNCHER = {
    "demo": "the demo simulates its workers, not the launcher (there is no such process)",
    "replay": "a recording holds its workers, nothing of the launcher (there is no such process here)",
}
_UNREAD_LIVE_LAUNCHER = (
    "its start time could not be read from /proc (gputop in another PID namespace, or the launcher has exited),"
    " so it cannot be told from a process that reused its PID"
)


def launcher_note(row: ProcessRow, source: str, signalling: bool = False) -> str:
    """What Enter (or k, ``signalling``) says on a launcher's row whose start time is unknown; ``source``
    is the snapshot's (``demo``, ``replay``, else a live machine): the line is made from its workers."""
    done = "not signalled" if signalling else "cannot be read from here"
    why = _UNREAD_LAUNCHER.get(source, _UNREAD_LIVE_LAUNCHER)
    return f"PID {row.process.pid} ({safe_text(row.process.name)}) {done}: {why}; select one of its workers"
