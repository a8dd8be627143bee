"""Whether torch's own official build carried the GPU a "no kernel image" ticket is about: the pair
torch-missing-arch / framework-missing-arch asks it to tell whose kernel image was missing.

CUDA's binary compatibility (NVIDIA's CUDA C++ Programming Guide, "Binary Compatibility": a cubin
for compute capability X.y runs on X.z for z >= y, within one major; PTX is JIT-compiled for any
later one) decides whether a wheel's arch list (knowledge/torch_wheels.toml, [[wheel]] and
[[old_wheel]]) runs a GPU (knowledge/gpus.toml): torch 1.7+cu102's sm_50 runs on a TITAN X (5.2),
1.11+cu113's sm_80 on an RTX A6000 (8.6). Where the paste names the torch release (and the CUDA
variant where said) and the GPU, and every official wheel of it runs the GPU, the missing kernel
image is an extension's or another framework's, not torch's."""

from __future__ import annotations

from typing import Any, Dict, Optional

from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._common import gpu_candidates_of_ticket, gpu_of_ticket

# The user's own line naming torch and CUDA together (knowledge/messages/prose.toml), either order,
# and a wheel named with its tag ("torch==1.7.1+cu101").
_SAID = ("prose:torch-cuda-versions-said", "prose:cuda-torch-versions-said")
_NAMED = "prose:torch-build-named"
# The user saying plain torch runs on the GPU while the extension fails (prose.toml).
TORCH_WORKS = "prose:torch-itself-works-said"


def _carries(cc: str, release: str, cuda: Optional[str]) -> Optional[bool]:
    carries = wheels.release_carries(cc, release, cuda)
    if carries is None and cuda is not None:
        # The CUDA named may be the system toolkit's, not the wheel's: every variant of the release.
        carries = wheels.release_carries(cc, release)
    return carries


def torch_works_said(f: FactView) -> Optional[Dict[str, Any]]:
    """The user's line saying torch's own operations run while the program fails, or None."""
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == TORCH_WORKS), None)


def torch_build_verdict(f: FactView) -> Dict[str, Any]:
    """{"carries": True/False/None, "torch", "cuda", "gpu", "line", "why"}: whether the official
    wheels of the torch the paste names run the GPU it names; "why" says what is unknown."""
    found = {s.get("id"): s for s in reversed(f.get("ticket.symptoms") or [])}
    # Only what the paste's text says: a node's own torch report is torch-missing-arch's arch-list check,
    # and a pasted error beside a node's report may come from another machine.
    release = cuda = line = None
    if found.get(_NAMED):
        s = found[_NAMED]
        release, cuda, line = s.get("torch"), wheels.cuda_of_tag("cu" + str(s.get("cu"))), s.get("line")
    else:
        said = [found[k] for k in _SAID if k in found and found[k].get("torch")]
        if said:
            s = min(said, key=lambda s: s.get("line") or 0)
            release, cuda, line = s["torch"], s.get("cuda"), s.get("line")
    gpu = gpu_of_ticket(f)
    out = {"carries": None, "torch": release, "cuda": cuda, "gpu": gpu, "line": line}
    shared = gpu_candidates_of_ticket(f) if gpu is None else None
    if release is not None and shared:
        # A name two GPUs share: torch's wheels decide only where they carry every one of them.
        verdicts = [_carries(cc, release, cuda) for cc in shared["ccs"]]
        if all(verdicts):
            out.update(carries=True, gpu={"name": shared["name"], "cc": " or ".join(shared["ccs"]), "ccs": shared["ccs"]})
        elif None in verdicts and not wheels.release_arch_lists(release):
            out["why"] = f"hpcdoctor has no arch list of torch {release}'s official wheels"
        else:
            out["why"] = (f"the paste names {shared['name']}, which is more than one GPU (compute capability "
                          f"{' or '.join(shared['ccs'])}), and torch {release}'s wheels do not carry every one")
        return out
    if release is None or gpu is None:
        missing = [w for w, v in (("the torch release", release), ("the GPU", gpu)) if v is None]
        out["why"] = f"the paste does not name {' nor '.join(missing)}"
        return out
    carries = _carries(gpu["cc"], release, cuda)
    out["carries"] = carries
    if carries is None:
        lists = wheels.release_arch_lists(release)
        out["why"] = (f"hpcdoctor has no arch list of torch {release}'s official wheels" if not lists else
                      f"torch {release}'s official wheels differ on compute capability {gpu['cc']} by CUDA variant, "
                      "and the paste does not say which was installed")
    return out
