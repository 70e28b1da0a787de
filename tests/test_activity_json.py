"""Activity, NVLink, energy and the PCIe link in `--json` (schema 2, the real command against the fake
driver), in `--once`, and through a recording and its replay."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

from fakenvml import GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.model import Activity, Energy, GpuSample, HostSample, MigSample, NvLink, Snapshot
from gputop.core.output.once_table import render_text
from gputop.core.output.snapshot_decode import snapshot_from_dict
from gputop.core.output.snapshot_json import dumps, snapshot_to_dict

MiB = 1024 * 1024


def test_json_schema_2_gives_activity_pcie_link_nvlink_energy_and_the_verdict(fake_nvml: FakeNvml) -> None:
    scenario = (
        Scenario()
        .gpu(
            gpm=1,
            sm_active=34.5,
            sm_occupancy=21,
            tensor_active=12,
            dram_active=61,
            fp64_active=0,
            fp32_active=8,
            fp16_active=3,
            gpm_pcie_rx_mibs=512,
            gpm_pcie_tx_mibs=64,
            gpm_nvlink_rx_mibs=2048,
            gpm_nvlink_tx_mibs=1024,
            energy_mj=3_600_000_000,
            pcie_gen=4,
            pcie_gen_max=5,
            pcie_width=16,
            pcie_width_max=16,
            nvlink_count=18,
            nvlink_version=4,
            nvlink_down=1 << 17,
            nvlink_crc=0,
            nvlink_replay=0,
            nvlink_recovery=0,
            util_gpu=40,
            graphics_active=41.5,
            memory_temp=58,
            pcie_replay=3,
        )
        # A GDDR GPU whose memory sensor field answers 0: no reading, null (as nvidia-smi's N/A).
        .gpu(name="NVIDIA L4", pcie_rx_kbs=100, memory_temp=0)
    )
    fake_nvml.write(scenario)
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "--json"], capture_output=True, text=True, timeout=60, env=fake_nvml.env()
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["schema"] == 2
    hopper, l4 = document["gpus"]
    assert hopper["activity"] == {
        "sm_active": 34.5,
        "sm_occupancy": 21.0,
        "tensor_active": 12.0,
        "dram_active": 61.0,
        "fp64_active": 0.0,
        "fp32_active": 8.0,
        "fp16_active": 3.0,
        "graphics_active": 41.5,
    }
    assert hopper["temperature"]["memory"] == 58.0
    assert hopper["pcie"] == {
        "rx": 512.0 * MiB,
        "tx": 64.0 * MiB,
        "link_gen": 4,
        "link_gen_max": 5,
        "link_width": 16,
        "link_width_max": 16,
        "replay_errors": 3,
    }
    assert hopper["nvlink"] == {
        "version": 4,
        "links_active": 17,
        "links_total": 18,
        "rx": 2048.0 * MiB,
        "tx": 1024.0 * MiB,
        "errors": {"crc": 0, "replay": 0, "recovery": 0},
        "links_down": [17],
        "errors_by_link": [],
    }
    assert hopper["energy"] == {"since_driver_load_j": 3_600_000.0, "since_start_j": 0.0}
    assert hopper["verdict"] is None
    # A GPU without GPM, NVLink, energy or link figures: nulls, and its PCIe counters as before.
    assert (l4["activity"], l4["nvlink"], l4["energy"], l4["temperature"]["memory"]) == (None, None, None, None)
    assert l4["pcie"] == {
        "rx": 100.0 * 1024,
        "tx": 0.0,
        "link_gen": None,
        "link_gen_max": None,
        "link_width": None,
        "link_width_max": None,
        "replay_errors": None,
    }


GPU = GpuSample(
    index=0,
    name="NVIDIA H100 80GB HBM3",
    memory_total=80 * GiB,
    memory_used=8 * GiB,
    utilization_gpu=97.0,
    pcie_rx=1.0e9,
    pcie_link_gen=4,
    pcie_link_gen_max=5,
    pcie_link_width=8,
    pcie_link_width_max=16,
    pcie_replay_errors=12,
    memory_temperature=71.0,
    activity=Activity(sm_active=12.0, sm_occupancy=5.0, tensor_active=None, dram_active=9.0, graphics_active=96.0),
    energy=Energy(since_driver_load_j=1.0e8, since_start_j=360.0),
    nvlink=NvLink(
        version=4,
        links_active=17,
        links_total=18,
        rx=1.0e9,
        tx=2.0e9,
        errors_crc=9,
        errors_replay=0,
        errors_recovery=0,
        links_down=(3,),
        errors_by_link=((3, 9),),
    ),
    mig_mode=True,
    mig_devices=(MigSample(index=0, name="MIG 1g.10gb", activity=Activity(sm_active=80.0)),),
)
SNAPSHOT = Snapshot(timestamp=1_750_000_000.0, hostname="h", host=HostSample(), gpus=(GPU,))


def test_a_recording_replays_every_new_figure_and_a_schema_1_recording_still_reads() -> None:
    line = dumps(snapshot_to_dict(SNAPSHOT))
    assert snapshot_from_dict(json.loads(line)) == SNAPSHOT
    old = json.loads(line)
    for key in ("activity", "nvlink", "energy"):
        del old["gpus"][0][key]
    old["gpus"][0]["pcie"] = {"rx": 1.0e9, "tx": None}
    del old["gpus"][0]["mig_devices"][0]["activity"]
    del old["gpus"][0]["temperature"]["memory"]
    old["schema"] = 1
    back = snapshot_from_dict(old).gpus[0]
    assert (back.memory_temperature, back.pcie_replay_errors) == (None, None)
    assert (back.activity, back.nvlink, back.energy, back.pcie_link_gen, back.mig_devices[0].activity) == (
        None,
        None,
        None,
        None,
        None,
    )


def test_once_shows_activity_a_degraded_link_and_links_down_under_the_gpu_and_nothing_more_without_them() -> None:
    text = render_text(SNAPSHOT, colour=False, width=100)
    assert "    act SM 12%  tensor N/A  DRAM 9%  PCIe Gen4 x8 (max Gen5 x16)  NVLink 17/18 up\n" in text
    plain = replace(GPU, activity=None, nvlink=None, pcie_link_gen=5, pcie_link_width=16, mig_mode=False,
                    mig_devices=())
    lines = render_text(replace(SNAPSHOT, gpus=(plain,)), colour=False, width=100).splitlines()
    assert lines[3] == ""  # header, the GPU's two lines, then the processes
