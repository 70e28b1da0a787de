"""The process screen's facts, read from /proc on demand: a real process with a child, its
environment (whole, and its GPU variables), its parents; and what is said when a fact cannot be read."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from gputop.core.host.procdetail import MASK, Readable, is_secret, masked, read_process_detail
from gputop.core.host.procinfo import ProcessInfo


def wait_for(condition: object, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[psutil.Process]:
    """`sh` started in tmp_path with CUDA and NCCL variables, running one `sleep` child."""
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "CUDA_VISIBLE_DEVICES": "2,3",
        "NCCL_DEBUG": "INFO",
        "LOCAL_RANK": "0",
        "SECRET_TOKEN": "not for the screen",
    }
    process = subprocess.Popen(["sh", "-c", "sleep 600 & wait"], cwd=tmp_path, env=environment)
    shell = psutil.Process(process.pid)
    # Until the child has exec'd sleep: forked, it is still a copy of sh for a moment.
    wait_for(lambda: [c.name() for c in shell.children()] == ["sleep"], "the shell never started sleep")
    yield shell
    for child in shell.children():
        child.kill()
    process.kill()
    process.wait()


def test_a_process_is_read_whole_with_its_parents_children_and_gpu_variables(
    launcher: psutil.Process, tmp_path: Path
) -> None:
    detail = read_process_detail((launcher.pid, launcher.create_time()))
    assert detail.gone is None
    assert detail.arguments == ("sh", "-c", "sleep 600 & wait")
    assert detail.command == "sh -c sleep 600 & wait"
    assert detail.user == launcher.username()
    assert detail.cwd == Readable((str(tmp_path),))
    # The whole environment as it was given at exec, sorted by name; the GPU variables among it.
    assert detail.environment == Readable((
        "CUDA_VISIBLE_DEVICES=2,3", "LOCAL_RANK=0", "NCCL_DEBUG=INFO",
        f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}", "SECRET_TOKEN=not for the screen",
    ))
    assert detail.gpu_environment == Readable(("CUDA_VISIBLE_DEVICES=2,3", "LOCAL_RANK=0", "NCCL_DEBUG=INFO"))
    assert detail.devices == Readable(())  # no /dev/nvidia* open here (a real-GPU test checks one that has)
    assert [relative.pid for relative in detail.ancestors] == [p.pid for p in launcher.parents()]
    assert detail.ancestors[0].pid == os.getpid()
    assert detail.ancestors[-1].pid == 1
    [child] = detail.children
    assert (child.name, child.command, child.user) == ("sleep", "sleep 600", launcher.username())


def test_a_process_that_exited_or_whose_pid_was_reused_says_so(launcher: psutil.Process) -> None:
    started = launcher.create_time()
    reused = read_process_detail((launcher.pid, started + 10))
    assert reused.gone == f"PID {launcher.pid} now belongs to another process: the one shown has exited"
    assert reused.arguments == ()
    assert read_process_detail((launcher.pid, None)).gone == (
        "not visible from here (no start time): nothing to read"
    )
    child = launcher.children()[0]
    child_started = child.create_time()
    child.kill()
    child.wait(10)
    wait_for(lambda: not psutil.pid_exists(child.pid), "the child never went")
    assert read_process_detail((child.pid, child_started)).gone == f"PID {child.pid} has exited"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_another_users_environment_and_devices_say_why_they_cannot_be_read() -> None:
    victim = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "600"])
    try:
        process = psutil.Process(victim.pid)
        wait_for(lambda: process.uids().real == 65534 and process.name() == "sleep", "setpriv never dropped")
        owner = process.username()
        os.seteuid(1234)  # an ordinary user who owns neither process
        try:
            detail = read_process_detail((victim.pid, process.create_time()))
        finally:
            os.seteuid(0)
        assert detail.gone is None and detail.arguments == ("sleep", "600") and detail.user == owner
        reason = f"not readable (owned by {owner}: only {owner} or root may read it; gputop runs as uid 1234)"
        assert detail.environment == Readable(reason=reason)
        assert detail.gpu_environment == Readable(reason=reason)
        assert detail.devices == Readable(reason=reason)
        assert detail.cwd == Readable(reason=reason)
    finally:
        victim.kill()
        victim.wait()


def test_values_whose_names_say_secret_are_masked_and_the_rest_shown_whole() -> None:
    for name in ("HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "WANDB_API_KEY", "PGPASSWORD", "GOOGLE_CREDENTIALS",
                 "ssh_key_path", "NVIDIA_API_KEY"):
        assert is_secret(name), name
        assert masked(f"{name}=s3cr3t=x") == f"{name}={MASK}"
    for name in ("PATH", "CUDA_VISIBLE_DEVICES", "HOME", "DISPLAY"):
        assert not is_secret(name), name
    assert masked("PATH=/usr/bin:/bin") == "PATH=/usr/bin:/bin"
    assert masked("HF_TOKEN=") == f"HF_TOKEN={MASK}"  # empty or not: its length is never told
    assert masked("NOEQUALS_TOKEN") == "NOEQUALS_TOKEN"


def test_the_parent_is_read_once_with_the_other_static_facts(launcher: psutil.Process) -> None:
    child = launcher.children()[0]
    facts = ProcessInfo().lookup([child.pid])[child.pid]
    assert facts is not None
    assert facts.static.parent_pid == launcher.pid
    assert facts.static.parent_command == "sh -c sleep 600 & wait"
    own = ProcessInfo().lookup([os.getpid()])[os.getpid()]
    assert own is not None and own.static.parent_pid == os.getppid()
