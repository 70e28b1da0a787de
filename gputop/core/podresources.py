"""Kubernetes' GPU allocations, from the kubelet's PodResources API (its unix socket).

Where ``/var/lib/kubelet/pod-resources/kubelet.sock`` is readable (gputop on a node, or in a pod
that mounts it), the kubelet says which pod and container each device was allocated to: a GPU (or
MIG device) is then labelled with its pod even when its processes are invisible from here (gputop in
a pod without ``hostPID``).

The API is gRPC: it needs the optional ``grpcio`` (``pip install 'gputop[kubernetes]'``). The
answer is decoded here from protobuf's wire format (the few fields read), so no generated code or
``protobuf`` package is needed. Without the socket, or without grpcio, nothing is asked and nothing
changes; the socket is looked for again every ``REFRESH_S``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from gputop.core.model import Allocation, GpuSample

SOCKET = "/var/lib/kubelet/pod-resources/kubelet.sock"
LIST_METHOD = "/v1.PodResourcesLister/List"
TIMEOUT_S = 0.5
REFRESH_S = 10.0
# The NVIDIA device plugin's resources: nvidia.com/gpu, nvidia.com/gpu.shared, nvidia.com/mig-1g.10gb, ...
GPU_RESOURCE_PREFIX = "nvidia.com/"


class WireError(ValueError):
    """Bytes that are not a protobuf message."""


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if position >= len(data) or shift > 63:
            raise WireError("a varint runs past the message")
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, position


def fields(data: bytes) -> Iterator[tuple[int, bytes | int]]:
    """(field number, value) of each field of a protobuf message: bytes for length-delimited ones."""
    position = 0
    while position < len(data):
        key, position = _varint(data, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, position = _varint(data, position)
            yield number, value
        elif wire_type == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise WireError("a field runs past the message")
            yield number, data[position : position + length]
            position += length
        elif wire_type in (1, 5):
            position += 8 if wire_type == 1 else 4
        else:
            raise WireError(f"unknown wire type {wire_type}")


def _text(value: bytes | int) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else ""


def _messages(data: bytes, number: int) -> Iterator[bytes]:
    for field_number, value in fields(data):
        if field_number == number and isinstance(value, bytes):
            yield value


def parse_list_response(data: bytes) -> dict[str, Allocation]:
    """Device id -> allocation, from a ``ListPodResourcesResponse``; raises WireError on bad bytes.

    ListPodResourcesResponse{1: PodResources*}; PodResources{1: name, 2: namespace, 3:
    ContainerResources*}; ContainerResources{1: name, 2: ContainerDevices*}; ContainerDevices{1:
    resource_name, 2: device_ids*}.
    """
    allocations: dict[str, Allocation] = {}
    for pod in _messages(data, 1):
        pod_fields = list(fields(pod))
        name = next((_text(v) for n, v in pod_fields if n == 1), "")
        namespace = next((_text(v) for n, v in pod_fields if n == 2), "")
        for container in _messages(pod, 3):
            container_name = next((_text(v) for n, v in fields(container) if n == 1), "")
            for devices in _messages(container, 2):
                device_fields = list(fields(devices))
                resource = next((_text(v) for n, v in device_fields if n == 1), "")
                if not resource.startswith(GPU_RESOURCE_PREFIX):
                    continue
                for number, device in device_fields:
                    if number == 2:
                        allocations[_text(device)] = Allocation(
                            namespace=namespace, pod=name, container=container_name, resource=resource
                        )
    return allocations


def _grpc_list(socket_path: str, timeout_s: float) -> bytes | None:
    """The raw List answer, or None when grpcio is missing or the kubelet does not answer."""
    try:
        import grpc  # type: ignore[import-untyped,import-not-found,unused-ignore]  # optional: gputop[kubernetes]
    except ImportError:
        return None
    channel: Any = grpc.insecure_channel(f"unix://{socket_path}")
    try:
        call = channel.unary_unary(LIST_METHOD, request_serializer=lambda _: b"", response_deserializer=bytes)
        answer: bytes = call(b"", timeout=timeout_s)
        return answer
    except grpc.RpcError:
        return None
    finally:
        channel.close()


def list_allocations(socket_path: str = SOCKET, timeout_s: float = TIMEOUT_S) -> dict[str, Allocation] | None:
    """Device id -> allocation from the kubelet; None when it cannot say (no socket, no grpcio, no answer)."""
    if not os.path.exists(socket_path):
        return None
    answer = _grpc_list(socket_path, timeout_s)
    if answer is None:
        return None
    try:
        return parse_list_response(answer)
    except WireError:
        return None


class PodResources:
    """The kubelet's allocations, asked at most every ``refresh_s`` (a pod's devices change only as it starts)."""

    def __init__(
        self,
        socket_path: str = SOCKET,
        refresh_s: float = REFRESH_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.socket_path = socket_path
        self.refresh_s = refresh_s
        self._clock = clock
        self._asked_at: float | None = None
        self._allocations: Mapping[str, Allocation] = {}

    def allocations(self) -> Mapping[str, Allocation]:
        """Device id (GPU or MIG UUID, or index) -> allocation; empty when the kubelet cannot say."""
        now = self._clock()
        if self._asked_at is None or now - self._asked_at >= self.refresh_s:
            self._asked_at = now
            self._allocations = list_allocations(self.socket_path) or {}
        return self._allocations


def with_allocations(gpus: tuple[GpuSample, ...], allocations: Mapping[str, Allocation]) -> tuple[GpuSample, ...]:
    """The GPUs (and MIG devices) with the pods they are allocated to: by UUID, or by index where the
    device plugin names devices by index. The same tuple when the kubelet allocated nothing."""
    if not allocations:
        return gpus

    def gpu_with(gpu: GpuSample) -> GpuSample:
        found = allocations.get(gpu.uuid or "") or allocations.get(str(gpu.index))
        migs = tuple(
            dataclasses.replace(mig, allocation=allocations.get(mig.uuid or "")) for mig in gpu.mig_devices
        )
        return dataclasses.replace(gpu, allocation=found, mig_devices=migs)

    return tuple(gpu_with(gpu) for gpu in gpus)
