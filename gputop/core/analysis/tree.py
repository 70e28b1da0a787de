"""The GPU processes as a tree: workers under their launcher, GPU memory summed on the parent.

Pure: it takes the processes in the order the panel shows them (already
sorted and filtered) and returns the lines of the tree. A process goes under
its parent when the parent is on a GPU too; processes whose common parent is
not on any GPU (a launcher such as ``torchrun``, which holds no GPU memory)
go under a line for that parent when there are at least two of them (never
under PID 1, the parent of every daemon). Siblings
keep the order they came in, a subtree taking the place of its best-placed
member, so sorting and filtering still apply within the tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

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


@dataclass(slots=True)
class _Node:
    index: int | None
    pid: int
    launcher_command: str | None = None
    children: list[_Node] = field(default_factory=list)
    first: int = 0  # the best place in the input of anything in the subtree


def _sum(values: Sequence[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def build_tree(processes: Sequence[ProcessSample]) -> list[TreeLine]:
    """The lines of the process tree, in display order (see the module docstring)."""
    nodes = [_Node(index, process.pid) for index, process in enumerate(processes)]
    # A process on several GPUs has a row on each: its children hang under its first one.
    first_row: dict[int, int] = {}
    for index, process in enumerate(processes):
        first_row.setdefault(process.pid, index)
    orphans_by_parent: dict[int, list[int]] = {}
    parent_of: dict[int, int] = {}
    for index, process in enumerate(processes):
        parent = process.parent_pid
        if parent is None or parent == process.pid:
            continue
        if parent in first_row:
            parent_of[index] = first_row[parent]
        elif parent != _INIT:
            orphans_by_parent.setdefault(parent, []).append(index)
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
            nodes[parent_index].children.append(node)
    launched: set[int] = set()
    for parent, members in orphans_by_parent.items():
        if len({processes[index].pid for index in members}) < 2:
            continue
        launcher = _Node(None, parent, processes[members[0]].parent_command or "")
        launcher.children = [nodes[index] for index in members]
        roots.append(launcher)
        launched.update(members)
    roots.extend(node for index, node in enumerate(nodes) if index not in parent_of and index not in launched)

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
        lines.append(
            TreeLine(
                index=node.index,
                pid=node.pid,
                depth=depth,
                guide=stem + branch,
                subtree_memory=memory[id(node)],
                launcher_command=node.launcher_command,
            )
        )
        below = stem + ("│  " if branch == "├─ " else "   " if branch else "")
        for n, child in enumerate(node.children):
            emit(child, depth + 1, below, "└─ " if n == len(node.children) - 1 else "├─ ")
        lines[position] = replace(lines[position], descendants=len(lines) - position - 1)

    for root in roots:
        emit(root, 0, "", "")
    return lines
