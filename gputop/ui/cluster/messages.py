"""The cluster view's messages, from the worker threads (the app's and its screens') to the UI, and what
the cluster is read through."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Protocol

from textual.message import Message

from gputop.core.cluster.client import ErrorKind
from gputop.core.cluster.first import Fetcher
from gputop.core.cluster.model import ClusterHost, ClusterState, GpuFinding, HostDetail
from gputop.core.cluster.owners import FleetOwner


class ClusterFetcher(Fetcher, Protocol):
    """What the app and its screens read the cluster through (a ClusterReader; a fake in tests)."""

    def history(self, hostnames: Collection[str]) -> dict[str, tuple[float | None, ...]]: ...
    def detail(self, hostname: str) -> HostDetail: ...
    def gpus(self, key: str) -> tuple[GpuFinding, ...]: ...
    def owners(self, kind: str, hosts: Collection[ClusterHost]) -> list[FleetOwner]: ...
    def owner_hosts(self, kind: str, name: str) -> frozenset[str]: ...


@dataclass
class Fetched(Message):
    """One refresh arrived from the worker thread."""

    state: ClusterState


@dataclass
class PartFetched(Message):
    """Part of the first refresh: the hosts, and what else has answered so far."""

    state: ClusterState


@dataclass
class FetchFailed(Message):
    """Prometheus could not be read."""

    reason: str
    kind: ErrorKind


@dataclass
class LookupFailed(Message):
    """A host's detail or a count's GPUs could not be read (the refresh cycle goes on apart)."""

    reason: str
    kind: ErrorKind


@dataclass
class HistoryFetched(Message):
    history: dict[str, tuple[float | None, ...]]


@dataclass
class DetailFetched(Message):
    detail: HostDetail


@dataclass
class GpusFetched(Message):
    key: str
    gpus: tuple[GpuFinding, ...]


@dataclass
class OwnersFetched(Message):
    """The fleet's owners by one kind (the owner screen)."""

    kind: str
    owners: list[FleetOwner]


@dataclass
class OwnerHostsFetched(Message):
    """The hosts of the owner chosen on the owner screen."""

    kind: str
    name: str
    hostnames: frozenset[str]
