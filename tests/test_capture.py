"""`gputop doctor --capture` on the fake driver, replayed by `gputop --nvml-capture` with no NVML library."""

from __future__ import annotations

import getpass
import gzip
import json
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from capture_compare import differences
from fakenvml import NO_SUCH_PID, GiB, MiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.capture.capture_file import read_capture

INTERVAL = "0.1"


def machine(pid: int) -> Scenario:
    """A GPM-capable H100 with a visible process, an A100 in MIG mode with a process in an instance,
    a pre-Hopper L4 with figures NOT_SUPPORTED, and a lost GPU; process lists answer their size
    probe with SUCCESS and the count."""
    return (
        Scenario(driver="550.54.15", cuda=12040, size_probe="success")
        .gpu(name="NVIDIA H100 80GB HBM3", memory_used=40 * GiB, util_gpu=87, power_mw=412_300, gpm=1,
             sm_active=61.0, tensor_active=12.5, dram_active=30.0, energy_mj=5_000_000, memory_temp=60)
        .gpu(name="NVIDIA A100-SXM4-40GB", memory_total=40 * GiB, mig_mode=1)
        .mig(1, 0, memory_used=2 * GiB)
        .mig(1, 1)
        .gpu(name="NVIDIA L4", memory_total=24 * GiB, fan=None, power_mw=None, clock_sm=None)
        .gpu(name="NVIDIA A10")
        .lost(3)
        .process(gpu=0, pid=pid, used=30 * GiB, kind="C", sm=55)
        .process(gpu=1, pid=NO_SUCH_PID, used=1 * GiB, mig=0)
        .process(gpu=2, pid=NO_SUCH_PID + 1, used=512 * MiB, kind="CG")
        .error("nvmlDeviceGetEncoderUtilization", "NOT_SUPPORTED", gpu=2)
    )


def gputop(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gputop", *args], capture_output=True, text=True, timeout=60, env=env)


def without_nvml(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """The environment with no NVML library to be found: LD_LIBRARY_PATH is an empty folder."""
    empty = tmp_path / "no-nvml"
    empty.mkdir(exist_ok=True)
    return {**env, "LD_LIBRARY_PATH": str(empty)}


Captured = tuple[Path, dict[str, str], Scenario]


@pytest.fixture(scope="module")
def captured(fake_nvml_library: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Captured]:
    """A capture taken by the real command on the fake driver (names and identifiers replaced), with a
    real process on GPU 0; taken once for the tests that replay it."""
    folder = tmp_path_factory.mktemp("captured")
    fake = FakeNvml(folder / "fakenvml")
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        scenario = machine(sleeper.pid)
        fake.write(scenario)
        env = {**fake.env(), "XDG_CONFIG_HOME": str(folder / "config")}
        path = folder / "capture.json.gz"
        result = gputop(env, "-i", INTERVAL, "doctor", "--capture", str(path), "--seconds", "0.45")
        assert result.returncode == 0, result.stderr
        assert result.stderr.splitlines()[-1].startswith(f"gputop: captured 5 ticks of 4 GPUs to {path} (")
        assert result.stderr.splitlines()[-1].endswith("): attach it to a bug report")
        document = json.loads(gzip.decompress(path.read_bytes()))
        assert document["doctor"]["runnable"] is True
        assert str(Path.home()) not in json.dumps(document)  # the doctor's paths say ~ instead
        yield path, env, scenario
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_replay_without_nvml_writes_the_recorded_json_tick_by_tick(captured: Captured, tmp_path: Path) -> None:
    path, env, _ = captured
    capture = read_capture(str(path))
    recorded = [tick.json for tick in capture.ticks]
    out = tmp_path / "replay.jsonl"
    # More ticks than were captured: the last one repeats (on a clock one interval a tick on).
    result = gputop(without_nvml(env, tmp_path), "--nvml-capture", str(path), "-i", INTERVAL, "record", str(out),
                    "--duration", "1.2")
    assert result.returncode == 0, result.stderr
    replayed = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(replayed) > len(recorded) == 5
    for tick, (before, after) in enumerate(zip(recorded, replayed, strict=False)):
        assert differences(before, after) == [], f"tick {tick + 1}"
        assert after["source"] == "capture"
    first, _, l4, lost = replayed[0]["gpus"]
    assert (first["activity"]["sm_active"], first["processes"][0]["command"]) == (None, "command-1")
    assert replayed[1]["gpus"][0]["activity"]["sm_active"] == 61.0  # GPM: from the second sample on
    assert [mig["processes"][0]["pid"] for mig in replayed[0]["gpus"][1]["mig_devices"][:1]] == [NO_SUCH_PID]
    assert (l4["fan"], l4["power"]["draw"], l4["clocks"]["sm"]) == (None, None, None)
    assert lost["lost"] is True
    last, repeated = replayed[4], replayed[5]
    # The same answers again; only how long a process has been idle grows with the clock.
    assert [d for d in differences(last["gpus"], repeated["gpus"]) if "/idle_seconds:" not in d] == []
    assert repeated["timestamp"] == pytest.approx(last["timestamp"] + float(INTERVAL))


def test_once_from_a_replay_is_the_once_of_the_machine_captured(
    fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    fake_nvml.write(machine(NO_SUCH_PID + 7))
    env = fake_nvml.env()
    path = tmp_path / "capture.json"
    taken = gputop(env, "-i", "0.25", "doctor", "--capture", str(path), "--seconds", "0.4", "--no-anonymize",
                   "--keep-names")
    assert taken.returncode == 0, taken.stderr
    live = gputop(env, "--once", "--width", "100", "--color", "never")
    replay = gputop(without_nvml(env, tmp_path), "--nvml-capture", str(path), "--once", "--width", "100",
                    "--color", "never")
    assert replay.returncode == 0, replay.stderr
    # The first line says when: the replay says when the capture was taken.
    assert replay.stdout.splitlines()[1:] == live.stdout.splitlines()[1:]
    assert "NVIDIA L4" in replay.stdout and "lost" in replay.stdout


def scrape(env: dict[str, str], *args: str) -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "gputop", "-i", INTERVAL, *args, "export", "--listen", f"127.0.0.1:{port}",
         "--hostname", "alpha"],
        env=env, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert process.stderr is not None
        assert process.stderr.readline() == f"gputop: serving http://127.0.0.1:{port}/metrics\n"
        time.sleep(0.8)  # past the capture's last tick
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
            return str(response.read().decode())
    finally:
        process.terminate()
        process.wait(10)


def timeless(page: str) -> list[str]:
    """The page's series and values, but for the two that count time (when sampled, idle for how long)
    and the source's name."""
    lines = []
    for line in page.splitlines():
        if line.startswith(("gputop_last_sample_timestamp_seconds", "gputop_process_idle_seconds")):
            line = line.rsplit(" ", 1)[0]
        lines.append(line.replace('source="capture"', 'source="nvml"'))
    return lines


def test_the_exporter_serves_the_same_metrics_from_a_replay(captured: Captured, tmp_path: Path) -> None:
    path, env, scenario = captured
    live = scrape(env)
    # The capture replaced identifiers and names: the live page is compared with them replaced too.
    recorded = read_capture(str(path)).ticks[-1].json
    assert recorded is not None
    for spec, gpu in zip(scenario.gpus, recorded["gpus"], strict=True):
        if gpu["uuid"] is not None:
            live = live.replace(str(spec.uuid), gpu["uuid"]).replace(str(spec.pci), gpu["pci_bus_id"])
    for spec, mig in zip(scenario.migs, recorded["gpus"][1]["mig_devices"], strict=True):
        live = live.replace(str(spec.uuid), mig["uuid"])
    process = recorded["gpus"][0]["processes"][0]
    live = live.replace(f'user="{getpass.getuser()}"', f'user="{process["user"]}"')
    live = live.replace('command="sleep"', f'command="{process["name"]}"')
    replayed = scrape(without_nvml(env, tmp_path), "--nvml-capture", str(path))
    assert 'source="capture"' in replayed and 'user="user-1"' in replayed
    assert timeless(replayed) == timeless(live)


def test_identifiers_and_names_stay_out_of_a_capture_unless_asked_for(
    fake_nvml: FakeNvml, sleeper: subprocess.Popen[bytes], tmp_path: Path
) -> None:
    from gputop.core.capture.take import CaptureOptions, take_capture
    from gputop.core.settings import Settings

    scenario = machine(sleeper.pid)
    fake_nvml.write(scenario)
    fake_nvml.load()
    secrets = [gpu.uuid for gpu in scenario.gpus] + [gpu.pci for gpu in scenario.gpus] + [m.uuid for m in scenario.migs]
    secrets += [str(pci)[4:] for pci in secrets if str(pci).startswith("0000")]  # the legacy 4-digit bus ids
    hostname = socket.gethostname()
    names = ['"sleep 600"', '"sleep"']

    def text(**options: bool) -> str:
        taken = take_capture(CaptureOptions(seconds=0.25, interval_s=0.1, **options), Settings())
        return json.dumps(taken.document)

    anonymous = text()
    assert [secret for secret in secrets if secret and secret in anonymous] == []
    assert f'"{hostname}"' not in anonymous and '"hostname": "host-1"' in anonymous
    assert [name for name in names if name in anonymous] == []
    assert "GPU-00000000-0000-0000-0000-000000000001" in anonymous and "00000000:01:00.0" in anonymous
    kept = text(anonymize=False, keep_names=True)
    # The lost GPU (3) never said its UUID or bus id.
    read = [gpu.uuid for gpu in scenario.gpus[:3]] + [gpu.pci for gpu in scenario.gpus[:3]]
    read += [mig.uuid for mig in scenario.migs]
    assert [secret for secret in read if secret not in kept] == []
    assert f'"{hostname}"' in kept and all(name in kept for name in names)
    named = json.loads(text(keep_names=True))
    assert named["names_kept"] is True and named["anonymized"] == ["uuid", "pci_bus_id", "serial", "hostname"]


def test_a_capture_of_8_gpus_for_10_ticks_fits_in_a_megabyte(fake_nvml: FakeNvml, tmp_path: Path) -> None:
    from gputop.core.capture.capture_file import write_capture
    from gputop.core.capture.take import CaptureOptions, take_capture
    from gputop.core.settings import Settings

    scenario = Scenario()
    for index in range(8):
        scenario.gpu(gpm=1, sm_active=50.0, energy_mj=1000 * index, nvlink_count=4, nvlink_version=4)
        for process in range(4):
            scenario.process(gpu=index, pid=NO_SUCH_PID + 10 * index + process, used=GiB, sm=10)
    fake_nvml.write(scenario)
    fake_nvml.load()
    taken = take_capture(CaptureOptions(seconds=0.95, interval_s=0.1), Settings())
    assert taken.ticks == 10 and taken.gpus == 8
    size = write_capture(taken.document, str(tmp_path / "eight.json.gz"))
    assert size < 1_000_000
