"""The process tree: workers under their launcher, GPU memory summed on the parent, the panel's
order kept within it."""

from __future__ import annotations

from gputop.core.analysis.tree import TreeLine, build_tree
from gputop.core.host.ancestry import Ancestor
from gputop.core.model import ProcessSample

GIB = 1 << 30
TORCHRUN = "torchrun --nproc-per-node 2 train.py"


def proc(
    pid: int, gpu: int, gib: float | None, parent: int | None = 1, parent_command: str | None = "bash"
) -> ProcessSample:
    memory = None if gib is None else int(gib * GIB)
    return ProcessSample(
        pid=pid, gpu_index=gpu, type="C", gpu_memory=memory, parent_pid=parent, parent_command=parent_command
    )


def drawn(lines: list[TreeLine], processes: list[ProcessSample]) -> list[str]:
    """Each line as the panel would label it: guide, PID, summed memory in GiB."""
    out = []
    for line in lines:
        what = f"launcher {line.launcher_command}" if line.index is None else f"row {line.index}"
        gib = None if line.subtree_memory is None else line.subtree_memory / GIB
        out.append(f"{line.guide}{line.pid} {what} {gib} +{line.descendants}")
    return out


def test_torchrun_workers_go_under_a_launcher_line_with_their_memory_summed() -> None:
    processes = [
        proc(201, 0, 30, 200, TORCHRUN),
        proc(300, 2, 10),
        proc(202, 1, 20, 200, TORCHRUN),
    ]
    assert drawn(build_tree(processes), processes) == [
        f"200 launcher {TORCHRUN} 50.0 +2",
        "├─ 201 row 0 30.0 +0",
        "└─ 202 row 2 20.0 +0",
        "300 row 1 10.0 +0",
    ]


def test_a_gpu_process_with_gpu_children_sums_them_and_nests_deeper() -> None:
    processes = [
        proc(11, 0, 4, 10),  # a worker of 10
        proc(10, 0, 2, 1),  # the server itself
        proc(12, 1, 4, 10),
        proc(13, 1, 1, 12),  # a helper of worker 12
        proc(20, 3, 8, 1, "sshd"),
    ]
    assert drawn(build_tree(processes), processes) == [
        "10 row 1 11.0 +3",  # placed where its best member (row 0) is
        "├─ 11 row 0 4.0 +0",
        "└─ 12 row 2 5.0 +1",
        "   └─ 13 row 3 1.0 +0",
        "20 row 4 8.0 +0",
    ]


def test_the_input_order_is_kept_among_siblings_and_roots() -> None:
    processes = [proc(31, 0, 1, 30, TORCHRUN), proc(50, 0, 9), proc(32, 0, 7, 30, TORCHRUN), proc(40, 0, 3)]
    reversed_input = list(reversed(processes))
    assert [line.pid for line in build_tree(processes)] == [30, 31, 32, 50, 40]
    assert [line.pid for line in build_tree(reversed_input)] == [40, 30, 32, 31, 50]


def test_a_launcher_with_one_worker_gets_its_line_too() -> None:
    processes = [proc(31, 0, 1, 30, TORCHRUN), proc(40, 0, 3)]
    assert drawn(build_tree(processes), processes) == [
        f"30 launcher {TORCHRUN} 1.0 +1",
        "└─ 31 row 0 1.0 +0",
        "40 row 1 3.0 +0",
    ]


def test_a_process_on_two_gpus_keeps_a_line_per_gpu_and_its_children_under_the_first() -> None:
    processes = [proc(10, 0, 2), proc(10, 1, 3), proc(11, 1, 1, 10)]
    assert drawn(build_tree(processes), processes) == [
        "10 row 0 3.0 +1",
        "└─ 11 row 2 1.0 +0",
        "10 row 1 3.0 +0",
    ]


def test_unknown_memory_and_parents_and_a_bad_cycle_never_break_the_tree() -> None:
    processes = [
        proc(1, 0, None, None, None),
        proc(2, 0, None, 3),
        proc(3, 0, 1, 2),  # 2 and 3 claim each other: a reading no kernel makes
        proc(4, 0, 2, 4),  # its own parent
    ]
    lines = build_tree(processes)
    assert sorted(line.index for line in lines if line.index is not None) == [0, 1, 2, 3]
    assert lines[0].subtree_memory is None
    assert [line.pid for line in lines if line.depth == 0] == [1, 2, 4]
    assert build_tree([]) == []


def test_a_gpu_process_that_is_pid_1_in_its_container_still_has_its_workers_under_it() -> None:
    processes = [proc(1, 0, 2, 0, None), proc(7, 0, 3, 1), proc(8, 1, 3, 1)]
    assert [(line.guide, line.pid, line.subtree_memory) for line in build_tree(processes)] == [
        ("", 1, 8 * GIB),
        ("├─ ", 7, 3 * GIB),
        ("└─ ", 8, 3 * GIB),
    ]


def above(pid: int, parent: int | None, command: str, session: bool = False, *over: str) -> Ancestor:
    return Ancestor(pid=pid, parent_pid=parent, started=1000.0 + pid, name=command.split()[0], command=command,
                    uid=1000, session=session, above=over)


def test_the_chain_above_a_launcher_goes_up_to_the_session_and_stops_there() -> None:
    # sshd > tmux > bash (the session) > bash -c wrapper > torchrun > two workers; and a job whose
    # launcher's parent is PID 1 (a systemd service): no line for PID 1.
    processes = [proc(201, 0, 30, 200, TORCHRUN), proc(202, 1, 20, 200, TORCHRUN), proc(301, 2, 5, 300, "svc")]
    ancestors = {
        200: above(200, 150, TORCHRUN),
        150: above(150, 100, "bash -c torchrun ..."),
        100: above(100, 90, "-bash", True, "tmux: server", "sshd"),
        300: above(300, 1, "svc-launcher"),
    }
    lines = build_tree(processes, ancestors)
    assert [(line.guide, line.pid, line.index) for line in lines] == [
        ("", 100, None),
        ("└─ ", 150, None),
        ("   └─ ", 200, None),
        ("      ├─ ", 201, 0),
        ("      └─ ", 202, 1),
        ("", 300, None),
        ("└─ ", 301, 2),
    ]
    assert lines[0].above == ("tmux: server", "sshd") and lines[0].subtree_memory == 50 * GIB
    assert (lines[2].started, lines[2].uid, lines[2].launcher_command) == (1200.0, 1000, TORCHRUN)


def test_ancestors_that_claim_each_other_end_the_walk() -> None:
    processes = [proc(11, 0, 1, 10, "a")]
    ancestors = {10: above(10, 9, "a"), 9: above(9, 10, "b")}  # PID reuse mid-read: a loop
    assert [line.pid for line in build_tree(processes, ancestors)] == [9, 10, 11]
