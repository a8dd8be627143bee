"""An AMD GPU that the ROCm runtime leaves out because the amdgpu kernel driver loaded is older than
the runtime needs (knowledge/messages/kfd.toml rocr-incompatible-kernel-userspace)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_all, told_evidence, told_text

SYMBOL = "amdgpu-kernel-userspace-incompatible"


@rule("GPU051", SYMBOL, "error", "the ROCm runtime disabled a GPU: the amdgpu kernel driver is older than ROCm needs",
      impact=9)
def amdgpu_kernel_userspace_incompatible(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted rocminfo (or any ROCm program's stderr), the runtime's "HSA Error:
        Incompatible kernel and userspace, Vega 20 [Radeon VII] disabled. Upgrade amdgpu.", one
        line per GPU it drops.

    Why it matters:
        ROCr checks the KFD interface version the amdgpu kernel driver reports: before 1.4, KFD
        misreported a GPU's SRAM ECC mode, and gfx906 boards (Vega 20: Radeon VII, Radeon Pro VII,
        MI50, MI60) ship in both modes, so the runtime cannot know which code objects the GPU
        runs and leaves it out. rocminfo then lists only the CPU and every ROCm program (HIP,
        OpenCL, PyTorch) sees no GPU, after a ROCm upgrade on a kernel whose amdgpu is older, or
        where ROCm's amdgpu-dkms module was never built and installed for the running kernel (a
        pasted dkms status that lists amdgpu as only "added" says so, and the finding names it).

    How to fix:
        Run the amdgpu kernel driver of the ROCm release (amdgpu-dkms built and installed for the
        running kernel, then a reboot), or a kernel whose amdgpu is new enough. The runtime's
        HSA_IGNORE_SRAMECC_MISREPORT=1 skips the check; it is safe only where the GPU's SRAM ECC
        mode is known to match the code objects (sramecc+ or sramecc- in the gfx906 target).

    References:
        - https://github.com/ROCm/ROCR-Runtime/blob/master/src/core/runtime/amd_topology.cpp (DiscoverGpu)
        - https://github.com/ROCm/ROCR-Runtime/blob/master/src/core/util/flag.h (HSA_IGNORE_SRAMECC_MISREPORT)
        - https://github.com/ROCm/legacy-rocm-build/issues/1423 (ROCm 4.0 to 4.1 on Fedora 33's kernel)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    s = told[0]
    gpus = list(dict.fromkeys(str(t.get("gpu") or "").strip() for t in told if t.get("gpu")))
    what = gpus[0] if len(gpus) == 1 else f"{len(told)} GPUs" if len(told) > 1 else "the GPU"
    # dkms status showing ROCm's amdgpu only added: built for no kernel, so the kernel's own amdgpu runs
    added = next((t for t in ticket_all(f, "dkms:status-module")
                  if t.get("module") == "amdgpu" and t.get("state") == "added"), None)
    why = (f"; dkms status shows ROCm's amdgpu {added.get('version')} only added (line {added.get('line')}), built for no "
           "kernel, so the kernel's own older amdgpu is the one loaded" if added else "")
    yield Hit(message=f"the ROCm runtime disabled {what} (line {s.get('line')}: \"{told_text(s)}\"): the amdgpu kernel driver "
                      "loaded reports a KFD interface older than 1.4, which misreported a gfx906 GPU's SRAM ECC mode, so "
                      "no ROCm program (HIP, OpenCL, PyTorch) can use it; the kernel driver is older than this ROCm needs"
                      + why,
              fix=("dkms status amdgpu; modinfo -F version amdgpu; uname -r   # ROCm's amdgpu module built and installed "
                   "for the running kernel, or only the kernel's own (older) amdgpu\n"
                   "sudo dkms autoinstall -k \"$(uname -r)\" && sudo reboot   # administrators: ROCm's amdgpu-dkms for this "
                   "kernel (install the amdgpu-dkms package of the ROCm release first), or boot a kernel whose amdgpu is newer\n"
                   "HSA_IGNORE_SRAMECC_MISREPORT=1 rocminfo | grep -c gfx906   # the runtime's own override of the check: "
                   "only where the GPU's SRAM ECC mode is known to match the programs' code objects"),
              evidence={**told_evidence(s), "gpus": gpus, "lines": len(told)})
