"""What gputop ships for Prometheus and Grafana, as ``gputop export`` prints it: alert rules tested by promtool.

The rule tests (``tests/prom/rules/alert-rules.test.yml``) run against exactly what
``--print-alert-rules`` prints; the dashboard's queries are evaluated in ``test_cluster_dcgm.py``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

RULE_TESTS = Path(__file__).parent / "prom" / "rules" / "alert-rules.test.yml"
needs_promtool = pytest.mark.skipif(
    shutil.which("promtool") is None, reason="needs promtool: apt-get install -y --no-install-recommends prometheus"
)


def printed(option: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "gputop", "export", option], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout


@pytest.fixture(scope="module")
def rules_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("rules")
    (work / "alert-rules.yml").write_text(printed("--print-alert-rules"))
    shutil.copy(RULE_TESTS, work / RULE_TESTS.name)
    return work


@needs_promtool
def test_every_shipped_rule_passes_its_promtool_test(rules_dir: Path) -> None:
    check = subprocess.run(["promtool", "check", "rules", "alert-rules.yml"], cwd=rules_dir, capture_output=True,
                           text=True)
    assert check.returncode == 0 and "SUCCESS: 11 rules found" in check.stdout, check.stdout + check.stderr
    result = subprocess.run(["promtool", "test", "rules", RULE_TESTS.name], cwd=rules_dir, capture_output=True,
                            text=True)
    assert result.returncode == 0 and "SUCCESS" in result.stdout, result.stdout + result.stderr


def test_every_rule_has_a_test_and_each_test_a_rule(rules_dir: Path) -> None:
    rules = set(re.findall(r"^\s*- alert: (\w+)$", (rules_dir / "alert-rules.yml").read_text(), re.M))
    tested = set(re.findall(r"alertname: (\w+)$", RULE_TESTS.read_text(), re.M))
    assert rules == tested == {
        "GpuIdleMemoryHog", "GpuMemoryUnattributed", "GpuThrottled", "GpuHealthProblem", "GpuNotAnswering",
        "GpuExporterNotSampling", "GpuMemoryFullSoon",
    }


def test_the_dashboard_printed_is_grafana_json_on_gputops_names() -> None:
    dashboard = json.loads(printed("--print-dashboard"))
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]
    assert len(exprs) == 10 and all("gputop_" in expr and '$hostname"' in expr for expr in exprs)
    titles = {panel["title"] for panel in dashboard["panels"]}
    assert {"GPU memory full in (forecast)", "Memory held by idle processes, by user", "GPUs not answering or lost",
            "Problems found, by kind"} <= titles
