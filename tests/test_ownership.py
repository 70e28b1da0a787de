"""Who owns a process, from its cgroup: a corpus of real /proc/PID/cgroup and mountinfo lines.

Every case names where its line comes from: the test data or documentation of the project that
makes that layout (or of a monitoring agent that recorded it from one). Ids are theirs, unchanged.
"""

from __future__ import annotations

import pytest

from gputop.core.host.ownership import Attribution, attribution_from_cgroup, attribution_from_mountinfo
from gputop.core.host.procfs import container_from_cgroup

D = "docker"
CD = "containerd"


def owner(
    runtime: str | None = None, ident: str | None = None, pod: str | None = None, **job: str | int | None
) -> Attribution:
    return Attribution(container_runtime=runtime, container_id=ident, pod_uid=pod, **job)  # type: ignore[arg-type]


# (source, /proc/PID/cgroup text, the owners it names; None for none)
CORPUS: list[tuple[str, str, Attribution | None]] = [
    # --- Docker (moby), every driver and parent ------------------------------------------------
    (
        "elastic/apm-agent-go internal/apmhostutil/container_linux_test.go: Docker, cgroupfs driver, hybrid host"
        " (the unified line is the daemon's)",
        "12:devices:/docker/051e2ee0bce99116029a13df4a9e943137f19f957f38ac02d6bad96f9b700f76\n"
        "5:rdma:/\n"
        "1:name=systemd:/docker/051e2ee0bce99116029a13df4a9e943137f19f957f38ac02d6bad96f9b700f76\n"
        "0::/system.slice/docker.service\n",
        owner(D, "051e2ee0bce99116029a13df4a9e943137f19f957f38ac02d6bad96f9b700f76"),
    ),
    (
        "elastic/apm-agent-go container_linux_test.go: Docker, systemd driver",
        "1:name=systemd:/system.slice/docker-cde7c2bab394630a42d73dc610b9c57415dced996106665d427f6d0566594411.scope\n",
        owner(D, "cde7c2bab394630a42d73dc610b9c57415dced996106665d427f6d0566594411"),
    ),
    (
        "neuvector/neuvector share/system/cgroup_test.go TestDockerIDDebian: Docker with the root cgroup parent,"
        " no prefix",
        "10:net_prio:/4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970\n"
        "4:memory:/4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970\n",
        owner(D, "4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970"),
    ),
    (
        "neuvector/neuvector cgroup_test.go TestDockerIDCentOS: Docker, systemd driver, cgroup v1",
        "2:cpuacct,cpu:/system.slice/docker-9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d.scope\n",
        owner(D, "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"),
    ),
    (
        "DataDog/dd-trace-go internal/container_linux_test.go: /docker/<id>.scope",
        "1:name=systemd:/docker/34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376.scope\n",
        owner(D, "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376"),
    ),
    (
        "DataDog/dd-trace-go container_linux_test.go: the id in one hierarchy, nonsense in the others",
        "1:name=systemd:/nope\n2:pids:/docker/34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376\n"
        "3:cpu:/invalid\n",
        owner(D, "34dc0b5e626f2c5c4c5170e34b10e7654ce36f0fcd532739f4445baabea03376"),
    ),
    (
        "moby docker-in-docker layout, cgroupfs driver in both daemons (ids from the cases above): the inner container",
        "0::/docker/4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970"
        "/docker/051e2ee0bce99116029a13df4a9e943137f19f957f38ac02d6bad96f9b700f76\n",
        owner(D, "051e2ee0bce99116029a13df4a9e943137f19f957f38ac02d6bad96f9b700f76"),
    ),
    # --- Kubernetes (kubelet): containerd, CRI-O, Docker; QoS classes; both drivers ---------------
    (
        "elastic/apm-agent-go container_linux_test.go: kubelet cgroupfs driver, besteffort, a UUID container id",
        "1:name=systemd:/kubepods/besteffort/pode9b90526-f47d-11e8-b2a5-080027b9f4fb/15aa6e53-b09a-40c7-8558-c6c31e36c88a\n",
        owner(None, "15aa6e53-b09a-40c7-8558-c6c31e36c88a", "e9b90526-f47d-11e8-b2a5-080027b9f4fb"),
    ),
    (
        "elastic/apm-agent-go container_linux_test.go: kubelet systemd driver, burstable, CRI-O",
        "1:name=systemd:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod90d81341_92de_11e7_8cf2_507b9d4141fa"
        ".slice/crio-2227daf62df6694645fee5df53c1f91271546a9560e8600a525690ae252b7f63.scope\n",
        owner("crio", "2227daf62df6694645fee5df53c1f91271546a9560e8600a525690ae252b7f63",
              "90d81341-92de-11e7-8cf2-507b9d4141fa"),
    ),
    (
        "DataDog/dd-trace-go container_linux_test.go: kubelet cgroupfs driver, burstable",
        "10:hugetlb:/kubepods/burstable/podfd52ef25-a87d-11e9-9423-0800271a638e"
        "/8c046cb0b72cd4c99f51b5591cd5b095967f58ee003710a45280c28ee1a9c7fa\n",
        owner(None, "8c046cb0b72cd4c99f51b5591cd5b095967f58ee003710a45280c28ee1a9c7fa",
              "fd52ef25-a87d-11e9-9423-0800271a638e"),
    ),
    (
        "DataDog/datadog-agent pkg/util/cgroups reader test: kubelet cgroupfs driver, guaranteed (no QoS level)",
        "4:memory:/kubepods/pod821ad831-6a9a-4970-b623-8cb43cd3462d"
        "/f246d96ff6bd76f65c4a687ce17812a8189b735fd6ed643165db2c61e19bc31e\n",
        owner(None, "f246d96ff6bd76f65c4a687ce17812a8189b735fd6ed643165db2c61e19bc31e",
              "821ad831-6a9a-4970-b623-8cb43cd3462d"),
    ),
    (
        "gputop's own corpus (containerd docs, systemd driver): kubelet, burstable, containerd CRI",
        "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod3f2a9c1e_7b4d_4c55_9e1a_0d6b2f8a7c31.slice"
        "/cri-containerd-4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a4f1c2b3a.scope\n",
        owner(CD, "4f1c2b3a" * 8, "3f2a9c1e-7b4d-4c55-9e1a-0d6b2f8a7c31"),
    ),
    (
        "CJLove/rt-operator notes/cgroupv1_notes.md (Kubernetes 1.23 with Docker): guaranteed pod, systemd driver;"
        " ids illustrative",
        "3:cpu,cpuacct:/kubepods.slice/kubepods-pod9508fe66_7675_4003_b7c9_d83e9f8f85e5.slice"
        "/docker-26cfbe35e08b24f053011af4ada23d8fcbf81f27f8331a94f56de5b677c903e4.scope\n",
        owner(D, "26cfbe35e08b24f053011af4ada23d8fcbf81f27f8331a94f56de5b677c903e4",
              "9508fe66-7675-4003-b7c9-d83e9f8f85e5"),
    ),
    (
        "cri-o/cri-o internal/oci names conmon's cgroup <parent>/crio-conmon-<id> (ids from the CRI-O case above):"
        " conmon is in the pod, not the container",
        "0::/kubepods/burstable/pod90d81341-92de-11e7-8cf2-507b9d4141fa"
        "/crio-conmon-2227daf62df6694645fee5df53c1f91271546a9560e8600a525690ae252b7f63\n",
        owner(pod="90d81341-92de-11e7-8cf2-507b9d4141fa"),
    ),
    (
        "k3s v1.23.5+k3s1 (open-telemetry resource detector for Kubernetes, test data)",
        "12:blkio:/kubepods/besteffort/pod345781c1-c512-4bc4-9667-f0cf07848486"
        "/ca0ff160f5136a5929d56cdbed62fac14073edda70452c3001a31fa7917ff15d\n",
        owner(None, "ca0ff160f5136a5929d56cdbed62fac14073edda70452c3001a31fa7917ff15d",
              "345781c1-c512-4bc4-9667-f0cf07848486"),
    ),
    (
        "DataDog/datadog-agent cgroups reader test: a static pod (32-hex uid) on Docker, nested in Podman",
        "0::/libpod_parent/libpod-6dc3fdffbf66b1239d55e98da9aaa759ea51ed35d04eb09d19ebd78963aa26c2/kubepods.slice"
        "/kubepods-burstable.slice/kubepods-burstable-poda2acd1bccd50fd7790183537181f658e.slice"
        "/docker-1575e8b4a92a9c340a657f3df4ddc0f6a6305c200879f3898b26368ad019b503.scope\n",
        owner(D, "1575e8b4a92a9c340a657f3df4ddc0f6a6305c200879f3898b26368ad019b503",
              "a2acd1bccd50fd7790183537181f658e"),
    ),
    (
        "kind: a pod's path as a kind node's kubelet names it (cgroupRoot /kubelet, from a pod-info parser's comment)"
        " under the node container's docker-<id>.scope (its id from above): the pod's container, not the node",
        "0::/system.slice/docker-4f797c539e6c745de61a93ca3ff892358ecbcaccd8414d5db545c38428142970.scope/kubelet.slice"
        "/kubelet-kubepods.slice/kubelet-kubepods-pod20da609e_6973_4463_a1f9_2db9bcc5becc.slice"
        "/cri-containerd-10ec3c89629f71226b227e6510b2d465168b24005bbdcc5d7940517080830635.scope\n",
        owner(CD, "10ec3c89629f71226b227e6510b2d465168b24005bbdcc5d7940517080830635",
              "20da609e-6973-4463-a1f9-2db9bcc5becc"),
    ),
    (
        "kind on rootful Podman (its node is libpod-<id>.scope/container), besteffort pod: a line an eBPF agent's"
        " container-id tests (Rust) record",
        "0::/machine.slice/libpod-cbdfa0f1f08763b1963c30d98e11e1f052cb67f1e9b7c0ab8a6ca6c70cbcad69.scope/container"
        "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice"
        "/kubelet-kubepods-besteffort-pod6eab3b7b_f0a6_4bb8_bff2_d5bc9017c04b.slice"
        "/cri-containerd-5ebf11e02dbde102cda4b76bc0e3849a65f9edac7a12bdabfd34db01b9556101.scope\n",
        owner(CD, "5ebf11e02dbde102cda4b76bc0e3849a65f9edac7a12bdabfd34db01b9556101",
              "6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b"),
    ),
    (
        "DataDog/dd-trace-go container_linux_test.go: the kubepods slice alone names no pod",
        "10:hugetlb:/kubepods\n",
        None,
    ),
    # --- Podman (libpod) -----------------------------------------------------------------------
    (
        "containers/podman `podman inspect` CgroupPath, rootful (crun's container sub-cgroup)",
        "0::/machine.slice/libpod-55ea3863351726184e26ca7418f577d04c96dac0009e1f088f6c0c7a1dc2ed7c.scope/container\n",
        owner("podman", "55ea3863351726184e26ca7418f577d04c96dac0009e1f088f6c0c7a1dc2ed7c"),
    ),
    (
        "Podman rootless, under the user's systemd (user@1000.service/user.slice): 'the standard cgroup pattern"
        " observed with podman on Gentoo, openSUSE' in a Rust container-id test",
        "0::/user.slice/user-1000.slice/user@1000.service/user.slice"
        "/libpod-3f084b4c7b789c1a0f174da3fcd339e31125d3096b3ff46a0bef4fad71d09362.scope/container\n",
        owner("podman", "3f084b4c7b789c1a0f174da3fcd339e31125d3096b3ff46a0bef4fad71d09362"),
    ),
    (
        "Podman's pod slice (machine-libpod_pod_<pod id>.slice; ids illustrative): in no Kubernetes pod",
        "0::/machine.slice/machine-libpod_pod_6c2f5a4e1b3d4c5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e.slice"
        "/libpod-55ea3863351726184e26ca7418f577d04c96dac0009e1f088f6c0c7a1dc2ed7c.scope/container\n",
        owner("podman", "55ea3863351726184e26ca7418f577d04c96dac0009e1f088f6c0c7a1dc2ed7c"),
    ),
    (
        "Podman's conmon (libpod-conmon-<id>.scope, as a process-classifier test lists it) runs on the host:"
        " no container",
        "0::/machine.slice/libpod-conmon-55ea3863351726184e26ca7418f577d04c96dac0009e1f088f6c0c7a1dc2ed7c.scope\n",
        None,
    ),
    # --- ECS, Fargate, Cloud Foundry -------------------------------------------------------------
    (
        "elastic/apm-agent-go container_linux_test.go: ECS on EC2",
        "3:cpuacct:/ecs/eb9d3d0c-8936-42d7-80d8-f82b2f1a629e/7e9139716d9e5d762d22f9f877b87d1be8b1449ac912c025a984750c5dbff157\n",
        owner("ecs", "7e9139716d9e5d762d22f9f877b87d1be8b1449ac912c025a984750c5dbff157"),
    ),
    (
        "DataDog/dd-trace-go container_linux_test.go: ECS, a 32-hex task",
        "11:hugetlb:/ecs/55091c13-b8cf-4801-b527-f4601742204d/432624d2150b349fe35ba397284dea788c2bf66b885d14dfc1569b01890ca7da\n",
        owner("ecs", "432624d2150b349fe35ba397284dea788c2bf66b885d14dfc1569b01890ca7da"),
    ),
    (
        "DataDog/datadogpy tests/unit/dogstatsd/test_container.py: ECS on EC2, cgroup v1, the cluster's name"
        " above the task",
        "9:perf_event:/ecs/test-ecs-classic/5a0d5ceddf6c44c1928d367a815d890f"
        "/38fac3e99302b3622be089dd41e7ccf38aff368a86cc339972075136ee2710ce\n"
        "1:blkio:/ecs/test-ecs-classic/5a0d5ceddf6c44c1928d367a815d890f"
        "/38fac3e99302b3622be089dd41e7ccf38aff368a86cc339972075136ee2710ce\n",
        owner("ecs", "38fac3e99302b3622be089dd41e7ccf38aff368a86cc339972075136ee2710ce"),
    ),
    (
        "DataDog/datadogpy test_container.py: Fargate platform 1.4.0 (the task above a <32 hex>-<n> container)",
        "11:hugetlb:/ecs/55091c13-b8cf-4801-b527-f4601742204d/34dc0b5e626f2c5c4c5170e34b10e765-1234567890\n",
        owner("ecs", "34dc0b5e626f2c5c4c5170e34b10e765-1234567890"),
    ),
    (
        "DataDog/dd-trace-go container_linux_test.go: Fargate",
        "1:name=systemd:/ecs/34dc0b5e626f2c5c4c5170e34b10e765-1234567890\n",
        owner("ecs", "34dc0b5e626f2c5c4c5170e34b10e765-1234567890"),
    ),
    (
        "elastic/apm-agent-go container_linux_test.go: Cloud Foundry garden",
        "1:name=systemd:/system.slice/garden.service/garden/70eb4ce5-a065-4401-6990-88ed\n",
        owner("garden", "70eb4ce5-a065-4401-6990-88ed"),
    ),
    (
        "DataDog/dd-trace-go container_linux_test.go: Cloud Foundry garden, v1 hierarchies both ways",
        "12:memory:/system.slice/garden.service/garden/6f265890-5165-7fab-6b52-18d1\n11:rdma:/\n"
        "10:freezer:/garden/6f265890-5165-7fab-6b52-18d1\n",
        owner("garden", "6f265890-5165-7fab-6b52-18d1"),
    ),
    # --- Slurm (slurmd's cgroup plugins, and the exporters that read them) ------------------------
    (
        "NordicHPC/sonar test_get_job_id (a Fox compute node, 2025): cgroup v2",
        "0::/system.slice/slurmstepd.scope/job_1392969/step_0/user/task_0\n",
        owner(job_id="1392969", job_step="0"),
    ),
    (
        "NordicHPC/sonar test_get_job_id (older data): cgroup v1, an interactive step",
        "10:devices:/slurm/uid_2101171/job_280678/step_interactive/task_0\n",
        owner(job_id="280678", job_step="interactive", job_uid=2101171),
    ),
    (
        "treydock/cgroup_exporter TestCollectv2SLURM: a job step",
        "0::/system.slice/slurmstepd.scope/job_4/step_0/user/task_0\n",
        owner(job_id="4", job_step="0"),
    ),
    (
        "treydock/cgroup_exporter TestCollectv2SLURM: slurmstepd's own cgroup is no job",
        "0::/system.slice/slurmstepd.scope/system\n",
        None,
    ),
    (
        "cedana's Slurm restore path, <node>_slurmstepd.scope/job_%d/step_batch/user/task_special (node, job"
        " illustrative)",
        "0::/system.slice/gpu07_slurmstepd.scope/job_77/step_batch/user/task_special\n",
        owner(job_id="77", job_step="batch"),
    ),
    (
        "a pam_slurm_adopt status check's test data (an ssh session adopted into the job): the extern step",
        "0::/system.slice/slurmstepd.scope/job_42/step_extern/user\n",
        owner(job_id="42", job_step="extern"),
    ),
    (
        "Slurm's cgroup v1 layout (cgroup.conf docs: /slurm/uid_N/job_N/step_S; ids illustrative), a v2 line"
        " at the root",
        "4:memory:/slurm/uid_1000/job_1234/step_batch/task_0\n0::/\n",
        owner(job_id="1234", job_step="batch", job_uid=1000),
    ),
    (
        "Linux Documentation/admin-guide/cgroup-v2.rst (cgroup namespaces: a cgroup outside the reader's root is"
        " shown through ..): a neighbour pod seen from gputop's own container (ids from the kind case)",
        "0::/../../kubelet-kubepods-besteffort-pod6eab3b7b_f0a6_4bb8_bff2_d5bc9017c04b.slice"
        "/cri-containerd-5ebf11e02dbde102cda4b76bc0e3849a65f9edac7a12bdabfd34db01b9556101.scope\n",
        owner(CD, "5ebf11e02dbde102cda4b76bc0e3849a65f9edac7a12bdabfd34db01b9556101",
              "6eab3b7b-f0a6-4bb8-bff2-d5bc9017c04b"),
    ),
    (
        "a Go cgroups package's parseCGroupSubsysFromLine test (multi-subsys): containerd 1.5+ under the"
        " systemd cgroup driver, the colon form below containerd.service",
        "12:cpu,cpuacct:/system.slice/containerd.service/kubepods-besteffort-podb41662f7_b03a_4c65_8ef9_6e4e55c3cf27"
        ".slice:cri-containerd:1753b7cbbf62734d812936961224d5bc0cf8f45214e0d5cdd1a781a053e7c48f\n",
        owner(CD, "1753b7cbbf62734d812936961224d5bc0cf8f45214e0d5cdd1a781a053e7c48f",
              "b41662f7-b03a-4c65-8ef9-6e4e55c3cf27"),
    ),
    (
        "spiffe/spire pkg/agent/plugin/workloadattestor/k8s (the paths its attestor reads): containerd 1.4,"
        " systemd driver, the colon form at the root",
        "0::/kubepods-besteffort-pod72f7f152_440c_66ac_9084_e0fc1d8a910c.slice:cri-containerd"
        ":b2a102854b4969b2ce98dc329c86b4fb2b06e4ad2cc8da9d8a7578c9cd2004a2\n",
        owner(CD, "b2a102854b4969b2ce98dc329c86b4fb2b06e4ad2cc8da9d8a7578c9cd2004a2",
              "72f7f152-440c-66ac-9084-e0fc1d8a910c"),
    ),
    # --- hosts and daemons: no one ---------------------------------------------------------------
    (
        "elastic/apm-agent-go container_linux_test.go: a login session (v1 and v2)",
        "12:devices:/user.slice\n6:pids:/user.slice/user-1000.slice/session-2.scope\n"
        "1:name=systemd:/user.slice/user-1000.slice/session-2.scope\n0::/user.slice/user-1000.slice/session-2.scope\n",
        None,
    ),
    ("systemd: PID 1", "0::/init.scope\n", None),
    ("systemd: a service", "0::/system.slice/sshd.service\n", None),
    ("moby: dockerd itself", "0::/system.slice/docker.service\n", None),
    ("containerd: the daemon itself", "0::/system.slice/containerd.service\n", None),
    (
        "this test machine's own sandbox: a 32-hex cgroup of another tool",
        "4:memory:/process_api/97bff9aebcc5d392c6024445544f4540\n3:cpuset:/\n0::/\n",
        None,
    ),
    ("an empty file (a kernel thread's, or unreadable)", "", None),
]


@pytest.mark.parametrize(("source", "cgroup", "expected"), CORPUS, ids=[case[0][:60] for case in CORPUS])
def test_each_runtime_and_layout_names_its_owner(source: str, cgroup: str, expected: Attribution | None) -> None:
    assert attribution_from_cgroup(cgroup) == expected, source


def test_the_panel_label_is_the_pod_else_the_runtime_and_twelve_digits() -> None:
    pod = "0::/kubepods/besteffort/pod20da609e-6973-4463-a1f9-2db9bcc5becc/" + "10" * 32 + "\n"
    assert container_from_cgroup(pod) == "k8s:20da609e-6973-4463-a1f9-2db9bcc5becc"
    podman = "0::/machine.slice/libpod-" + "ab" * 32 + ".scope/container\n"
    assert container_from_cgroup(podman) == "podman:abababababab"
    assert container_from_cgroup("3:cpuacct:/ecs/t/" + "7e" * 32 + "\n") == "ecs:7e7e7e7e7e7e"
    assert container_from_cgroup("0::/system.slice/sshd.service\n") is None


MOUNTINFO: list[tuple[str, str, Attribution | None]] = [
    (
        "open-telemetry ContainerResourceDetector tests: cgroup v2 with Docker (the line's first fields illustrative)",
        "473 456 254:1 /docker/containers/0eaa6718003210b6520f7e82d14b4c8d4743057a958a503626240f8d1900bc33/hostname"
        " /etc/hostname rw,relatime - ext4 /dev/vda1 rw\n",
        owner(D, "0eaa6718003210b6520f7e82d14b4c8d4743057a958a503626240f8d1900bc33"),
    ),
    (
        "open-telemetry ContainerResourceDetector tests: cgroup v2 with Podman",
        "1096 1088 0:104 /containers/overlay-containers/"
        "1a2de27e7157106568f7e081e42a8c14858c02bd9df30d6e352b298178b46809/userdata/hostname /etc/hostname"
        " rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=813800k,nr_inodes=203450,"
        "mode=700,uid=1000,gid=1000\n",
        owner("podman", "1a2de27e7157106568f7e081e42a8c14858c02bd9df30d6e352b298178b46809"),
    ),
    (
        "open-telemetry container id tests (CRI-O overlay-containers), with the kubelet's etc-hosts bind (that line"
        " illustrative): CRI-O in a pod",
        "10312 10303 0:25 /containers/storage/overlay-containers/"
        "2ac4c84cb0d3c3beb04beeef6ccf71c17b5fdd0252ce3a2b66bc2fdd0aaa1814/userdata/hostname /etc/hostname"
        " rw,nosuid,nodev - tmpfs tmpfs rw\n"
        "10313 10303 253:0 /var/lib/kubelet/pods/90d81341-92de-11e7-8cf2-507b9d4141fa/etc-hosts /etc/hosts rw - xfs"
        " /dev/vda1 rw\n",
        owner("crio", "2ac4c84cb0d3c3beb04beeef6ccf71c17b5fdd0252ce3a2b66bc2fdd0aaa1814",
              "90d81341-92de-11e7-8cf2-507b9d4141fa"),
    ),
    (
        "open-telemetry container detection tests: a host's Docker overlay layers name no one",
        "1 2 0:1 / /var/lib/docker/overlay2/abc/merged rw - overlay overlay lowerdir=/var/lib/docker/overlay2/xyz\n",
        None,
    ),
]


@pytest.mark.parametrize(("source", "mountinfo", "expected"), MOUNTINFO, ids=[case[0][:60] for case in MOUNTINFO])
def test_a_private_cgroup_namespace_is_read_from_mountinfo(
    source: str, mountinfo: str, expected: Attribution | None
) -> None:
    assert attribution_from_mountinfo(mountinfo) == expected, source
