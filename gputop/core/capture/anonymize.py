"""Stand-ins for what identifies a machine or its people in a capture.

Identifiers (GPU and MIG UUIDs and any other UUID, PCI bus ids, board serials, the host name) are
replaced in the whole document, the NVML answers and the ``--json`` alike, each by a stable
stand-in of the same shape, so the replay reads them as it read the originals. Processes' users and
commands (and what names them: container names, jobs' names and users) are replaced in the snapshot
before gputop judges it, so that its diagnoses and owners speak of the stand-ins too.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

from gputop.core.model import GpuSample, ProcessSample, Snapshot

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
BUS_ID = re.compile(r"\b([0-9a-fA-F]{4}|[0-9a-fA-F]{8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])\b")
# The calls whose answers are board serials, replaced wherever they appear.
SERIAL_CALLS = ("nvmlDeviceGetSerial", "nvmlDeviceGetBoardPartNumber")
REPLACED = ("uuid", "pci_bus_id", "serial", "hostname")


class Identifiers:
    """The stand-ins of one capture, each made the first time its original is met."""

    def __init__(self, hostname: str | None) -> None:
        self._uuids: dict[str, str] = {}
        self._buses: dict[tuple[int, int, int, int], int] = {}
        self._exact: dict[str, str] = {}
        if hostname:
            self._exact[hostname] = "host-1"
            short = hostname.split(".")[0]
            if short and short != hostname:
                self._exact.setdefault(short, "host-1")

    def serial(self, text: str) -> None:
        if text and text not in self._exact:
            self._exact[text] = f"{len(self._exact) + 1:013d}"

    def text(self, text: str) -> str:
        if text in self._exact:
            return self._exact[text]
        text = UUID.sub(self._uuid, text)
        text = BUS_ID.sub(self._bus, text)
        for original, stand_in in self._exact.items():
            if len(original) >= 6 and original in text:
                text = text.replace(original, stand_in)
        return text

    def _uuid(self, match: re.Match[str]) -> str:
        original = match.group(0).lower()
        if original not in self._uuids:
            self._uuids[original] = f"00000000-0000-0000-0000-{len(self._uuids) + 1:012x}"
        return self._uuids[original]

    def _bus(self, match: re.Match[str]) -> str:
        domain, bus, device, function = (int(part, 16) for part in match.groups())
        number = self._buses.setdefault((domain, bus, device, function), len(self._buses) + 1)
        width = len(match.group(1))
        stand_in = f"{0:0{width}X}:{number:02X}:00.0"
        return stand_in.lower() if any(letter in "abcdef" for letter in match.group(0)) else stand_in


def anonymize_document(document: dict[str, Any], hostname: str | None) -> dict[str, Any]:
    """The capture with every identifier replaced by its stand-in."""
    identifiers = Identifiers(hostname)
    for phase in [document.get("open", []), *(tick["calls"] for tick in document.get("ticks", []))]:
        for call in phase:
            if call.get("f") in SERIAL_CALLS and isinstance(call.get("r"), str):
                identifiers.serial(call["r"])
    replaced = _walk(document, identifiers)
    return replaced  # type: ignore[no-any-return]


def _walk(value: Any, identifiers: Identifiers) -> Any:
    if isinstance(value, str):
        return identifiers.text(value)
    if isinstance(value, list):
        return [_walk(item, identifiers) for item in value]
    if isinstance(value, dict):
        walked = {identifiers.text(key): _walk(item, identifiers) for key, item in value.items()}
        if str(walked.get("$", "")).startswith("c_nvmlPciInfo") and "busId" in walked:
            _pci_numbers(walked)
        return walked
    return value


def _pci_numbers(info: dict[str, Any]) -> None:
    """A PCI info structure's numbers, made to agree with its (replaced) bus id."""
    bus_id = info["busId"]
    text = bus_id.get("v") if isinstance(bus_id, dict) else bus_id
    match = BUS_ID.search(str(text))
    if match is None:
        return
    domain, bus, device, _ = (int(part, 16) for part in match.groups())
    for name, number in (("domain", domain), ("bus", bus), ("device", device)):
        if name in info:
            info[name] = number


class Names:
    """Stand-ins for processes' users and commands: ``user-1``, ``command-1``, ..."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str], str] = {}

    def _stand_in(self, kind: str, original: str | None) -> str | None:
        if original is None:
            return None
        key = (kind, original)
        if key not in self._made:
            self._made[key] = f"{kind}-{sum(1 for made in self._made if made[0] == kind) + 1}"
        return self._made[key]

    def snapshot(self, snapshot: Snapshot) -> Snapshot:
        return dataclasses.replace(snapshot, gpus=tuple(self._gpu(gpu) for gpu in snapshot.gpus))

    def _gpu(self, gpu: GpuSample) -> GpuSample:
        return dataclasses.replace(
            gpu,
            processes=tuple(map(self._process, gpu.processes)),
            mig_devices=tuple(
                dataclasses.replace(mig, processes=tuple(map(self._process, mig.processes))) for mig in gpu.mig_devices
            ),
        )

    def _process(self, process: ProcessSample) -> ProcessSample:
        job = process.job
        if job is not None:
            job = dataclasses.replace(
                job, name=self._stand_in("job", job.name), user=self._stand_in("user", job.user),
                account=self._stand_in("account", job.account),
            )
        return dataclasses.replace(
            process,
            user=self._stand_in("user", process.user),
            name=self._stand_in("program", process.name),
            command=self._stand_in("command", process.command),
            parent_command=self._stand_in("command", process.parent_command),
            container_name=self._stand_in("container", process.container_name),
            job=job,
        )


def without_home(document: dict[str, Any], home: str) -> dict[str, Any]:
    """The document with the user's home folder (in the doctor's paths) written ``~``."""
    home = home.rstrip("/")
    if len(home) < 2:
        return document
    text = json.dumps(document).replace(json.dumps(home)[1:-1], "~")
    found: dict[str, Any] = json.loads(text)
    return found
