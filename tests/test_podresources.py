"""The kubelet's PodResources API: a fake kubelet on a unix socket, the real grpcio client, the real
nvidia-ml-py against the fake driver: a GPU allocated to a pod is labelled though its process is invisible."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import pytest
from fakenvml import NO_SUCH_PID, GiB, Scenario
from fakenvml.fixture import FakeNvml

from gputop.core.analysis.owners import owner_rollup
from gputop.core.host.podresources import PodResources, list_allocations, parse_list_response, with_allocations
from gputop.core.model import Allocation
from gputop.core.output.snapshot_json import snapshot_to_dict
from gputop.core.sampler import Sampler

grpc = pytest.importorskip("grpc", reason="the PodResources client needs the optional grpcio (gputop[kubernetes])")

GPU0 = "GPU-00000000-0000-4000-8000-fa4e00000000"  # the fake driver's uuid of GPU 0
MIG = "MIG-5b2a1c3d-0000-4000-8000-000000000001"


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, value: bytes | str) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def devices(resource: str, *ids: str) -> bytes:
    return field(1, resource) + b"".join(field(2, device) for device in ids)


def container(name: str, *device_lists: bytes, cpu_ids: tuple[int, ...] = ()) -> bytes:
    packed = b"".join(varint(cpu) for cpu in cpu_ids)
    return field(1, name) + b"".join(field(2, d) for d in device_lists) + (field(3, packed) if packed else b"")


def pod(name: str, namespace: str, *containers: bytes) -> bytes:
    return field(1, name) + field(2, namespace) + b"".join(field(3, c) for c in containers)


# A ListPodResourcesResponse as the kubelet sends it (k8s.io/kubelet podresources v1 api.proto): a training
# pod with a GPU and a MIG device, a pod with CPUs and a NIC only, a pod with no devices.
RESPONSE = (
    field(1, pod("trainer-0", "ml", container("pytorch", devices("nvidia.com/gpu", GPU0), cpu_ids=(2, 3)),
                 container("sidecar", devices("nvidia.com/mig-1g.10gb", MIG))))
    + field(1, pod("router", "net", container("envoy", devices("example.com/sriov-nic", "0000:3b:00.1"))))
    + field(1, pod("idle", "default"))
)
TRAINER = Allocation(namespace="ml", pod="trainer-0", container="pytorch", resource="nvidia.com/gpu")
SIDECAR = Allocation(namespace="ml", pod="trainer-0", container="sidecar", resource="nvidia.com/mig-1g.10gb")


@pytest.fixture
def kubelet(tmp_path: Path) -> Iterator[tuple[str, list[bytes]]]:
    """A fake kubelet answering List on a unix socket; the test may change its answer."""
    path = str(tmp_path / "kubelet.sock")
    answer = [RESPONSE]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = grpc.unary_unary_rpc_method_handler(lambda request, context: answer[0])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("v1.PodResourcesLister", {"List": handler}),))
    server.add_insecure_port(f"unix:{path}")
    server.start()
    yield path, answer
    server.stop(None)


def test_the_answer_is_decoded_into_each_gpu_devices_pod_and_container() -> None:
    assert parse_list_response(RESPONSE) == {GPU0: TRAINER, MIG: SIDECAR}


def test_the_fake_kubelet_answers_the_real_client(kubelet: tuple[str, list[bytes]]) -> None:
    path, answer = kubelet
    assert list_allocations(path) == {GPU0: TRAINER, MIG: SIDECAR}
    answer[0] = b"\x0f\x01"  # not a protobuf message: the kubelet cannot say
    assert list_allocations(path) is None


def test_no_socket_no_question_and_the_gpus_unchanged(tmp_path: Path) -> None:
    resources = PodResources(str(tmp_path / "absent.sock"))
    assert resources.allocations() == {}
    gpus = ()
    assert with_allocations(gpus, resources.allocations()) is gpus


def test_an_invisible_process_on_an_allocated_gpu_is_counted_to_its_pod(
    kubelet: tuple[str, list[bytes]], fake_nvml: FakeNvml
) -> None:
    """gputop in a pod without hostPID: NVML lists a PID it cannot see, the kubelet says whose GPU it is."""
    from gputop.core.sources.nvml import NvmlSource

    path, answer = kubelet
    fake_nvml.write(Scenario().gpu(memory_total=80 * GiB, memory_used=30 * GiB, power_mw=300_000)
                    .gpu(memory_total=80 * GiB, mig_mode=1).mig(gpu=1, slot=0, uuid=MIG, memory_total=10 * GiB)
                    .process(gpu=0, pid=NO_SUCH_PID, used=24 * GiB)
                    .process(gpu=1, pid=NO_SUCH_PID + 1, used=2 * GiB, mig=0))
    fake_nvml.load()
    clock = iter(range(0, 1000, 5))
    sampler = Sampler(NvmlSource(), pod_resources=PodResources(path, refresh_s=10, clock=lambda: next(clock)))
    sampler.open()
    try:
        snapshot = sampler.sample()
        first, second = snapshot.gpus
        assert (first.allocation, second.allocation, second.mig_devices[0].allocation) == (TRAINER, None, SIDECAR)
        assert first.processes[0].visible is False
        [owner] = owner_rollup(snapshot, "pod")
        assert (owner.name, owner.gpus, owner.gpu_memory, owner.processes) == (
            "ml/trainer-0", (0, 1), 26 * GiB, 2,
        )
        assert snapshot_to_dict(snapshot)["gpus"][0]["allocation"] == {
            "namespace": "ml", "pod": "trainer-0", "container": "pytorch", "resource": "nvidia.com/gpu",
        }
        answer[0] = b""  # the pod has gone: not asked again within refresh_s, then nothing allocated
        assert sampler.sample().gpus[0].allocation == TRAINER
        assert sampler.sample().gpus[0].allocation is None
    finally:
        sampler.close()


def test_the_card_names_the_pod_of_an_allocated_gpu_before_any_process_of_it_runs_and_nothing_without_the_api(
    kubelet: tuple[str, list[bytes]], fake_nvml: FakeNvml, tmp_path: Path
) -> None:
    from gputop.core.sources.nvml import NvmlSource
    from gputop.ui.widgets.card_lines import CardContent, card_titles

    path, _ = kubelet
    fake_nvml.write(Scenario().gpu(memory_total=80 * GiB, memory_used=1 * GiB).gpu(memory_total=80 * GiB))
    fake_nvml.load()
    subtitles = []
    for socket in (path, str(tmp_path / "absent.sock")):
        sampler = Sampler(NvmlSource(), pod_resources=PodResources(socket))
        sampler.open()
        try:
            gpus = sampler.sample().gpus
        finally:
            sampler.close()
        assert gpus[0].processes == ()
        subtitles.append([str(card_titles(CardContent(gpu=gpu), filtered=False)[1]) for gpu in gpus])
    allocated, unknown = subtitles
    assert allocated[0].startswith(" pod ml/trainer-0 · ") and "pod" not in allocated[1]
    assert not any("pod" in subtitle for subtitle in unknown)
