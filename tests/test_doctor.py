"""`gputop doctor` as a user runs it: the real command, against the fake driver, a library built to
look like the CUDA toolkit's stub, a folder named pynvml on PYTHONPATH, a real private PID namespace
and real sockets."""

from __future__ import annotations

import importlib.metadata
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakenvml import Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.doctor import ERROR, OK, UNKNOWN, WARNING, Finding
from gputop.core.doctor.driver_checks import driver, kernel_module_version, run_probe
from gputop.core.doctor.host_checks import container_names, proc_visibility

ROOT = Path(__file__).resolve().parent.parent
HAS_DEVICES = any(Path("/dev").glob("nvidia*"))

# The CUDA toolkit ships lib64/stubs/libnvidia-ml.so for linking on machines without a driver. Loaded
# at run time, it prints this banner (as quoted in openucx/ucx#9232 and Syllo/nvtop#225) and nvmlInit
# fails. This one does the same.
STUB_SOURCE = r"""
#include <stdio.h>
static int stub(void) {
    printf("\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
           "WARNING:\n\nYou should always run with libnvidia-ml.so that is installed with your\n"
           "NVIDIA Display Driver. By default it's installed in /usr/lib and /usr/lib64.\n"
           "libnvidia-ml.so in GDK package is a stub library that is attached only for\n"
           "build purposes (e.g. machine that you build your application doesn't have\n"
           "to have Display Driver installed).\n"
           "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n");
    fflush(stdout);
    return 999; /* NVML_ERROR_UNKNOWN */
}
int nvmlInit(void) { return stub(); }
int nvmlInit_v2(void) { return stub(); }
int nvmlInitWithFlags(unsigned flags) { (void)flags; return stub(); }
const char *nvmlErrorString(int result) { (void)result; return "Unknown Error"; }
"""


@pytest.fixture(scope="session")
def stub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder named stubs/ holding a libnvidia-ml.so.1 that behaves like the CUDA toolkit's stub."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("cuda") / "stubs"
    folder.mkdir()
    source = folder.parent / "stub.c"
    source.write_text(STUB_SOURCE)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(folder / "libnvidia-ml.so.1"), str(source)], check=True)
    return folder


def clean_env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "FAKE_NVML_SCENARIO", "COLORTERM")}
    env = {k: v for k, v in env.items() if not k.startswith("SSH_")}
    env["PYTHONPATH"] = str(ROOT)
    env.update(changes)
    return env


def doctor(env: dict[str, str], *prefix: str) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(
        [*prefix, sys.executable, "-m", "gputop", "doctor", "--json"], capture_output=True, text=True, timeout=60,
        env=env,
    )
    assert result.stderr == ""
    document: dict[str, Any] = json.loads(result.stdout)
    return result.returncode, document


def checks(document: dict[str, Any]) -> dict[str, tuple[str, str, str | None]]:
    return {c["name"]: (c["status"], c["found"], c["advice"]) for c in document["checks"]}


def test_the_fake_driver_makes_gputop_runnable_and_persistence_off_is_said(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario(driver="550.54.15").gpu().gpu(persistence_mode=0))
    code, document = doctor(fake_nvml.env(base=clean_env(COLORTERM="truecolor")))
    found = checks(document)
    assert (code, document["runnable"]) == (0, True)
    assert document["summary"] == "gputop can run (driver 550.54.15, 2 GPUs)"
    assert found["driver"] == (OK, "driver 550.54.15, 2 GPUs", None)
    assert found["library"][:2] == (OK, str(fake_nvml.library_dir() / "libnvidia-ml.so.1"))
    status, words, advice = found["persistence_mode"]
    assert (status, words.split(":")[0]) == (WARNING, "off on GPU 1")
    assert advice == "`sudo nvidia-smi -pm 1`, or run nvidia-persistenced (its systemd service)"
    assert found["colorterm"] == (OK, "COLORTERM=truecolor", None)
    assert found["pynvml"][0] == OK and found["pynvml"][1].startswith("nvidia-ml-py ")
    if not HAS_DEVICES:
        assert found["device_files"][:2] == (WARNING, "no /dev/nvidia* device files")


def test_without_the_library_gputop_cannot_run_and_the_words_say_what_to_install(tmp_path: Path) -> None:
    code, document = doctor(clean_env(LD_LIBRARY_PATH=str(tmp_path)))
    found = checks(document)
    if found["library"][0] == OK:
        pytest.skip("a real libnvidia-ml.so.1 is installed here")
    assert (code, document["runnable"]) == (1, False)
    assert document["summary"].startswith("gputop cannot run: libnvidia-ml.so.1 was not found (")
    assert found["driver"] == (ERROR, "not reached: libnvidia-ml.so.1 was not found", None)
    assert "install the NVIDIA driver's user-space libraries" in str(found["library"][2])


def test_the_cuda_stub_found_first_is_named_and_its_banner_does_not_spoil_the_json(stub_dir: Path) -> None:
    code, document = doctor(clean_env(LD_LIBRARY_PATH=str(stub_dir)))
    status, words, advice = checks(document)["library"]
    assert (code, status) == (1, ERROR)
    assert words == f"the CUDA toolkit's stub library comes first: {stub_dir}/libnvidia-ml.so.1 (from LD_LIBRARY_PATH)"
    assert str(advice).startswith("the stub is for linking only and answers no GPU: remove its stubs/ folder")
    assert document["summary"] == f"gputop cannot run: {words}"


def test_a_version_mismatch_names_both_versions_and_the_fix(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu().fail_init("LIB_RM_VERSION_MISMATCH"))
    code, document = doctor(fake_nvml.env(base=clean_env()))
    status, words, advice = checks(document)["driver"]
    assert (code, status) == (1, ERROR)
    kernel = "unknown (/proc/driver/nvidia/version not readable)"
    if os.path.exists("/proc/driver/nvidia/version"):
        kernel = f"{kernel_module_version()} (/proc/driver/nvidia/version)"
    assert words == (
        f"Driver/library version mismatch: kernel module {kernel}, library unknown"
        f" ({fake_nvml.library_dir() / 'libnvidia-ml.so.1'})"
    )
    assert str(advice).startswith("the driver was upgraded while the old kernel module stayed loaded: reboot, or")


@pytest.mark.parametrize(
    ("first_line", "version"),
    [
        # Published outputs of `cat /proc/driver/nvidia/version`: the DIAMBRA Arena docs' CUDA test
        # (proprietary module), and the open kernel module's wording (NVIDIA/open-gpu-kernel-modules).
        ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  440.95.01  Thu May 28 07:03:08 UTC 2020", "440.95.01"),
        ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  515.76  Mon Sep 12 19:21:56 UTC 2022", "515.76"),
        ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  575.57.08  Release Build  "
         "(dvs-builder@U16)  Tue May 20 2025", "575.57.08"),
        ("not a driver's file", None),
    ],
)
def test_the_kernel_modules_version_is_read_from_its_first_line(
    tmp_path: Path, first_line: str, version: str | None
) -> None:
    path = tmp_path / "version"
    path.write_text(first_line + "\nGCC version:  gcc version 7.5.0 (Ubuntu 7.5.0-3ubuntu1~18.04)\n")
    assert kernel_module_version(str(path)) == version


def test_a_folder_named_pynvml_on_pythonpath_is_named_and_gputop_says_one_line(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    (tmp_path / "pynvml").mkdir()
    (tmp_path / "pynvml" / "__init__.py").write_text("")
    env = fake_nvml.env(base=clean_env(PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"))
    fake_nvml.write(Scenario().gpu())
    code, document = doctor(env)
    status, words, advice = checks(document)["pynvml"]
    assert (code, status) == (1, ERROR)
    expected = Path(str(importlib.metadata.distribution("nvidia-ml-py").locate_file("pynvml.py"))).resolve()
    assert words == (
        f"`import pynvml` finds {tmp_path / 'pynvml' / '__init__.py'}, not nvidia-ml-py's {expected} and lacks what"
        " gputop reads NVML with (module 'pynvml' has no attribute 'NVML_ERROR_GPU_IS_LOST')"
    )
    assert advice == (
        "another package named pynvml shadows nvidia-ml-py: `pip uninstall pynvml`, remove that folder from"
        " PYTHONPATH, then `pip install --force-reinstall 'nvidia-ml-py>=12.535,<14'`"
    )
    started = subprocess.run([sys.executable, "-m", "gputop", "--json"], capture_output=True, text=True, env=env,
                             timeout=60)
    assert (started.returncode, started.stdout) == (2, "")
    assert started.stderr == (
        f"gputop: NVML is not available: {words}: {advice}"
        " — run `gputop doctor` to see why, or `gputop --demo` to try gputop without a GPU\n"
    )


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
def test_in_a_private_pid_namespace_over_ssh_without_colorterm_both_are_said(fake_nvml: FakeNvml) -> None:
    fake_nvml.write(Scenario().gpu())
    env = fake_nvml.env(base=clean_env(SSH_CONNECTION="10.0.0.2 50000 10.0.0.1 22"))
    code, document = doctor(env, "unshare", "--pid", "--fork", "--mount-proc")
    found = checks(document)
    assert code == 0
    status, words, advice = found["pid_namespace"]
    assert (status, advice) == (WARNING, "run the container with `--pid=host` (Kubernetes: `hostPID: true`)")
    assert words.startswith("not the host's (/proc/self/ns/pid is pid:[")
    status, words, advice = found["colorterm"]
    assert (status, words) == (WARNING, "COLORTERM is not set in this SSH session: gputop's colours fall back to 256")
    assert "`SendEnv COLORTERM`" in str(advice) and "`AcceptEnv COLORTERM`" in str(advice)


def test_a_driver_that_hangs_in_nvmlinit_is_said_after_the_probes_deadline(
    fake_nvml: FakeNvml, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_nvml.write(Scenario().gpu().delay("nvmlInit,nvmlInitWithFlags", 30.0))
    for name, value in fake_nvml.env(base=clean_env()).items():
        monkeypatch.setenv(name, value)
    probe = run_probe(timeout_s=1.5)
    assert probe.timed_out and "pynvml" in probe.steps and "init" not in probe.steps
    finding = driver(probe)
    assert (finding.status, finding.found) == (ERROR, "nvmlInit did not answer within 1.5s: the driver may be hung")


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder every user may enter (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="gputop-doctor-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


@pytest.fixture
def docker_like(open_dir: Path) -> Iterator[Path]:
    """A real unix socket answering /_ping as Docker's Engine API does."""
    path = open_dir / "docker.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer() -> None:
        try:
            connection, _ = server.accept()
        except OSError:
            return  # closed at the end of a test that never asked
        with connection:
            connection.recv(1024)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield path
    server.close()


def test_container_names_are_ok_where_docker_answers_and_a_warning_where_it_does_not(
    docker_like: Path, tmp_path: Path
) -> None:
    pods = tmp_path / "pods"
    pods.mkdir()
    answering = container_names(str(docker_like), str(pods))
    assert (answering.status, answering.found) == (OK, f"{docker_like}: Docker answers; {pods}: readable")
    dead = tmp_path / "dead.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
        stale.bind(str(dead))  # a socket file that nothing listens on: a stopped daemon's
    silent = container_names(str(dead), str(tmp_path / "no-pods"))
    assert silent.status == WARNING
    assert silent.found == f"{dead}: Docker does not answer (Connection refused)"
    none = container_names(str(tmp_path / "none.sock"), str(tmp_path / "no-pods"))
    assert none.status == OK and none.found.startswith("neither ")


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access("/usr/bin/python3", os.X_OK),
    reason="needs root, setpriv and /usr/bin/python3 (to look as another user)",
)
def test_a_docker_socket_and_pod_folders_this_user_cannot_read_are_said(docker_like: Path, open_dir: Path) -> None:
    pods = open_dir / "pods"
    pods.mkdir(mode=0o700)
    docker_like.chmod(0o600)
    code = (
        "from gputop.core.doctor.host_checks import container_names\n"
        f"found = container_names({str(docker_like)!r}, {str(pods)!r})\n"
        "print(found.status); print(found.found); print(found.advice)\n"
    )
    # As user nobody, with the system's Python: root's own may be unreadable to nobody.
    result = subprocess.run(
        ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "/usr/bin/python3", "-c", code],
        capture_output=True, text=True, timeout=30, env=clean_env(),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        WARNING,
        f"{docker_like}: permission denied, so Docker containers are named by ID only;"
        f" {pods}: Permission denied, so Kubernetes pods are named by UID only",
        "run gputop as root or as a member of the `docker` group;"
        " run gputop as root (the kubelet's pod folders are root's)",
    ]


def test_a_check_that_hangs_or_fails_is_unknown_and_the_others_go_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import gputop.core.doctor as doctor_module

    monkeypatch.setattr(doctor_module, "CHECK_TIMEOUT_S", 0.1)
    release = threading.Event()

    def hangs() -> Finding:
        release.wait(5)
        return Finding("mount", "a mount", OK, "answered too late")

    def fails() -> Finding:
        raise PermissionError(13, "Permission denied")

    try:
        assert doctor_module._in_time("mount", "a mount", hangs) == Finding("mount", "a mount", UNKNOWN,
                                                                           "no answer within 0.1s")
    finally:
        release.set()
    assert doctor_module._in_time("socket", "a socket", fails) == Finding(
        "socket", "a socket", UNKNOWN, "the check failed: PermissionError: [Errno 13] Permission denied"
    )


PROC_WARNING = (
    "/proc is mounted with hidepid=invisible: gputop, as nobody, sees only its own processes; other users' GPU"
    " processes show N/A as their user and command, and cannot be signalled"
)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare")
def test_a_proc_that_hides_other_users_processes_is_said_with_what_it_costs() -> None:
    # A private mount namespace with /proc mounted hidepid=2; the check runs as nobody, then as root.
    code = (
        "import json, os; from gputop.core.doctor.host_checks import proc_visibility\n"
        "as_root = proc_visibility()\n"
        "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
        "f = proc_visibility()\n"
        "print(json.dumps([[f.status, f.found, f.advice], [as_root.status, as_root.found]]))\n"
    )
    done = subprocess.run(
        ["unshare", "--mount", "--fork", "sh", "-c",
         'mount -t proc -o hidepid=2 proc /proc && exec "$0" -c "$1"', sys.executable, code],
        capture_output=True, text=True, timeout=60, env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    as_nobody, as_root = json.loads(done.stdout)
    assert as_nobody == [
        WARNING,
        PROC_WARNING,
        "run gputop as root, or have /proc remounted with a group gputop's user is in"
        " (`mount -o remount,hidepid=2,gid=GROUP /proc`)",
    ]
    assert as_root == [OK, "/proc is mounted with hidepid=invisible, but gputop runs as root and sees every process"]


def test_a_proc_that_hides_nothing_or_exempts_gputops_group_is_fine() -> None:
    shown = "25 1 0:22 / /proc rw,nosuid - proc proc rw\n"
    hidden = "25 1 0:22 / /proc rw,nosuid - proc proc rw,hidepid=2,gid=27\n"
    fine = proc_visibility(shown, euid=1000, groups=(1000,))
    assert (fine.status, fine.found) == (OK, "/proc shows every user's processes")
    exempt = proc_visibility(hidden, euid=1000, groups=(1000, 27))
    assert (exempt.status, exempt.found) == (
        OK, "/proc is mounted with hidepid=2,gid=27, and gputop's user is in group 27"
    )
    hiding = proc_visibility(hidden, euid=1000, groups=(1000,), user="alice")
    assert (hiding.status, hiding.found.split(":")[0]) == (WARNING, "/proc is mounted with hidepid=2,gid=27")
