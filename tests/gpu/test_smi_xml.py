"""The real-GPU tier's yardsticks, checked here without a GPU: `nvidia-smi -q -x` read back from
published output, the comparison with gputop's `--json`, and the PTX kernel's text."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .cuda_child import KERNEL, PTX
from .smi_xml import MiB, SmiGpu, compare, parse_smi_xml, quantity

FIXTURE = Path(__file__).with_name("data") / "nvidia-smi-q-x.xml"


def test_the_published_output_is_read_in_gputops_units() -> None:
    a100, blackwell = parse_smi_xml(FIXTURE.read_text())
    assert a100 == SmiGpu(
        name="NVIDIA A100-SXM4-40GB",
        uuid="GPU-27b94a00-ed54-5c24-b1fd-1054085de32a",
        memory_total=40960 * MiB,
        memory_used=38 * MiB,
        temperature=36.0,
        power_draw=66.92,
        power_limit=400.0,
        processes={4242: 1534 * MiB},
    )
    # Driver 580's layout: padded values, power_draw "N/A", the draw in instant_power_draw.
    assert (blackwell.memory_total, blackwell.temperature, blackwell.power_draw, blackwell.power_limit) == (
        97887 * MiB, 37.0, 66.84, 600.0,
    )
    assert blackwell.processes == {}


def test_quantities_say_none_for_what_nvidia_smi_does_not_know() -> None:
    assert [quantity(t) for t in (" N/A ", "[N/A]", "[Not Supported]", "", None, "12 MiB")] == [
        None, None, None, None, None, 12 * MiB,
    ]


def report_like(gpus: list[SmiGpu], pid: int, memory: int | None) -> dict[str, Any]:
    """gputop's --json for the GPUs nvidia-smi described, the process ``pid`` on the first."""
    return {"gpus": [
        {
            "index": index,
            "name": gpu.name,
            "uuid": gpu.uuid,
            "memory": {"total": gpu.memory_total, "used": gpu.memory_used},
            "temperature": {"current": gpu.temperature},
            "power": {"draw": gpu.power_draw, "limit": gpu.power_limit},
            "processes": [
                {"pid": pid, "gpu_memory": memory, "mig_device": None, "visible": True, "not_visible_reason": None}
            ] if index == 0 else [],
        }
        for index, gpu in enumerate(gpus)
    ]}


def test_a_report_that_matches_nvidia_smi_has_no_problem() -> None:
    smi = parse_smi_xml(FIXTURE.read_text())
    assert compare(report_like(smi, 4242, 1534 * MiB), smi, 4242, 1024 * MiB) == []
    # Outside the host's PID namespace the child is not looked for: only the GPUs are compared.
    assert compare(report_like(smi, 1, None), smi, None, 1024 * MiB) == []


def test_each_disagreement_is_named() -> None:
    smi = parse_smi_xml(FIXTURE.read_text())
    report = report_like(smi, 4242, 1534 * MiB)
    first = report["gpus"][0]
    first["uuid"] = "GPU-other"
    first["memory"]["used"] = (38 + 500) * MiB  # more than 1 % of 40 GiB away
    first["temperature"]["current"] = 80
    first["power"]["draw"] = None
    problems = compare(report, smi, 4242, 2048 * MiB)
    assert [problem.split(":")[0] for problem in problems] == [
        "names and UUIDs", "GPU 0", "GPU 0", "GPU 0", "PID 4242",
    ]
    assert problems[1] == f"GPU 0: used memory gputop {538 * MiB}, nvidia-smi {38 * MiB}"
    assert problems[4] == f"PID 4242: GPU memory {1534 * MiB}, less than the {2048 * MiB} bytes it allocated"
    assert compare(report_like(smi, 4242, 1534 * MiB), smi, 999, 0) == ["PID 999 listed 0 times, not once"]


def test_the_ptx_kernel_declares_what_it_uses_and_takes_what_the_launch_passes() -> None:
    text = PTX.decode()
    assert re.search(r"^\.version \d+\.\d+$", text, re.M) and re.search(r"^\.target sm_\d+$", text, re.M)
    entry = re.search(r"\.visible \.entry (\w+)\(([^)]*)\)", text)
    assert entry is not None and entry.group(1) == KERNEL.decode()
    params = re.findall(r"\.param \.(u64|u32) (\w+)", entry.group(2))
    assert [kind for kind, _ in params] == ["u64", "u32", "u32"]  # the pointer, the count, the seed
    assert set(re.findall(r"ld\.param\.\w+ %\w+, \[(\w+)\]", text)) == {name for _, name in params}
    declared = {name: int(count) for name, count in re.findall(r"\.reg \.\w+ %(\w+?)<(\d+)>;", text)}
    for name, number in re.findall(r"%(p|r|rd)(\d+)\b", text):
        assert int(number) < declared[name], f"%{name}{number} is not declared"
    labels = set(re.findall(r"^(\w+):$", text, re.M))
    assert set(re.findall(r"bra (\w+);", text)) <= labels
    assert text.count("{") == text.count("}") == 1
