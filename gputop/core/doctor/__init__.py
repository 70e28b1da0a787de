"""``gputop doctor``: why gputop cannot see a GPU (or its processes), and what to do.

Every check has a short deadline: the driver's are asked in a child process (``probe.py``) that is
killed after ``driver_checks.PROBE_TIMEOUT_S``; the others run on threads given ``CHECK_TIMEOUT_S``
each. gputop can run when nvmlInit answers (the exit status: 0, else 1).
"""

from __future__ import annotations

import json
import os
import textwrap
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass

from gputop.core.doctor import driver_checks, host_checks
from gputop.core.doctor.findings import ERROR, OK, UNKNOWN, WARNING, Finding

__all__ = ["ERROR", "OK", "UNKNOWN", "WARNING", "Diagnosis", "Finding", "diagnose"]

CHECK_TIMEOUT_S = 3.0
# What `gputop doctor` says last where gputop cannot run (docs/doctor.md).
CAPTURE_HINT = (
    "To report this: `gputop doctor --capture capture.json.gz` records what this machine's NVML answers;"
    " attach that file to a bug report"
)


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every finding, and whether gputop can run here."""

    runnable: bool
    summary: str
    findings: tuple[Finding, ...]

    def to_json(self) -> str:
        return json.dumps(
            {"runnable": self.runnable, "summary": self.summary, "checks": [asdict(f) for f in self.findings]},
            indent=2,
        )

    def to_text(self, columns: int = 100, *, capture_hint: bool = True) -> str:
        """In words: a line for the verdict, then each check's status, title, finding and advice; where
        gputop cannot run, how to report it (``capture_hint``)."""
        lines = [f"gputop doctor: {self.summary}", ""]
        width = max(len(f.title) for f in self.findings)
        indent = " " * (2 + 8 + 1 + width + 2)
        for finding in self.findings:
            status = finding.status if finding.status == OK else finding.status.upper()
            head = f"  {status:<8} {finding.title:<{width}}  "
            lines += textwrap.wrap(
                finding.found, max(40, columns), initial_indent=head, subsequent_indent=indent, break_on_hyphens=False
            )
            if finding.advice:
                lines += textwrap.wrap(
                    finding.advice, max(40, columns), initial_indent=indent + "→ ", subsequent_indent=indent + "  ",
                    break_on_hyphens=False,
                )
        if capture_hint and not self.runnable:
            lines += ["", *textwrap.wrap(CAPTURE_HINT, max(40, columns), break_on_hyphens=False)]
        return "\n".join(lines) + "\n"


def _in_time(name: str, title: str, check: Callable[[], Finding]) -> Finding:
    """``check()``, or an UNKNOWN finding when it does not answer within CHECK_TIMEOUT_S."""
    result: list[Finding] = []

    def run() -> None:
        try:
            result.append(check())
        except Exception as error:  # noqa: BLE001 - a check that fails is a finding, not a traceback
            result.append(Finding(name, title, UNKNOWN, f"the check failed: {type(error).__name__}: {error}"))

    # A daemon thread: one stuck on a hung mount or socket must not keep gputop from exiting.
    thread = threading.Thread(target=run, name=f"gputop-doctor-{name}", daemon=True)
    thread.start()
    thread.join(CHECK_TIMEOUT_S)
    if not result:
        return Finding(name, title, UNKNOWN, f"no answer within {CHECK_TIMEOUT_S:g}s")
    return result[0]


def diagnose(environ: Mapping[str, str] | None = None) -> Diagnosis:
    """Run every check (a few seconds at most) and say whether gputop can run."""
    env = os.environ if environ is None else environ
    probe = driver_checks.run_probe()
    runnable = probe.runnable
    findings = [
        _in_time("device_files", "device files", lambda: host_checks.device_files(runnable)),
        driver_checks.library(probe),
        driver_checks.binding(probe),
        driver_checks.driver(probe),
    ]
    persistence = driver_checks.persistence(probe)
    if persistence is not None:
        findings.append(persistence)
    findings += [
        _in_time("pid_namespace", "PID namespace", host_checks.pid_namespace),
        _in_time("proc_visibility", "other users' processes", host_checks.proc_visibility),
        _in_time("container_names", "container names", host_checks.container_names),
        host_checks.colours(env),
    ]
    if runnable:
        summary = f"gputop can run ({findings[3].found})"
    else:
        # The first cause in the order the driver is reached: library, binding, driver, device files.
        causes = (findings[1], findings[2], findings[3], findings[0])
        first = next((f for f in causes if f.status == ERROR), findings[3])
        summary = f"gputop cannot run: {first.found}"
    return Diagnosis(runnable, summary, tuple(findings))
