"""Peer-to-peer between GPUs: on a PCIe switch, sent up to the CPU by the switch's Access Control Services
or dropped by an IOMMU in translating mode; and between GPUs that do not support it at all."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, nccl_p2p_failures, told_evidence, told_text

# What puts GPUs where ACS redirection applies (knowledge/messages/pcie.toml): a pair behind a PCIe
# switch in nvidia-smi topo -m, or a bridge's ACS control with redirection on.
_ON_A_SWITCH = ("pcie:topo-pair-pix", "pcie:topo-pair-pxb", "pcie:acs-redirect-on")
_P2P_OFF_HELPS = "prose:nccl-p2p-disable-helps"


def _acs_evidence(said: dict):
    """(NCCL working only with P2P off, GPUs on one PCIe switch or ACS on it) as pasted, each or None."""
    return said.get(_P2P_OFF_HELPS), next((said[k] for k in _ON_A_SWITCH if k in said), None)


def acs_names_the_cause(f: FactView) -> bool:
    """Whether pcie-acs-blocks-p2p answers at error: P2P off helps, between GPUs on a switch."""
    helps, where = _acs_evidence({s.get("id"): s for s in catalogued(f, "pcie-acs-blocks-p2p")})
    return helps is not None and where is not None
_IOMMU_SAID = "prose:p2p-broken-by-iommu"
_IOMMU_FIX = ("ls /sys/class/iommu   # dmar* (Intel VT-d) or ivhd* (AMD-Vi): an IOMMU is active\n"
              "cat /proc/cmdline   # iommu=pt (passthrough) or none; intel_iommu=on / amd_iommu=on: translating\n"
              "nvidia-smi topo -m   # the GPUs' paths: PIX/PXB/PHB/NODE/SYS are PCIe, NV# are NVLink\n"
              "# administrators: boot with iommu=pt (passthrough; add it to GRUB_CMDLINE_LINUX, then update-grub or "
              "grub2-mkconfig and reboot), or turn IO virtualization (VT-d/AMD-Vi) off in the BIOS")

_FIX = ("sudo lspci -vvv | grep ACSCtl   # SrcValid+ or ReqRedir+ on the PCIe switches' ports: ACS sends GPU-to-GPU "
        "traffic up to the CPU\n"
        "cat /proc/cmdline   # intel_iommu=on or amd_iommu=on: IO virtualization (VT-d/IOMMU) is on\n"
        "# administrators: disable IO virtualization (VT-d/IOMMU) or ACS in the BIOS; on Broadcom PLX switches, after "
        "each boot:\n"
        "sudo lspci | grep PLX   # the switches' bridges; then, for each: sudo setpci -s BUS:DEV.FN ECAP_ACS+0x6.w=0000")


@rule("GPU020", "pcie-acs-blocks-p2p", "error", "GPU peer-to-peer over a PCIe switch is redirected by ACS/IOMMU",
      impact=7, also={"info": "read from the user's words: copies between GPUs zeroed or dropped, fixed with the IOMMU "
                               "off or in passthrough (NVIDIA: IOMMU-enabled bare-metal P2P is not supported)"})
def pcie_acs_blocks_p2p(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, NCCL hanging or crawling between GPUs behind a PCIe switch and working
        only with peer-to-peer disabled: the user's "NCCL_P2P_DISABLE=1 works" beside an
        nvidia-smi topo -m whose GPU rows show PIX or PXB links, or lspci's ACSCtl with source
        validation and request redirection on.

    Why it matters:
        With PCI Access Control Services on a switch (typically turned on with IO virtualization,
        VT-d or the IOMMU), peer-to-peer requests between GPUs are redirected to the CPU's root
        complex: NCCL's guide says this causes a significant performance reduction or even a hang.
        NCCL_P2P_DISABLE=1 avoids the hang by copying through host memory, at a much lower speed.

    How to fix:
        Check the switches' ACS control with lspci and the kernel's IOMMU settings; disable IO
        virtualization or ACS in the BIOS, or clear the ACS control register of each PLX bridge
        with setpci after every boot, as NCCL's troubleshooting guide describes. Then run
        without NCCL_P2P_DISABLE.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html (PCI Access Control Services)
        - https://github.com/NVIDIA/nccl/issues/667 (PXB/PIX pairs hang; disabling VT-d fixed it)
        - https://docs.nvidia.com/nim/maxine/lipsync/latest/advanced-usage/multi-gpu.html (IOMMU-enabled
          bare-metal PCIe peer-to-peer memory copy is not supported; iommu=pt)
    """
    said = {s.get("id"): s for s in catalogued(f, "pcie-acs-blocks-p2p")}
    helps, where = _acs_evidence(said)
    iommu = said.get(_IOMMU_SAID)
    if (helps is None or where is None) and iommu is not None:
        yield Hit(message="the usual cause (NVIDIA: on bare-metal Linux, IOMMU-enabled PCIe peer-to-peer memory copy is not "
                          "supported) of GPU-to-GPU copies that arrive zeroed or are dropped while the IOMMU translates: the "
                          f"peer writes fault in the IOMMU (the user: \"{str(iommu.get('matched') or iommu.get('text', '')).strip()[:120]}\")",
                  fix=_IOMMU_FIX, evidence=told_evidence(iommu), severity="info")
        return
    if helps is None or where is None:
        return
    yield Hit(message="NCCL works only with peer-to-peer disabled between GPUs that share a PCIe switch: the switch's ACS "
                      "(IO virtualization, VT-d/IOMMU) redirects their P2P traffic to the CPU, which hangs or slows it "
                      f"(line {helps.get('line')}: \"{str(helps.get('text', '')).strip()[:120]}\")",
              fix=_FIX, evidence=told_evidence(helps))


_P2P_CHECK = (
    "nvidia-smi topo -p2p r   # each GPU pair's peer-to-peer read status: OK, or CNS/GNS/TNS/NS (chipset, GPU, "
    "topology not supported)\n"
    "nvidia-smi topo -m   # the path between them (NV# is NVLink; PIX/PXB/PHB/NODE/SYS cross PCIe)")
_P2P_UNSUPPORTED_FIX = _P2P_CHECK + (
    "\nexport NCCL_P2P_DISABLE=1   # where the peer access is NCCL's: copy through host memory instead\n"
    "# in the program: enable peer access only where cudaDeviceCanAccessPeer (torch.cuda.can_device_access_peer) "
    "says 1, else copy through the host; or run on GPUs whose pairs show OK")


# A program's own "warning: ..." line around CUDA's 217 (gpu_p2p_apps.toml).
_WARNED = "gpu_p2p_apps:p2p-refusal-warned"


def _retold_in_title(s: dict) -> bool:
    # a ticket's Markdown title on its first line restates the program's words; what the program did
    # with the refusal is on its own lines
    return s.get("line") == 1 and str(s.get("text", "")).lstrip().startswith("# ")


@rule("GPU028", "gpu-peer-access-unsupported", "error",
      "the program enables peer access between GPUs that cannot access each other's memory", impact=6,
      also={"info": "the program printed the refusal as its own warning and went on without peer access"})
def gpu_peer_access_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, CUDA's cudaErrorPeerAccessUnsupported (CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
        217): "peer access is not supported between these two devices", as torch raises it
        ("CUDA error: ...") or as a program or its user quotes it, and a program's own words for it
        (DistServe's "Peer-to-peer access is unsupported on this platform"). An info where the
        program printed the refusal as its own warning (kmcuda's "warning: failed to enable p2p on
        gpu #0: ...") and went on copying through host memory.

    Why it matters:
        A program called cudaDeviceEnablePeerAccess (or a peer copy that needs it) for two GPUs
        that cannot reach each other's memory directly: GeForce cards where the driver offers no
        peer access, GPUs under different CPU sockets or chipsets that do not forward peer traffic.
        It is the hardware and platform, not a driver fault: the same program must copy through
        host memory there.

    How to fix:
        Read which pairs support it (nvidia-smi topo -p2p r: OK, or chipset/GPU/topology not
        supported); enable peer access only where cudaDeviceCanAccessPeer says 1 and copy through
        host memory elsewhere (NCCL_P2P_DISABLE=1 for NCCL's transfers), or run on GPUs whose pairs
        support it (NVLink or data-centre GPUs under one PCIe switch).

    References:
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html (cudaDeviceCanAccessPeer, cudaDeviceEnablePeerAccess)
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorPeerAccessUnsupported)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html (NCCL_P2P_DISABLE)
    """
    # NCCL's own P2P failures are nccl-p2p-unusable's (rules/nccl_peers.py): NCCL asked the driver first, so the
    # "enabled it without asking" reading is wrong there; CUDA's catalogue reads the same words on those lines.
    nccl = {s.get("line") for s in nccl_p2p_failures(f)}
    told = [s for s in catalogued(f, "gpu-peer-access-unsupported") if s.get("line") not in nccl]
    if not told:
        return
    warned = [s for s in told if s.get("id") == _WARNED]
    stopped = [s for s in told if s.get("line") not in {w.get("line") for w in warned}]
    if warned and all(_retold_in_title(s) for s in stopped):
        # every line of the program's is its own "warning: ...": it asked, was refused and went on copying
        # through the host (kmcuda's "warning: failed to enable p2p on gpu #0: ..."); slower, not a failure
        s = warned[0]
        yield Hit(message=f"the program could not enable peer access between its GPUs and went on without it (line "
                          f"{s.get('line')}: \"{told_text(s)}\"): these GPUs cannot access each other's memory directly, "
                          "so their copies pass through host memory",
                  severity="info", fix=_P2P_CHECK, evidence=told_evidence(s))
        return
    s = stopped[0]
    yield Hit(message=f"peer access is not supported between the two GPUs the program paired (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): they cannot access each other's memory directly, and the program needs it "
                      "or enabled it without asking cudaDeviceCanAccessPeer",
              fix=_P2P_UNSUPPORTED_FIX, evidence=told_evidence(s))


_PEER_LIMIT_FIX = (
    "nvidia-smi -L | wc -l; nvidia-smi topo -m   # how many GPUs the program sees, and whether NVSwitch joins them "
    "(the limit is for systems without NVSwitch)\n"
    "export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7   # at most nine GPUs give each at most eight peers; or fewer, where "
    "other jobs on these GPUs also hold peer mappings\n"
    "# in the program: enable peer access only between the GPUs that exchange data, at most eight peers per GPU "
    "(in groups of eight, as Caffe2 does), and cudaDeviceDisablePeerAccess what is no longer used\n"
    "# under Slurm: ask for the GPUs one job uses (--gpus-per-node=8, not the whole node) so it sees no more")


@rule("GPU033", "gpu-peer-mapping-limit-exceeded", "error",
      "the program enables more peer connections to a GPU than the driver supports (eight per GPU)", impact=6,
      also={"warning": "TensorFlow could not enable peer access between some GPUs and goes on without it"})
def gpu_peer_mapping_limit_exceeded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, CUDA's cudaErrorTooManyPeers (CUDA_ERROR_TOO_MANY_PEERS, 711): "peer
        mapping resources exhausted", as torch or a program's check raises it ("CUDA error:
        ...", Caffe2's "[enforce fail at context_gpu.cu:...] . peer mapping resources exhausted")
        or a user quotes it. TensorFlow's "Unable to enable peer access between device ordinals
        ... CUDA_ERROR_TOO_MANY_PEERS" is a warning: it goes on without peer access there.

    Why it matters:
        cudaDeviceEnablePeerAccess maps one GPU's memory into another's address space, and the
        hardware resources for that are finite: the CUDA Programming Guide's Peer-to-Peer Memory
        Access section says that on systems without NVSwitch each device supports a system-wide
        maximum of eight peer connections. A program that enables peer access between every pair
        of more than nine visible GPUs (llama.cpp on ten P40s), or several processes doing so on
        the same GPUs, exhausts them and aborts at start-up.

    How to fix:
        Make fewer GPUs visible (CUDA_VISIBLE_DEVICES, the scheduler's GPU request), or enable
        peer access only between GPUs that exchange data, at most eight peers per GPU (Caffe2
        enables it in groups of eight, CAFFE2_CUDA_MAX_PEER_SIZE), disabling it when done.

    References:
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#peer-to-peer-memory-access
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html (cudaDeviceEnablePeerAccess: device-wide and system-wide limits)
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorTooManyPeers)
        - https://github.com/ggml-org/llama.cpp/issues/21883
        - https://github.com/NVIDIA/nccl/issues/51 (the limit is system-wide: other libraries' peer mappings count)
    """
    told = catalogued(f, "gpu-peer-mapping-limit-exceeded")
    if not told:
        return
    s = told[0]
    # TensorFlow's GPU device setup logs the refusal and copies through the host for that pair.
    went_on = "Unable to enable peer access between device ordinals" in str(s.get("text", ""))
    yield Hit(message=f"the GPUs ran out of peer mappings (line {s.get('line')}: \"{told_text(s)}\"): the program enabled "
                      "peer access to more GPUs than a GPU supports (eight peer connections per GPU, counted over the "
                      "whole system, on systems without NVSwitch)"
                      + ("; TensorFlow goes on without peer access between those GPUs (slower copies)" if went_on else ""),
              fix=_PEER_LIMIT_FIX, evidence=told_evidence(s), severity="warning" if went_on else None)
