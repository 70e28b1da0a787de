"""What /proc would say about a process of the demo machine: the process screen has something to show."""

from __future__ import annotations

from typing import NamedTuple

from gputop.core.host.procdetail import ProcessDetail, Readable, Relative

_SYSTEMD = Relative(1, "systemd", "/sbin/init splash", "root")
_SHIM = Relative(
    2011,
    "containerd-shim",
    "/usr/bin/containerd-shim-runc-v2 -namespace k8s.io -address /run/containerd/containerd.sock",
    "root",
)


class SimulatedProcess(NamedTuple):
    """The facts of a simulated process the detail is made from."""

    pid: int
    user: str
    command: str
    container: str | None
    gpu: int
    device: str  # CUDA_VISIBLE_DEVICES: the GPU's index, or its MIG device's UUID
    type: str
    parent_pid: int | None
    parent_command: str | None
    rank: int | None


def simulated_detail(process: SimulatedProcess) -> ProcessDetail:
    """A plausible whole process: parents up to PID 1, its environment, its device files."""
    user = process.user
    home = "/root" if user == "root" else f"/home/{user}"
    if process.container is not None:
        ancestors = [_SHIM, _SYSTEMD]
    else:
        shell = Relative(3100 + process.pid % 97, "bash", "-bash", user)
        ancestors = [shell, Relative(1022, "sshd", f"sshd: {user}@pts/0", "root"), _SYSTEMD]
    if process.parent_pid is not None:
        ancestors.insert(0, Relative(process.parent_pid, "torchrun", process.parent_command, user))
    # A login's variables too, and one secret, so that `e` (the whole environment, secrets masked) has them.
    environment = [
        f"CUDA_VISIBLE_DEVICES={process.device}",
        f"HOME={home}",
        "LANG=C.UTF-8",
        "PATH=/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin",
        f"USER={user}",
        "HF_TOKEN=hf_demoDemoDemoDemoDemo",
    ]
    if process.type != "G":
        environment.append("CUDA_DEVICE_ORDER=PCI_BUS_ID")
    if process.rank is not None:
        environment += [
            f"LOCAL_RANK={process.rank}",
            "MASTER_ADDR=127.0.0.1",
            "MASTER_PORT=29500",
            "NCCL_DEBUG=WARN",
            "NCCL_IB_DISABLE=1",
            f"RANK={process.rank}",
            "WORLD_SIZE=2",
        ]
    devices = [f"/dev/nvidia{process.gpu}", "/dev/nvidiactl"]
    devices.append("/dev/nvidia-modeset" if "G" in process.type else "/dev/nvidia-uvm")
    return ProcessDetail(
        process.pid,
        arguments=tuple(process.command.split()),
        user=user,
        cwd=Readable((home if process.container is None else "/workspace",)),
        ancestors=tuple(ancestors),
        environment=Readable(tuple(sorted(environment))),
        devices=Readable(tuple(sorted(devices))),
    )
