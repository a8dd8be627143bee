"""The build to install: what a node's driver, GPUs, OS, CPU, Python and installer can run
(hpcdoctor.knowledge.wheels), as the fix of the torch-build rules."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge import wheels


def driver_supports(driver: str, runtime: str, windows: bool = False) -> Tuple[bool, Optional[str]]:
    """(ok, why) for a CUDA runtime on a driver (hpcdoctor.knowledge.wheels); unknown counts as not refused."""
    ok, why = wheels.driver_supports(driver, runtime, windows)
    return ok is not False, why


def node_platform(f: FactView) -> Tuple[str, str]:
    """(os, cpu architecture) of the node the build must run on, as the wheel tables name them."""
    t = f["torch"] if isinstance(f.get("torch"), dict) else {}
    text = f"{t.get('os') or ''} {t.get('python_platform') or ''}".lower()
    os_name = "windows" if "windows" in text else "linux"
    arch = str(f.get("cpu.arch") or "").lower()
    cpu = "aarch64" if arch in ("aarch64", "arm64") or "aarch64" in text or "arm64" in text else "x86_64"
    return os_name, cpu


def from_conda(t: Dict[str, Any], package: str) -> bool:
    """Whether conda (not pip inside a conda env) installed ``package``, by the probe's or
    collect_env's conda list: its channel is not "pypi" and its build not pip's."""
    got = (t.get("conda_packages") or {}).get(package) or (t.get("conda_list") or {}).get(package)
    return isinstance(got, dict) and got.get("channel") != "pypi" and not str(got.get("build", "")).startswith("pypi")


def installer(t: Dict[str, Any]) -> str:
    if from_conda(t, "pytorch"):
        return "conda"
    return "conda" if "cpuonly" in (t.get("conda_packages") or {}) else "pip"


def python_environment(t: Dict[str, Any]) -> Dict[str, Any]:
    """What of the environment decides which build installs there: its Python version, the torch
    it has (the fix moves as little as it can) and the torchvision/torchaudio that must move with it."""
    version = t.get("version") if isinstance(t.get("version"), str) else None
    python = t.get("python_version") if isinstance(t.get("python_version"), str) else None
    return {"python": python, "current": version, "companions": wheels.releases.installed_companions(t)}


def build_fix(f: FactView, gpus: Sequence[Dict[str, Any]]) -> str:
    """The build every listed NVIDIA GPU runs on this driver, OS, CPU, Python and installer,
    nearest the installed release (hpcdoctor.knowledge.wheels.resolve)."""
    t = f["torch"] if isinstance(f.get("torch"), dict) else {}
    ccs = sorted({g.get("compute_capability") for g in gpus if isinstance(g.get("compute_capability"), str)
                  and g.get("vendor", "nvidia") == "nvidia"})
    if not ccs:
        kinds = sorted({str(g.get("vendor")) for g in gpus})
        gfx = sorted({wheels.gfx_base(g["gfx_target"]) for g in gpus if g.get("vendor") == "amd"
                      and isinstance(g.get("gfx_target"), str) and g["gfx_target"].startswith("gfx")})
        if len(gfx) == 1:
            return wheels.resolve_rocm(gfx[0], f.config, **python_environment(t))["text"]
        if "amd" in kinds:
            return ("amd-smi version   # then a ROCm build of torch for that ROCm: pip install torch --index-url "
                    f"{wheels.DEFAULT_INDEX}/rocmX.Y, or the site's PyTorch module")
        return ("nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv   # then a CUDA build of torch "
                "for that compute capability and driver, or the site's PyTorch module")
    driver = f.get("nvidia.driver_version") or next((g.get("driver_version") for g in f.gpus()
                                                    if isinstance(g.get("driver_version"), str)), None)
    os_name, cpu = node_platform(f)
    # The oldest architecture decides: a build that runs it and every newer one listed.
    answers = [wheels.resolve(cc, driver if isinstance(driver, str) else None, os_name, cpu, installer(t), f.config,
                              **python_environment(t)) for cc in ccs]
    bad = next((a for a in answers if not a["ok"]), None)
    return (bad or answers[0])["text"]


def arch_list_not_known(f: FactView, t: Dict[str, Any], devices: List[Any]) -> None:
    """A wheel whose arch list knowledge lacks, on a node with GPUs to judge against it: not judged
    (the rule is skipped with the reason), never a silent pass."""
    if devices and t.get("arch_list") is None and "torch.arch_list" in f.unknown:
        raise MissingFact("torch.arch_list", f.unknown["torch.arch_list"])
