"""`e` on the process screen: the process's whole environment, read from /proc/PID/environ of a real
child process started with a known environment; secrets masked until `v`; `/` filters; and what is
said when the environment cannot be read (another user's, a process that has exited)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import psutil
import pytest
from rich.console import Console
from textual.pilot import Pilot

from gputop.core.host.procdetail import MASK, ProcessDetail, Readable
from gputop.core.model import ProcessIdentity
from gputop.ui.app import GpuTopApp
from gputop.ui.screens.environment import EnvironmentScreen, unreadable_text
from gputop.ui.screens.process import ProcessScreen, facts_table

from .factory import RecordingSource, gpu, make_app, proc, screen_text, snapshot
from .test_process_screen import VLLM, open_vllm, source_with_detail

LONG_PATH = ":".join(f"/opt/tool{n}/bin" for n in range(20))  # wider than 120 columns: it wraps
ENVIRONMENT = {
    "PATH": LONG_PATH,
    "CUDA_VISIBLE_DEVICES": "1",
    "HF_TOKEN": "hf_do_not_show",
    "HOME": "/home/trainer",
    "LANG": "C.UTF-8",
    "NCCL_DEBUG": "WARN",
    "WANDB_API_KEY": "wandb-secret-42",
}


class ProcSource(RecordingSource):
    """A source whose processes are real: the sampler reads their details from /proc."""

    def process_detail(self, identity: ProcessIdentity) -> ProcessDetail | None:
        return None


@pytest.fixture
def child() -> Iterator[psutil.Process]:
    process = subprocess.Popen(["sleep", "600"], env=ENVIRONMENT, executable="/bin/sleep")
    yield psutil.Process(process.pid)
    process.kill()
    process.wait()


def child_snapshot(child: psutil.Process):  # type: ignore[no-untyped-def]
    return snapshot(gpu(0, [proc(child.pid, 0, 10, "alice", "sleep 600", started=child.create_time())]))


async def open_environment(app: GpuTopApp, pilot: Pilot[int], child: psutil.Process) -> EnvironmentScreen:
    app.apply_snapshot(child_snapshot(child))
    await pilot.pause()
    await pilot.press("enter")
    assert isinstance(app.screen, ProcessScreen)
    await app.workers.wait_for_complete()
    await pilot.press("e")
    screen = app.screen
    assert isinstance(screen, EnvironmentScreen)
    await app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def shown_lines(app: GpuTopApp) -> list[str]:
    """The screen's lines, without the padding on the right."""
    return [line.rstrip() for line in screen_text(app).splitlines()]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_e_shows_every_variable_sorted_with_secrets_masked_until_v(
    child: psutil.Process, size: tuple[int, int]
) -> None:
    source = ProcSource()
    app = make_app(source)
    async with app.run_test(size=size) as pilot:
        await open_environment(app, pilot, child)
        await pilot.press("k", "space")  # the panel's keys do not reach past this screen
        assert isinstance(app.screen, EnvironmentScreen) and source.sent == []
        lines = shown_lines(app)
        assert lines[0] == f" PID {child.pid}  environment  sleep  7 variables  2 secrets masked"
        assert lines[-1].startswith(" Esc Back  / Filter  v Show secrets  r Read again")
        names = [line.split()[0] for line in lines[1:] if line[:2].strip() and line.split()[0].isupper()]
        # Every variable, sorted by name (PATH's value wraps onto the lines after it).
        assert names[:7] == ["CUDA_VISIBLE_DEVICES", "HF_TOKEN", "HOME", "LANG", "NCCL_DEBUG", "PATH",
                             "WANDB_API_KEY"]
        text = screen_text(app)
        assert f"HF_TOKEN             {MASK}" in text and f"WANDB_API_KEY        {MASK}" in text
        assert "hf_do_not_show" not in text and "wandb-secret-42" not in text
        assert "HOME                 /home/trainer" in text
        # The long PATH is wrapped, never cut: all of it is on screen.
        path_text = "".join(line[22:].strip() for line in lines if "/opt/tool" in line)
        assert path_text == LONG_PATH
        await pilot.press("v")
        text = screen_text(app)
        assert "HF_TOKEN             hf_do_not_show" in text and "WANDB_API_KEY        wandb-secret-42" in text
        assert text.splitlines()[0].rstrip().endswith("7 variables  2 secrets shown")
        assert " v Hide secrets " in text.splitlines()[-1]
        await pilot.press("v")
        assert "hf_do_not_show" not in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, ProcessScreen)


async def test_slash_filters_by_name_or_value_never_a_masked_one_and_r_tells_an_exit(child: psutil.Process) -> None:
    app = make_app(ProcSource())
    async with app.run_test(size=(80, 24)) as pilot:
        await open_environment(app, pilot, child)
        await pilot.press("slash", *"trainer")
        text = screen_text(app)
        assert text.splitlines()[0].rstrip().endswith("7 variables, 1 shown  2 secrets masked")
        assert "HOME                 /home/trainer" in text and "PATH" not in text
        await pilot.press(*"nope", "enter")
        assert "no variable matches “trainernope”" in screen_text(app)
        await pilot.press("slash", "ctrl+u", *"hf_do")  # a secret's value is not searched while masked
        assert "no variable matches “hf_do”" in screen_text(app)
        await pilot.press("enter", "v")  # Enter keeps the filter; v shows the secrets, and what they match
        assert "HF_TOKEN             hf_do_not_show" in screen_text(app)
        await pilot.press("slash", "escape")  # Esc in the filter clears it, and stays on the screen
        assert isinstance(app.screen, EnvironmentScreen)
        assert screen_text(app).splitlines()[0].rstrip().endswith("7 variables  2 secrets shown")
        # The process exits; r reads again and says so.
        child.kill()
        child.wait(10)
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert shown_lines(app)[1] == f" PID {child.pid} has exited"
        assert "Traceback" not in screen_text(app)
        await pilot.press("escape")
        assert isinstance(app.screen, ProcessScreen)


async def test_an_environment_that_cannot_be_read_says_why() -> None:
    app = make_app(source_with_detail())  # bob's vLLM: gputop, as alice, cannot read its environment
    async with app.run_test(size=(80, 24)) as pilot:
        await open_vllm(app, pilot, ticks=3)
        await pilot.press("e")
        assert isinstance(app.screen, EnvironmentScreen) and app.screen.identity == VLLM
        await app.workers.wait_for_complete()
        await pilot.pause()
        lines = shown_lines(app)
        assert lines[0] == " PID 102  environment  python"
        assert lines[1] == " environment not readable (owned by bob: only bob or root may read it; gputop"
        assert lines[2] == " runs as alice)"
        # A process this host cannot see at all (another PID namespace): nothing is read, the reason is said.
        await pilot.press("escape", "escape", "end")
        row = app.processes.cursor_row
        assert row is not None and row.process.pid == 305 and not row.process.visible
        await pilot.press("enter", "e")
        assert isinstance(app.screen, EnvironmentScreen)
        await pilot.pause()
        assert shown_lines(app)[1] == " environment not readable (not visible: other PID namespace)"


def test_the_process_screen_lists_the_gpu_variables_masked_and_how_many_e_shows() -> None:
    detail = ProcessDetail(
        7, arguments=("python", "train.py"), user="alice", cwd=Readable(("/srv",)),
        environment=Readable(("CUDA_VISIBLE_DEVICES=0", "HOME=/home/alice", "NVIDIA_API_KEY=nvapi-123", "RANK=0")),
        devices=Readable(()),
    )
    console = Console(width=80, record=True)
    console.print(facts_table([], detail, 0.0))
    text = console.export_text()
    environment = text[text.index("Environment"):text.index("Devices")].split("\n")
    assert [line.strip() for line in environment] == [
        "Environment  CUDA_VISIBLE_DEVICES=0", f"NVIDIA_API_KEY={MASK}", "RANK=0", "(e: all 4 variables)", "",
    ]


def test_an_environment_read_as_the_process_exits_says_so_in_a_sentence() -> None:
    # What procdetail says when environ() finds the process gone after its other facts were read.
    assert unreadable_text("the process has exited") == "environment not readable: the process has exited"
    assert unreadable_text("not readable (Input/output error)") == "environment not readable (Input/output error)"
