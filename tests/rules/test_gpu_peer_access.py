"""GPU peer-to-peer that the GPUs do not support (CUDA's cudaErrorPeerAccessUnsupported) and that an
active IOMMU breaks (the users' words, answered at info), on real public pastes
(tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



def test_peer_access_unsupported_quoted_by_its_user():
    (f,) = fired("gpu-peer-access-unsupported", recorded_paste_facts("nanoflow-22-rtx-3090-no-peer-access.txt"))
    assert "peer access is not supported between the two GPUs the program paired (line 1" in f.message
    assert f.severity == "error" and f.fix.startswith("nvidia-smi topo -p2p r")
    assert not fired("pcie-acs-blocks-p2p", recorded_paste_facts("nanoflow-22-rtx-3090-no-peer-access.txt"))


def test_peer_access_unsupported_as_torch_raises_it_is_one_reading():
    # torch's C10_CUDA_CHECK prefix with cudaGetErrorString's text (cuda.toml's torch-cuda-error form)
    said = find_messages("RuntimeError: CUDA error: peer access is not supported between these two devices\n")
    assert [s["id"] for s in said] == ["cuda:cudaErrorPeerAccessUnsupported"]
    assert fired("gpu-peer-access-unsupported", told_facts("RuntimeError: CUDA error: peer access is not supported between these two devices\n"))


def test_a_healthy_run_with_peer_access_warnings_fires_neither():
    # NVIDIA/nccl#258: cuda-gdb reporting 0x2c0 (cudaErrorPeerAccessAlreadyEnabled); the run was fine
    g = recorded_paste_facts("nccl-258-cuda-gdb-p2p-warnings-healthy.txt")
    assert not fired("gpu-peer-access-unsupported", g) and not fired("pcie-acs-blocks-p2p", g)


@pytest.mark.parametrize("paste, said", [
    ("dasharo-issues-436-p2p-copy-zeroed-iommu.txt", "corruption between PCI cards that resolves only when the kernel is booted with `iommu=soft"),
    ("fideslib-28-p2p-writes-dropped-amd-iommu.txt", "P2P does not work through an active IOMMU"),
])
def test_copies_broken_by_the_iommu_in_the_users_words_are_a_hint(paste, said):
    (f,) = fired("pcie-acs-blocks-p2p", recorded_paste_facts(paste))
    assert f.severity == "info" and said in f.message and "IOMMU-enabled PCIe peer-to-peer memory copy is not supported" in f.message
    assert f.fix.startswith("ls /sys/class/iommu") and "iommu=pt" in f.fix
    assert not fired("gpu-peer-access-unsupported", recorded_paste_facts(paste))
