"""Why a GPU process has no host facts, read from the real /proc: an exited PID, a PID past pid_max,
a real private PID namespace (``unshare``), and a /proc mounted ``hidepid`` for another user.

The namespace and mount tests need root and ``unshare`` (util-linux); they skip, saying so, without.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakenvml import NO_SUCH_PID, GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.host.pidns import PROC_PID_INIT_INO, read_pid_namespace
from gputop.core.host.visibility import EXITED, PERMISSION, PID_NAMESPACE, pid_max, why_not_visible
from gputop.core.model import ProcessSample
from gputop.core.output.snapshot_decode import process_from_dict
from gputop.core.output.snapshot_json import process_to_dict

ROOT = Path(__file__).resolve().parent.parent
HOST = read_pid_namespace()
in_host_namespace = pytest.mark.skipif(
    HOST.host is not True, reason=f"not in the host's PID namespace: {HOST.evidence}"
)
can_unshare = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare (util-linux)"
)

# Run inside the namespace: what gputop reads there, as JSON.
CHECK = (
    "import json, sys\n"
    "from gputop.core.host.pidns import read_pid_namespace\n"
    "from gputop.core.host.visibility import why_not_visible\n"
    "found = read_pid_namespace()\n"
    "print(json.dumps([found.host, found.evidence, why_not_visible(int(sys.argv[1]), found.host)]))\n"
)


@pytest.fixture
def exited_pid() -> int:
    """The PID of a real process that has exited and been reaped."""
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


@pytest.fixture
def running() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "600"])
    yield process
    process.kill()
    process.wait()


def run_in(prefix: list[str], pid: int) -> list[object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run(
        [*prefix, sys.executable, "-c", CHECK, str(pid)], capture_output=True, text=True, timeout=30, env=env
    )
    if result.returncode != 0 and "unshare" in result.stderr:
        pytest.skip(f"unshare is refused here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    answer: list[object] = json.loads(result.stdout)
    return answer


@in_host_namespace
def test_in_the_host_namespace_a_pid_that_exited_is_exited(exited_pid: int) -> None:
    assert HOST.evidence == f"/proc/self/ns/pid is the host's pid:[{PROC_PID_INIT_INO}]"
    assert why_not_visible(exited_pid, True) == EXITED


def test_a_pid_past_pid_max_is_exited_in_any_namespace() -> None:
    limit = pid_max()
    assert limit is not None and limit <= NO_SUCH_PID
    assert [why_not_visible(NO_SUCH_PID, host) for host in (True, False, None)] == [EXITED] * 3


def test_where_the_namespace_is_unknown_a_missing_pid_has_no_reason(exited_pid: int) -> None:
    assert why_not_visible(exited_pid, None) is None


@can_unshare
def test_in_a_private_pid_namespace_with_its_own_proc_a_host_pid_is_of_another_namespace(
    running: subprocess.Popen[bytes],
) -> None:
    # As in a container without --pid=host: NSpid has one entry and PID 1 is the namespace's own, so
    # only the namespace's inode tells.
    host, evidence, reason = run_in(["unshare", "--pid", "--fork", "--mount-proc"], running.pid)
    assert host is False
    assert isinstance(evidence, str) and evidence.endswith(f"not the host's pid:[{PROC_PID_INIT_INO}]")
    assert reason == PID_NAMESPACE


@can_unshare
def test_in_a_private_pid_namespace_under_the_hosts_proc_nspid_tells() -> None:
    host, evidence, reason = run_in(["unshare", "--pid", "--fork"], NO_SUCH_PID)
    assert host is False
    assert isinstance(evidence, str) and evidence.startswith("NSpid in /proc/self/status lists 2 PIDs (")
    assert reason == EXITED  # past pid_max, whatever the namespace


def as_nobody_under_hidepid(option: str, pid: int) -> object:
    """why_not_visible(pid) for user nobody, in a mount namespace whose /proc is mounted hidepid=option."""
    python = "/usr/bin/python3"  # the system's: root's own Python may be unreadable to nobody
    if os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("setpriv") is None:
        pytest.skip("needs root, unshare and setpriv (util-linux)")
    if not os.access(python, os.X_OK):
        pytest.skip(f"{python} is not installed")
    code = f"from gputop.core.host.visibility import why_not_visible; print(repr(why_not_visible({pid}, True)))"
    script = (
        f"mount -t proc -o hidepid={option} proc /proc && "
        f"exec setpriv --reuid 65534 --regid 65534 --clear-groups {python} -c '{code}'"
    )
    result = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script],
        capture_output=True, text=True, timeout=30, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    if result.returncode != 0 and ("unshare" in result.stderr or "mount" in result.stderr):
        pytest.skip(f"a private /proc mount is refused here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_pid_whose_proc_entry_cannot_be_read_is_permission(running: subprocess.Popen[bytes]) -> None:
    assert as_nobody_under_hidepid("noaccess", running.pid) == repr(PERMISSION)


def test_a_pid_that_proc_hides_from_this_user_has_no_reason(running: subprocess.Popen[bytes]) -> None:
    # Hidden or gone: /proc does not say which, so gputop does not guess "exited".
    assert as_nobody_under_hidepid("invisible", running.pid) == repr(None)


def json_processes(fake_nvml: FakeNvml, prefix: list[str], *pids: int) -> dict[int, dict[str, object]]:
    scenario = Scenario().gpu()
    for pid in pids:
        scenario.process(gpu=0, pid=pid, used=GiB)
    fake_nvml.write(scenario)
    env = fake_nvml.env(base=dict(os.environ, PYTHONPATH=str(ROOT)))
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "gputop", "--json"], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    return {p["pid"]: p for p in json.loads(result.stdout)["gpus"][0]["processes"]}


@in_host_namespace
def test_json_gives_each_process_its_reason(
    fake_nvml: FakeNvml, running: subprocess.Popen[bytes], exited_pid: int
) -> None:
    found = json_processes(fake_nvml, [], running.pid, exited_pid, NO_SUCH_PID)
    assert {pid: (p["visible"], p["not_visible_reason"]) for pid, p in found.items()} == {
        running.pid: (True, None),
        exited_pid: (False, "exited"),
        NO_SUCH_PID: (False, "exited"),
    }


@can_unshare
def test_json_in_a_private_pid_namespace_says_pid_namespace(
    fake_nvml: FakeNvml, running: subprocess.Popen[bytes]
) -> None:
    found = json_processes(fake_nvml, ["unshare", "--pid", "--fork", "--mount-proc"], running.pid, NO_SUCH_PID)
    assert {pid: (p["visible"], p["not_visible_reason"]) for pid, p in found.items()} == {
        running.pid: (False, "pid_namespace"),
        NO_SUCH_PID: (False, "exited"),
    }


def test_a_recording_keeps_the_reason_and_believes_no_other_word() -> None:
    process = ProcessSample(pid=7, gpu_index=0, type="C", gpu_memory=GiB, not_visible_reason=PERMISSION)
    assert process_from_dict(process_to_dict(process), 0) == process
    assert process_from_dict({**process_to_dict(process), "not_visible_reason": "hidden"}, 0).not_visible_reason is None
    older = process_to_dict(process)
    del older["not_visible_reason"]  # a recording made before the field
    assert process_from_dict(older, 0).not_visible_reason is None
