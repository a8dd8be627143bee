"""The GPUDirect RDMA peer-memory module installed but not loaded (knowledge/messages/prose.toml,
kmod.toml): nvidia-peermem (the driver's, R470+) or Mellanox's nv_peer_mem, which nothing loads at
boot unless it is listed in /etc/modules-load.d. NCCL's side of the same fact (GPU Direct RDMA
Disabled) is nccl-gdr-disabled's."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, stated, told_evidence, told_text

SYMBOL = "gpudirect-peer-memory-module-not-loaded"
_MODINFO = "kmod:modinfo-peer-memory-module"


@rule("NET051", SYMBOL, "warning", "the GPUDirect RDMA peer-memory module is installed but not loaded", impact=6)
def gpudirect_peer_memory_module_not_loaded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the user saying the peer-memory module (nvidia-peermem, nv_peer_mem) is
        not loaded (lsmod does not list it) or is gone after a reboot, with modinfo's "filename:"
        line showing its file installed, where pasted.

    Why it matters:
        GPUDirect RDMA needs the module loaded: without it NCCL and MPI move every inter-node GPU
        transfer through host memory (NCCL logs "GPU Direct RDMA Disabled"). A module installed by
        DKMS or the driver's package is not loaded at boot unless it is listed in
        /etc/modules-load.d, so it is lost on every reboot.

    How to fix:
        Load it (modprobe) and list it in /etc/modules-load.d so systemd-modules-load loads it at
        every boot; the GPU Operator loads it with its peermem option.

    References:
        - https://docs.nvidia.com/cuda/gpudirect-rdma/ (nvidia-peermem)
        - https://github.com/Mellanox/nv_peer_memory/issues/46 (nv_peer_mem gone after each reboot; modules-load.d fixed it)
        - https://www.freedesktop.org/software/systemd/man/latest/modules-load.d.html
    """
    said = next((s for s in catalogued(f, SYMBOL) if stated(s)), None)
    if said is None:
        return
    found = first_symptom(f, _MODINFO)
    module = str((found or {}).get("module") or said.get("module") or "nvidia-peermem")
    installed = (f"; modinfo finds it installed ({found.get('path')}, line {found.get('line')})" if found else "")
    name = shlex.quote(module)
    yield Hit(message=f"the GPUDirect RDMA peer-memory module {module} is not loaded (line {said.get('line')}: "
                      f"\"{told_text(said)}\"){installed}: a module that /etc/modules-load.d does not list is not loaded at "
                      "boot, and without it GPU memory is not registered with the InfiniBand/RoCE NIC, so NCCL or MPI "
                      "stage every inter-node transfer through host memory",
              fix=(f"sudo modprobe {name} && lsmod | grep -E '^(nvidia_peermem|nv_peer_mem) '   # load it now\n"
                   f"echo {name} | sudo tee /etc/modules-load.d/{module}.conf   # systemd-modules-load loads it at "
                   "every boot"),
              evidence=told_evidence(said))
