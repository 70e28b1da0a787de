"""No false zero, and NET is the machine's traffic: the host's CPU %, a process's CPU % and the network's
rates, read from this machine's real counters through gputop's own readers (core.host.machine, procinfo)."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from test_sampler import ListedProcesses

from gputop.core.host.machine import HostReader, chosen_interfaces
from gputop.core.model import HostSample
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.sampler import Sampler
from gputop.core.settings import settings_from_mapping
from gputop.ui.widgets.host_strip import host_text, net_note

MIB = 1024 * 1024


class ListedOnThisHost(ListedProcesses):
    """A GPU source listing the PIDs it is given, whose host is this machine (read by gputop's HostReader)."""

    def sample_host(self) -> HostSample | None:
        return None


@pytest.fixture
def spinning() -> Iterator[subprocess.Popen[bytes]]:
    """A process in a busy loop: the host is busy, and so is it."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_busy_host_and_process_never_read_0_at_start(spinning: subprocess.Popen[bytes]) -> None:
    # As the TUI starts: the sampler is made, the first frame drawn (first_look), Textual imported
    # (here 0.2 s), one sample taken for the first screen and, at once, the sampler thread's first tick.
    sampler = Sampler(ListedOnThisHost([spinning.pid]))
    sampler.first_look()
    time.sleep(0.2)
    first = sampler.sample()
    at_once = sampler.sample()
    # The host's CPU % is true on the first screen (its first reading was taken when the sampler was
    # made), and a tick a few milliseconds later keeps it: it does not read 0.0 over no interval.
    assert first.host.cpu_percent is not None and first.host.cpu_percent > 0
    assert at_once.host.cpu_percent == first.host.cpu_percent
    # The process's CPU % needs two readings of it: not known on the first screen, nor a few
    # milliseconds later (its ticks have not moved yet: main read 0.0 there), then its busy loop.
    assert [s.gpus[0].processes[0].cpu_percent for s in (first, at_once)] == [None, None]
    time.sleep(0.3)
    later = sampler.sample().gpus[0].processes[0].cpu_percent
    assert later is not None and later > 0


def test_until_a_figure_is_known_the_strip_says_so_not_0() -> None:
    starting = HostSample(memory_total=64 << 30, memory_used=8 << 30, swap_total=0, swap_used=0,
                          load_average=(1.0, 1.0, 1.0), net_interfaces=("eth0",))
    for width in (80, 120, 160):
        text = host_text(starting, width).plain
        assert re.match(r"CPU [^\d]*…  RAM ", text), (width, text)  # after the bar where one is drawn
        assert text.endswith("NET ▼… ▲…"), (width, text)


def pump_loopback(mib_per_s: float, seconds: float) -> threading.Thread:
    """TCP through 127.0.0.1 at about ``mib_per_s`` for ``seconds``, on its own thread."""
    server = socket.create_server(("127.0.0.1", 0))
    sender = socket.create_connection(server.getsockname())
    receiver, _ = server.accept()
    chunk = b"x" * (256 * 1024)

    def drain() -> None:
        while receiver.recv(1 << 20):
            pass

    def send() -> None:
        start = time.monotonic()
        sent = 0
        while time.monotonic() - start < seconds:
            if sent < (time.monotonic() - start) * mib_per_s * MIB:
                sender.sendall(chunk)
                sent += len(chunk)
            else:
                time.sleep(0.005)
        sender.close()
        server.close()

    threading.Thread(target=drain, daemon=True).start()
    thread = threading.Thread(target=send)
    thread.start()
    return thread


def test_loopback_traffic_moves_net_by_under_1_percent() -> None:
    reader = HostReader()
    lo_before = psutil.net_io_counters(pernic=True)["lo"].bytes_sent
    reader.sample()
    pump_loopback(20, 1.0).join()
    host = reader.sample()
    pumped = psutil.net_io_counters(pernic=True)["lo"].bytes_sent - lo_before
    assert pumped > 15 * MIB  # the traffic was there, on loopback
    assert host.net_interfaces is not None and "lo" not in host.net_interfaces
    if host.net_interfaces:
        # main counted every interface: ▼20MiB/s ▲20MiB/s for traffic that never left the machine.
        assert host.net_rx_rate is not None and host.net_tx_rate is not None
        assert max(host.net_rx_rate, host.net_tx_rate) < 0.01 * 20 * MIB
    else:
        assert (host.net_rx_rate, host.net_tx_rate) == (None, None)


def test_the_nics_are_the_interfaces_with_a_device_behind_them(tmp_path: Path) -> None:
    for name, device in (("eth0", True), ("eno2", True), ("lo", False), ("docker0", False), ("veth1a2b", False),
                         ("bond0", False), ("eth0.100", False)):
        (tmp_path / name).mkdir()
        if device:
            (tmp_path / name / "device").mkdir()
    names = sorted(path.name for path in tmp_path.iterdir())
    assert chosen_interfaces(names, None, tmp_path) == ("eno2", "eth0")
    assert chosen_interfaces(names, ["bond*", "lo"], tmp_path) == ("bond0", "lo")
    assert chosen_interfaces(names, ["*"], tmp_path) == tuple(names)


def test_net_interfaces_is_a_setting_in_the_host_table() -> None:
    settings, warnings = settings_from_mapping({"host": {"net_interfaces": ["eth0", "ens*"]}}, "settings.toml")
    assert (settings.net_interfaces, warnings) == (("eth0", "ens*"), [])
    settings, warnings = settings_from_mapping({"host": {"net_interfaces": "eth0"}}, "settings.toml")
    assert settings.net_interfaces is None
    assert warnings == ["settings.toml: 'host.net_interfaces' should be a list of non-empty strings, not a string"
                        ' ("eth0"); using the default']


def test_json_names_the_interfaces_counted_and_reads_them_back() -> None:
    from test_report import snapshot

    document = snapshot_to_dict(snapshot())
    assert document["host"]["net_interfaces"] == ["eno1", "eno2"]
    assert snapshot_from_dict(document).host.net_interfaces == ("eno1", "eno2")
    del document["host"]["net_interfaces"]  # a recording made before it
    assert snapshot_from_dict(document).host.net_interfaces is None


def test_no_counted_interface_says_no_nic_and_help_names_them() -> None:
    nothing = HostSample(cpu_percent=50.0, net_interfaces=())
    for width in (80, 160):
        assert host_text(nothing, width).plain.endswith("NET no NIC")
    assert net_note(HostSample(net_interfaces=("eno1", "eno2"))) == (
        "NET counts eno1, eno2; the setting net_interfaces (docs/settings.md) chooses others"
        " (default: those with a device behind them)."
    )
    assert net_note(nothing).startswith("NET counts no interface")


UNSHARE, IP = shutil.which("unshare"), shutil.which("ip")
READ_IN_NAMESPACE = (
    "import time, json; from gputop.core.host.machine import HostReader; "
    "r = HostReader(); every = HostReader(net_interfaces=['*']); time.sleep(0.2); h = r.sample(); w = every.sample(); "
    "print(json.dumps([h.net_interfaces, h.net_rx_rate, w.net_interfaces, w.net_rx_rate]))"
)


@pytest.mark.skipif(UNSHARE is None or IP is None, reason="needs unshare and ip")
def test_in_a_namespace_without_a_nic_nothing_is_counted_and_net_says_so() -> None:
    # Loopback, and a veth pair and a dummy interface where the kernel has them: none has a device behind it.
    script = ("ip link set lo up && { ip link add v0 type veth peer name v1 2>/dev/null; "
              "ip link add d0 type dummy 2>/dev/null; true; } && ip -o link show >&2"
              f" && exec {sys.executable} -c \"{READ_IN_NAMESPACE}\"")
    done = subprocess.run([UNSHARE or "", "--net", "sh", "-c", script], capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "Operation not permitted" in done.stderr:
        pytest.skip("no permission for a network namespace here")
    assert done.returncode == 0, done.stderr
    counted, rate, chosen, chosen_rate = json.loads(done.stdout)
    # None is counted and the rates are not known (the strip says "no NIC"), rather than 0 B/s;
    # net_interfaces = ["*"] counts every one of them, loopback included.
    assert (counted, rate) == ([], None)
    present = sorted(line.split(":")[1].strip().split("@")[0] for line in done.stderr.splitlines())
    assert chosen == present and "lo" in chosen and chosen_rate is not None


MEMINFO = """MemTotal:       16384000 kB
MemFree:         1024000 kB
MemAvailable:    4096000 kB
Buffers:          512000 kB
Cached:          2048000 kB
SwapCached:            0 kB
SwapTotal:       8192000 kB
SwapFree:        6144000 kB
Dirty:               128 kB
"""


def test_memory_and_swap_are_read_from_proc_meminfo_used_being_total_less_available(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO)

    host = HostReader(meminfo=meminfo).sample()

    kib = 1024
    assert (host.memory_total, host.memory_used) == (16_384_000 * kib, (16_384_000 - 4_096_000) * kib)
    assert (host.swap_total, host.swap_used) == (8_192_000 * kib, (8_192_000 - 6_144_000) * kib)


def test_a_meminfo_without_memavailable_gives_psutils_figures_not_a_guess(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(MEMINFO.replace("MemAvailable:    4096000 kB\n", ""))  # a kernel before 3.14

    host = HostReader(meminfo=meminfo).sample()

    assert host.memory_total == psutil.virtual_memory().total  # this machine's, as psutil reads it
    assert host.swap_total == psutil.swap_memory().total


NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compr
    lo: {lo} 7    0    0    0     0          0         0 {lo} 7    0    0    0     0       0          0
  eth0: {rx}  100    0    0    0     0          0         0 {tx}  90    0    0    0     0       0          0
"""


def test_the_network_rates_are_the_counted_interfaces_bytes_in_proc_net_dev_over_the_interval(tmp_path: Path) -> None:
    net_dev = tmp_path / "dev"
    net_dev.write_text(NET_DEV.format(lo=5_000, rx=1_000_000, tx=200_000))
    clock = [100.0]
    reader = HostReader(clock=lambda: clock[0], net_interfaces=["eth*"], net_dev=net_dev)

    net_dev.write_text(NET_DEV.format(lo=9_000_000, rx=1_000_000 + 4_000_000, tx=200_000 + 1_000_000))
    clock[0] += 2.0
    host = reader.sample()

    assert host.net_interfaces == ("eth0",)
    assert (host.net_rx_rate, host.net_tx_rate) == (2_000_000.0, 500_000.0)  # bytes/s; lo's not counted
