"""Slurm jobs in the TUI: the JOB column, the ``job:`` filter, the job on the process screen."""

from __future__ import annotations

from dataclasses import replace

from gputop.core.model import Job, Snapshot
from gputop.ui.screens.process import ProcessScreen
from gputop.ui.widgets.process_filter import ProcessFilter
from gputop.ui.widgets.snapshot_rows import snapshot_rows

from .factory import gpu, make_app, proc, screen_text, snapshot

SIZE = (120, 40)
TRAIN = Job(scheduler="slurm", id="1234", step="0", name="train-llm", user="alice", partition="gpu", account="proj42")


def jobs_snapshot() -> Snapshot:
    """101 and 102 in job 1234 (steps 0 and 1), 203 in job 99's batch step, 204 in no job."""
    return snapshot(
        gpu(0, [replace(proc(101, 0, 40), job=TRAIN), replace(proc(102, 0, 20, "bob"), job=replace(TRAIN, step="1"))]),
        gpu(1, [replace(proc(203, 1, 8, "carol"), job=Job(scheduler="slurm", id="99", step="batch")),
                proc(204, 1, 4, "dave", "python eval.py")], total_gib=32),
    )


def header(app) -> str:  # type: ignore[no-untyped-def]
    return "".join(segment.text for segment in app.processes.render_line(0))


def job_cell(app, row: int) -> str:  # type: ignore[no-untyped-def]
    start = header(app).index(" JOB ") + 1
    return "".join(segment.text for segment in app.processes.render_line(1 + row))[start : start + 10].strip()


async def test_the_job_column_shows_job_and_step_and_hides_while_no_process_has_a_job() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(snapshot(gpu(0, [proc(204, 0, 4)])))
        await pilot.pause()
        assert "JOB" not in header(app)
        app.apply_snapshot(jobs_snapshot())
        await pilot.pause()
        assert " JOB " in header(app)
        assert [job_cell(app, row) for row in range(4)] == ["1234.0", "1234.1", "99.batch", "-"]
        for _ in range(12):  # > from column to column, up to JOB
            if "JOB▲" in header(app):
                break
            await pilot.press("greater_than_sign")
        assert app.processes.pids() == [203, 101, 102, 204]  # job 99 before 1234, no job last


async def test_the_filter_job_1234_shows_that_jobs_processes() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(jobs_snapshot())
        await pilot.pause()
        await pilot.press("slash", *"job:1234", "enter")
        assert app.processes.pids() == [101, 102]
        assert "filter: /job:1234" in str(app.processes.border_title)


def test_job_1234_1_is_one_step_and_a_job_filter_matches_no_other_text() -> None:
    rows = snapshot_rows(jobs_snapshot())
    for text, expected in (("job:1234.1", [102]), ("JOB:99", [203]), ("job:12", []), ("job:", [])):
        matches = ProcessFilter().with_text(text).matches
        assert [row.process.pid for row in rows if matches(row)] == expected, text


async def test_the_process_screen_names_the_job() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.apply_snapshot(jobs_snapshot())
        await pilot.pause()
        await pilot.press("enter")
        assert isinstance(app.screen, ProcessScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = " ".join(screen_text(app).replace("│", " ").split())
        assert "Job slurm job 1234.0 · train-llm · user alice · partition gpu · account proj42" in text
