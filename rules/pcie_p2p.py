"""Peer-to-peer between GPUs on a PCIe switch, sent up to the CPU by the switch's Access Control Services."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence

# What puts GPUs where ACS redirection applies (knowledge/messages/pcie.toml): a pair behind a PCIe
# switch in nvidia-smi topo -m, or a bridge's ACS control with redirection on.
_ON_A_SWITCH = ("pcie:topo-pair-pix", "pcie:topo-pair-pxb", "pcie:acs-redirect-on")
_P2P_OFF_HELPS = "prose:nccl-p2p-disable-helps"

_FIX = ("sudo lspci -vvv | grep ACSCtl   # SrcValid+ or ReqRedir+ on the PCIe switches' ports: ACS sends GPU-to-GPU "
        "traffic up to the CPU\n"
        "cat /proc/cmdline   # intel_iommu=on or amd_iommu=on: IO virtualization (VT-d/IOMMU) is on\n"
        "# administrators: disable IO virtualization (VT-d/IOMMU) or ACS in the BIOS; on Broadcom PLX switches, after "
        "each boot:\n"
        "sudo lspci | grep PLX   # the switches' bridges; then, for each: sudo setpci -s BUS:DEV.FN ECAP_ACS+0x6.w=0000")


@rule("GPU020", "pcie-acs-blocks-p2p", "error", "GPU peer-to-peer over a PCIe switch is redirected by ACS/IOMMU",
      impact=7)
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
    """
    said = {s.get("id"): s for s in catalogued(f, "pcie-acs-blocks-p2p")}
    helps = said.get(_P2P_OFF_HELPS)
    where = next((said[k] for k in _ON_A_SWITCH if k in said), None)
    if helps is None or where is None:
        return
    yield Hit(message="NCCL works only with peer-to-peer disabled between GPUs that share a PCIe switch: the switch's ACS "
                      "(IO virtualization, VT-d/IOMMU) redirects their P2P traffic to the CPU, which hangs or slows it "
                      f"(line {helps.get('line')}: \"{str(helps.get('text', '')).strip()[:120]}\")",
              fix=_FIX, evidence=told_evidence(helps))
