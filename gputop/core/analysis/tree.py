"""The GPU processes as a tree: each under the processes above it, GPU memory summed on the parent.

Pure: it takes the processes in the order the panel shows them (already
sorted and filtered), and what is known of the processes above them
(core.host.ancestry, read from /proc: a launcher such as ``torchrun`` holds no GPU
memory, so NVML never lists it), and returns the lines of the tree. A process
goes under its parent when the parent is on a GPU too; otherwise under a line
for its parent (a launcher gets its line for one worker as for many), and that
line under its own parent, up to the session (a shell, sshd, tmux: the chain
above it is named on the session's line). PID 1, the parent of every daemon,
never gets a line. Where nothing is known above a parent (the demo, a
recording, another PID namespace) its line is the top. Siblings keep the
order they came in, a subtree taking the place of its best-placed member, so
sorting and filtering still apply within the tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from gputop.core.host.ancestry import Ancestor
from gputop.core.model import ProcessSample

_INIT = 1


@dataclass(frozen=True, slots=True)
class TreeLine:
    """One line of the tree."""

    index: int | None  # the process's place in the input; None for a launcher not on any GPU
    pid: int
    depth: int
    guide: str  # the branches drawn before the line: "", "├─ ", "│  └─ ", ...
    subtree_memory: int | None  # GPU memory of this process and everything under it; None when none is known
    launcher_command: str | None = None  # a launcher line: the launcher's command line
    descendants: int = 0  # lines under this one
    # A launcher line, when /proc was read: its start time (its identity, for a signal), its owner's
    # user ID, and for a session the names of the processes above it (nearest first).
    started: float | None = None
    uid: int | None = None
    above: tuple[str, ...] = ()


@dataclass(slots=True)
class _Node:
    index: int | None
    pid: int
    launcher_command: str | None = None
    ancestor: Ancestor | None = None
    children: list[_Node] = field(default_factory=list)
    first: int = 0  # the best place in the input of anything in the subtree


def _sum(values: Sequence[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def build_tree(
    processes: Sequence[ProcessSample], ancestors: Mapping[int, Ancestor] | None = None
) -> list[TreeLine]:
    """The lines of the process tree, in display order (see the module docstring)."""
    ancestors = ancestors or {}
    nodes = [_Node(index, process.pid) for index, process in enumerate(processes)]
    # A process on several GPUs has a row on each: its children hang under its first one.
    first_row: dict[int, int] = {}
    for index, process in enumerate(processes):
        first_row.setdefault(process.pid, index)
    parent_of: dict[int, int] = {}
    for index, process in enumerate(processes):
        parent = process.parent_pid
        if parent is not None and parent != process.pid and parent in first_row:
            parent_of[index] = first_row[parent]
    # Break any cycle a bad reading could make: a row may not descend from itself.
    for index in list(parent_of):
        seen = {index}
        walker = parent_of.get(index)
        while walker is not None:
            if walker in seen:
                del parent_of[index]
                break
            seen.add(walker)
            walker = parent_of.get(walker)
    roots: list[_Node] = []
    for index, node in enumerate(nodes):
        parent_index = parent_of.get(index)
        if parent_index is not None:
            node_parent = nodes[parent_index]
            node_parent.children.append(node)
    launchers: dict[int, _Node] = {}

    def launcher(pid: int, command: str | None, chain: frozenset[int] = frozenset()) -> _Node:
        """The line of a process above the GPU ones, made once, hung under its own parent's line."""
        node = launchers.get(pid)
        if node is not None:
            return node
        known = ancestors.get(pid)
        node = _Node(None, pid, known.command if known is not None and known.command else command or "", known)
        launchers[pid] = node
        up = None if known is None or known.session else known.parent_pid
        if up is not None and up != _INIT and up in ancestors and up not in first_row and up not in chain:
            launcher(up, None, chain | {pid}).children.append(node)
        else:
            roots.append(node)
        return node

    for index, process in enumerate(processes):
        parent = process.parent_pid
        if index in parent_of or parent is None or parent <= 0 or parent in (_INIT, process.pid) or parent in first_row:
            if index not in parent_of:
                roots.append(nodes[index])
            continue
        launcher(parent, process.parent_command).children.append(nodes[index])

    memory: dict[int, int | None] = {}

    def settle(node: _Node) -> int | None:
        """Order the subtree, note its best place, and return its GPU memory."""
        own = [] if node.index is None else [processes[node.index].gpu_memory]
        below = [settle(child) for child in node.children]
        node.children.sort(key=lambda child: child.first)
        places = [child.first for child in node.children]
        if node.index is not None:
            places.append(node.index)
        node.first = min(places)
        total = _sum(own + below)
        memory[id(node)] = total
        return total

    for root in roots:
        settle(root)
    roots.sort(key=lambda root: root.first)

    lines: list[TreeLine] = []

    def emit(node: _Node, depth: int, stem: str, branch: str) -> None:
        position = len(lines)
        known = node.ancestor
        lines.append(
            TreeLine(
                index=node.index,
                pid=node.pid,
                depth=depth,
                guide=stem + branch,
                subtree_memory=memory[id(node)],
                launcher_command=node.launcher_command,
                started=None if known is None else known.started,
                uid=None if known is None else known.uid,
                above=() if known is None else known.above,
            )
        )
        below = stem + ("│  " if branch == "├─ " else "   " if branch else "")
        for n, child in enumerate(node.children):
            emit(child, depth + 1, below, "└─ " if n == len(node.children) - 1 else "├─ ")
        lines[position] = replace(lines[position], descendants=len(lines) - position - 1)

    for root in roots:
        emit(root, 0, "", "")
    return lines
