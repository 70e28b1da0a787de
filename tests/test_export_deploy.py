"""The systemd unit and the Kubernetes DaemonSet of docs/dcgm.md, tried: systemd-analyze, gputop's own parser, YAML."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from gputop.cli.args import build_parser

DOC = (Path(__file__).parents[1] / "docs" / "dcgm.md").read_text()


def block(marker: str, language: str) -> str:
    found = re.search(rf"<!-- {re.escape(marker)}.*?-->\n```{language}\n(.*?)```", DOC, re.S)
    assert found is not None, f"docs/dcgm.md has no {marker} block"
    return found.group(1)


UNIT = block("unit: gputop-export.service", "ini")
DAEMONSET: dict[str, Any] = yaml.safe_load(block("manifest: gputop-daemonset.yaml", "yaml"))


def exec_start() -> list[str]:
    [line] = [line for line in UNIT.splitlines() if line.startswith("ExecStart=")]
    return shlex.split(line.removeprefix("ExecStart="))


@pytest.mark.skipif(shutil.which("systemd-analyze") is None or shutil.which("gputop") is None,
                    reason="needs systemd-analyze and an installed gputop")
def test_the_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    unit = tmp_path / "gputop-export.service"
    gputop = shutil.which("gputop")
    assert gputop is not None
    unit.write_text(UNIT.replace("/usr/local/bin/gputop", gputop))
    result = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_the_units_command_is_a_gputop_export_command_line() -> None:
    program, *arguments = exec_start()
    assert program == "/usr/local/bin/gputop"
    args = build_parser().parse_args(arguments)
    assert (args.command, args.listen, args.export_interval, args.max_process_series) == ("export", ":9400", 5.0, 1000)


def test_the_daemonsets_arguments_and_probes_fit_the_exporter() -> None:
    assert (DAEMONSET["apiVersion"], DAEMONSET["kind"]) == ("apps/v1", "DaemonSet")
    spec = DAEMONSET["spec"]
    assert spec["selector"]["matchLabels"] == spec["template"]["metadata"]["labels"]
    pod = spec["template"]["spec"]
    assert pod["hostPID"] is True  # the GPU processes of every pod, not only its own
    [container] = pod["containers"]
    args = build_parser().parse_args(["export", *container["args"]])
    port = int(args.listen.rpartition(":")[2])
    assert [p["containerPort"] for p in container["ports"]] == [port]
    assert spec["template"]["metadata"]["annotations"]["prometheus.io/port"] == str(port)
    assert container["readinessProbe"]["httpGet"] == {"path": "/-/ready", "port": "metrics"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/-/healthy", "port": "metrics"}
    assert container["ports"][0]["name"] == "metrics"
