"""Whether the NVIDIA driver is new enough for the GPU generation at all (before any torch build)."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import version_of


def _windows(f: FactView) -> bool:
    t = f.get("torch") if isinstance(f.get("torch"), dict) else {}
    return "windows" in f"{t.get('os') or ''} {t.get('python_platform') or ''}".lower()


def _not_judged_below(driver: Optional[str], need: Any, cc: str, first: Any) -> None:
    """A generation whose first driver is not confirmed (Hopper): at or above the driver of the
    toolkit that first builds for it, surely new enough; below it, not judged, never a pass."""
    have = version_of(driver)
    if need is None or have is None or have < version_of(need):
        raise MissingFact("nvidia.driver_version", f"driver {driver} is older than CUDA {first}'s ({need}), the first "
                                                   f"toolkit for compute capability {cc}, and hpcdoctor has no source "
                                                   "for the first driver that runs this generation")


@rule("SW030", "driver-predates-gpu", "error", "the NVIDIA driver is older than the GPU's architecture", impact=10)
def driver_predates_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An NVIDIA GPU on a driver older than the driver of the first CUDA toolkit that builds code
        for the GPU's architecture generation (compute capability major): an RTX 5090 (12.0,
        Blackwell, first built by CUDA 12.8, whose driver is >= 570.26) on a 535 driver; an A100
        (8.0, CUDA 11.0, >= 450.51.05) on a 440 driver. The generation's first toolkit is a lower
        bound: a later GPU of the same major may need a newer driver still. Hopper (9.0) below
        CUDA 11.8's driver and Windows drivers for Blackwell are not judged (knowledge/cuda.toml
        says why): the rule is then skipped with the reason.

    Why it matters:
        No torch build, container or CUDA runtime helps: the driver does not know the GPU. nvidia-smi
        may list no devices or fail to initialise, torch.cuda.is_available() is False, and
        reinstalling torch (the usual advice) changes nothing.

    How to fix:
        Ask the administrators for a driver of the branch the fix names or newer (a kernel module
        update and a reboot or module reload); until then the GPU cannot run CUDA on this node.

    References:
        - https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html#id5
        - https://docs.nvidia.com/cuda/blackwell-compatibility-guide
    """
    gpus = [g for g in f.gpus() if g.get("vendor") == "nvidia" and isinstance(g.get("compute_capability"), str)]
    if not gpus:
        return
    driver = f.get("nvidia.driver_version") or next(
        (g["driver_version"] for g in gpus if isinstance(g.get("driver_version"), str)), None)
    if not driver:
        raise MissingFact("nvidia.driver_version", f.reason("nvidia.driver_version"))
    cuda = knowledge.load("cuda")
    firsts = cuda["arch_first_toolkit"]
    unconfirmed = cuda["arch_first_toolkit_unconfirmed"]
    windows = _windows(f)
    drivers = cuda["release_driver_windows" if windows else "release_driver"]
    seen = set()
    for g in gpus:
        cc = g["compute_capability"]
        major = cc.split(".")[0]
        if major in unconfirmed and major not in firsts:
            _not_judged_below(driver, drivers.get(unconfirmed[major]), cc, unconfirmed[major])
        first = firsts.get(major)
        if first is None or cc in seen:
            continue
        seen.add(cc)
        need = drivers.get(first)
        if need is None:
            raise MissingFact("cuda.release_driver", f"hpcdoctor has no sourced {'Windows ' if windows else ''}driver for "
                                                     f"CUDA {first}, the first toolkit for compute capability {cc}")
        have = version_of(driver)
        if have is None:
            raise MissingFact("nvidia.driver_version", f"driver version {driver!r} is not understood")
        if have >= version_of(need):
            continue
        branch = need.split(".")[0]
        yield Hit(message=f"{g.get('name')} is compute capability {cc}, first built by CUDA {first}, whose driver is "
                          f">= {need}; driver {driver} predates this GPU generation: CUDA cannot use the GPU, whatever "
                          "torch or container is installed",
                  subject=f"GPU {g.get('index')}",
                  fix=(f"nvidia-smi --query-gpu=name,driver_version --format=csv   # ask the administrators for an "
                       f"NVIDIA driver >= {need} (branch R{branch} or newer) on this node; reinstalling torch does not help"),
                  evidence={"compute_capability": cc, "nvidia.driver_version": driver, "first_cuda": first,
                            "needs_driver": need})
