"""o: the owner screen, driven by its keys at 80x24 and 120x40."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gputop.core.model import Job, Snapshot
from gputop.ui.screens.owners import OwnerScreen

from .factory import NOW, gpu, make_app, proc, snapshot

POD = "6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b"


def owners_snapshot() -> Snapshot:
    """alice: 101 (job 1234, GPU 0) and 204 (GPU 1); bob: 102 in a pod (GPU 0); carol: 203 (job 99, GPU 1)."""
    job = Job(scheduler="slurm", id="1234", step="0")
    return snapshot(
        gpu(0, [
            replace(proc(101, 0, 40, age_s=7200, sm=60.0), job=job),
            replace(proc(102, 0, 20, "bob", age_s=600, sm=20.0), pod_uid=POD, container_name="ml/trainer-0",
                    container_runtime="containerd", container_id="5e" * 32, container="k8s:" + POD),
        ]),
        gpu(1, [
            replace(proc(203, 1, 8, "carol", age_s=60, sm=None), job=Job(scheduler="slurm", id="99", step="batch")),
            proc(204, 1, 4, age_s=300, sm=None),
        ], total_gib=32),
    )


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_o_shows_the_owners_and_o_again_groups_by_job_pod_container(size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.apply_snapshot(owners_snapshot())
        await pilot.pause()
        help_keys = {description: keys for keys, description in app.key_control.help_entries()}
        assert help_keys["Who holds the GPUs: by user, job, pod or container"] == "o"
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, OwnerScreen) and screen.kind == "user"
        wide = size[0] == 120
        # GPU 0 (300 W) split by SM time 60:20; GPU 1 (300 W) by memory 8:4 (no SM % there).
        # 80 columns drop the longest process, then the energy, to leave the name 24.
        energy, longest = (["ENERGY"], ["LONGEST"]) if wide else ([], [])
        expected = [
            ["USER", "GPUS", "GPU-MEM▼", "MEM%", "SM", "POWER", *energy, "IDLE-MEM", "PROCS", *longest],
            ["alice", "0,1", "44.0GiB", "39%", "60%", "325W", *(["N/A"] if wide else []), "-", "2",
             *(["101", "2h00m"] if wide else [])],
            ["carol", "1", "8.0GiB", "7%", "N/A", "200W", *(["N/A"] if wide else []), "-", "1",
             *(["203", "1m00s"] if wide else [])],
            ["bob", "0", "20.0GiB", "18%", "20%", "75W", *(["N/A"] if wide else []), "-", "1",
             *(["102", "10m00s"] if wide else [])],
        ]
        assert [line.split() for line in screen.lines()][:1] == expected[:1]
        assert sorted(line.split() for line in screen.lines()[1:]) == sorted(expected[1:])
        assert [row.name for row in screen.rows] == ["alice", "bob", "carol"]  # most GPU memory first
        await pilot.press("o")
        assert screen.kind == "job"
        assert [line.split()[:3] for line in screen.lines()] == [
            ["JOB", "GPUS", "GPU-MEM▼"], ["1234", "0", "40.0GiB"], ["99", "1", "8.0GiB"]
        ]
        await pilot.press("o")
        assert [line.split()[:2] for line in screen.lines()[1:]] == [["ml/trainer-0", "0"]]
        await pilot.press("o")
        assert [line.split()[:2] for line in screen.lines()[1:]] == [["containerd:5e5e5e5e5e5e", "0"]]
        await pilot.press("o")
        assert screen.kind == "user"


async def test_each_column_sorts_and_I_inverts() -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(owners_snapshot())
        await pilot.pause()
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, OwnerScreen)
        await pilot.press("greater_than_sign")  # MEM%
        assert screen.lines()[0].split()[3] == "MEM%▼"
        await pilot.press("greater_than_sign", "greater_than_sign")  # POWER
        assert [row.name for row in screen.rows] == ["alice", "carol", "bob"]
        await pilot.press("I")
        assert [row.name for row in screen.rows] == ["bob", "carol", "alice"]
        await pilot.press(*["less_than_sign"] * 5)  # back to the name
        assert screen.lines()[0].split()[0] == "USER▲"
        assert [row.name for row in screen.rows] == ["alice", "bob", "carol"]
        await pilot.press("less_than_sign")  # wraps to LONGEST: the longest-running first
        assert [row.name for row in screen.rows] == ["alice", "bob", "carol"]
        await pilot.press("I")
        assert [row.name for row in screen.rows] == ["carol", "bob", "alice"]
        # It follows the live data, its cursor on its owner: bob's process grows past alice's.
        await pilot.press(*["greater_than_sign"] * 3)  # from LONGEST round to GPU-MEM, largest first
        assert screen.lines()[0].split()[2] == "GPU-MEM▼"
        await pilot.press("down", "down")  # from alice (the cursor stays on its owner through the sorts)
        assert screen.rows[screen.cursor or 0].name == "carol"
        later = owners_snapshot()
        grown = replace(later.gpus[1], processes=(replace(later.gpus[1].processes[0], gpu_memory=60 * 1024**3),
                                                  later.gpus[1].processes[1]))
        app.apply_snapshot(replace(later, gpus=(later.gpus[0], grown), timestamp=NOW + 1))
        await pilot.pause()
        assert [row.name for row in screen.rows] == ["carol", "alice", "bob"]
        assert screen.cursor == 0  # still on carol


async def test_enter_shows_the_chosen_owners_processes_in_the_panel() -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.apply_snapshot(owners_snapshot())
        await pilot.pause()
        await pilot.press("o", "o", "down", "enter")  # by job, the second: job 99
        await pilot.pause()
        assert not isinstance(app.screen, OwnerScreen)
        assert app.processes.pids() == [203]
        assert "filter: /job:99" in str(app.processes.border_title)
        assert app.focused is app.processes
        await pilot.press("o", "enter")  # by user (a new screen starts there), alice has the most memory
        await pilot.pause()
        assert app.processes.pids() == [101, 204]
        assert "filter: user alice" in str(app.processes.border_title)


async def test_an_owners_sm_time_over_eight_gpus_shows_with_its_unit() -> None:
    # alice's eight workers keep 80.25 % of an SM each: 6.42 GPUs' worth, shown as top shows CPU.
    busy = snapshot(*(gpu(index, [proc(300 + index, index, 10, sm=80.25)]) for index in range(8)))
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        app.apply_snapshot(busy)
        await pilot.pause()
        await pilot.press("o")
        screen = app.screen
        assert isinstance(screen, OwnerScreen)
        header, alice = (line.split() for line in screen.lines()[:2])
        assert alice[0] == "alice" and alice[header.index("SM")] == "642%"
