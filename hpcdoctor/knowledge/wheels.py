"""Which official torch build runs on a node: one resolver for every fix that names a build.

From the driver, the GPU's compute capability, the OS, the CPU architecture and the installer, it
picks the newest build in knowledge/torch_wheels.toml (plus the site's [knowledge] config) whose
arch list runs the GPU and whose CUDA the driver runs, or says which driver would be needed.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from hpcdoctor import knowledge
from hpcdoctor.knowledge import releases, version_of

DEFAULT_INDEX = "https://download.pytorch.org/whl"
# PyTorch stopped publishing to its conda channel after 2.5: a conda env gets pip inside it.
CONDA_NOTE = ("PyTorch publishes no conda packages after 2.5 (pytorch/pytorch#138506): in this conda "
              "env, conda remove pytorch first, then install with pip inside the env")




def arch_supported(cc: str, arch_list) -> bool:
    """Whether a build's arch list runs on compute capability ``cc``: SASS for the same major and
    a minor at or below (sm_80 runs on 8.6), or PTX (compute_XY) at or below, JIT-compiled."""
    major, minor = (int(x) for x in cc.split("."))
    for arch in arch_list:
        m = re.match(r"^(sm|compute)_(\d+?)(\d)([af]?)$", arch)
        if not m:
            continue
        a_major, a_minor, suffix = int(m.group(2)), int(m.group(3)), m.group(4)
        if m.group(1) == "sm":
            if suffix == "a" and (a_major, a_minor) != (major, minor):
                continue  # arch-specific SASS (sm_90a) runs on that exact GPU only
            if a_major == major and a_minor <= minor:
                return True
        elif (a_major, a_minor) <= (major, minor):
            return True
    return False


def first_toolkit_for(arch: str) -> Optional[str]:
    """The first CUDA release that builds for an architecture, named as a compute capability
    ("8.9") or nvcc's digits ("89", "90a") (cuda.toml [arch_min_toolkit]); None where it is not listed."""
    return knowledge.load("cuda").get("arch_min_toolkit", {}).get(arch.replace(".", ""))


def last_toolkit_for(arch: str) -> Optional[str]:
    """The last CUDA release that builds for an architecture it has since dropped, keyed as
    first_toolkit_for (cuda.toml [arch_last_toolkit]); None where no release has dropped it or it is not listed."""
    return knowledge.load("cuda").get("arch_last_toolkit", {}).get(arch.replace(".", ""))


def dropped_arch(arch: str) -> bool:
    """An architecture (nvcc's digits, "21", "35") that a CUDA release has dropped and that no table
    lists as new ([arch_last_toolkit], [arch_min_toolkit]): a compiler refusing it is newer than the
    build's flags, not older than the GPU."""
    return last_toolkit_for(arch) is not None and first_toolkit_for(arch) is None


def virtual_arch_of(arch: str) -> Optional[str]:
    """The virtual architecture's digits of a real one whose numbers differ ("21" -> "20", cuda.toml
    [virtual_arch_of]); None where they are the same."""
    return knowledge.load("cuda").get("virtual_arch_of", {}).get(arch.replace(".", ""))


def nccl_cu11_build_cuda(release: str) -> Optional[str]:
    """The CUDA runtime a PyPI nvidia-nccl-cu11 release was built with (cuda_wheel_libs.toml), or None."""
    return knowledge.load("cuda_wheel_libs").get("nccl_cu11_build_cuda", {}).get("releases", {}).get(release)


def required_driver(runtime: str, windows: bool = False, config: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The lowest driver that runs a CUDA runtime: the major's minor-version-compatibility minimum
    from CUDA 11 on, the toolkit's own driver before."""
    cuda = knowledge.load("cuda")
    rt = version_of(runtime)
    if rt is None:
        return None
    if rt.major >= 11:
        return cuda["minor_compat_windows" if windows else "minor_compat"].get(str(rt.major))
    table = dict(cuda["release_driver_windows" if windows else "release_driver"])
    if not windows:
        table.update((_site(config).get("release_driver") or {}))
    return table.get(f"{rt.major}.{rt.minor}")


def driver_supports(driver: str, runtime: str, windows: bool = False, config: Optional[Dict[str, Any]] = None):
    """(ok, why) for a CUDA runtime on a driver, with minor-version compatibility; ok is None when
    the versions are not understood or knowledge has no driver for that CUDA."""
    dv, rt = version_of(driver), version_of(runtime)
    if dv is None or rt is None:
        return None, "versions not understood"
    need = required_driver(runtime, windows, config)
    if need is None:
        return None, f"no driver data for CUDA {runtime}" + (" on Windows" if windows else "")
    compat = rt.major >= 11
    if dv < version_of(need):
        how = f"minor-version compatibility for {rt.major}.x" if compat else "no minor-version compatibility before CUDA 11"
        return False, f"CUDA {runtime} needs a driver >= {need} ({how})"
    if not compat:
        return True, f"driver >= {need}"
    own = knowledge.load("cuda")["release_driver" if not windows else "release_driver_windows"].get(f"{rt.major}.{rt.minor}")
    if own and dv < version_of(own):
        # Minor-version compatibility runs it, but PTX newer than the driver cannot be JIT-compiled.
        return True, (f"driver >= {need} runs any CUDA {rt.major}.x runtime through minor-version compatibility "
                      f"(CUDA {runtime}'s own driver is {own}; PTX built for it will not JIT on this driver)")
    return True, f"driver >= {need} runs any CUDA {rt.major}.x runtime"


def _site(config: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return (config or {}).get("knowledge") or {}


def wheel_table(config: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
    """The site's wheel entries first (first match wins, so they override), then the shipped ones."""
    return list(_site(config).get("wheel") or []) + list(knowledge.load("torch_wheels").get("wheel", []))


def _bounds(w: Dict[str, Any]) -> Tuple[Any, Any]:
    lo = re.search(r">=\s*([\d.]+)", w["torch"])
    hi = re.search(r"<\s*([\d.]+)", w["torch"])
    return (version_of(lo.group(1)) if lo else None), (version_of(hi.group(1)) if hi else None)


def _matches_platform(w: Dict[str, Any], os_name: str, cpu: str) -> bool:
    return w.get("os", "linux") == os_name and w.get("cpu", "x86_64") == cpu


def index_url(tag: str, config: Optional[Dict[str, Any]] = None) -> str:
    base = _site(config).get("index_url") or DEFAULT_INDEX
    return f"{base.rstrip('/')}/{tag}"


def resolve(cc: str, driver: Optional[str] = None, os_name: str = "linux", cpu: str = "x86_64",
            installer: str = "pip", config: Optional[Dict[str, Any]] = None, python: Optional[str] = None,
            current: Optional[str] = None, companions: Sequence[str] = ()) -> Dict[str, Any]:
    """The official build this node can run: with the installed torch known (``current``), the
    release nearest to it; without, the newest. Only releases with wheels for the node's Python
    (``python``, "3.12.9") are offered; when it is unknown the text says which Pythons the wheels
    need. ``companions`` (torchvision, torchaudio) the environment lists are pinned to the releases
    built against the chosen torch.

    Returns {"ok": True, "torch", "cuda", "tag", "index_url", "command", "text"} or {"ok": False,
    "need_driver" (None when no known build carries the GPU at all), "text"}.
    """
    windows = os_name == "windows"
    sm = "sm_" + cc.replace(".", "")
    table = [w for w in wheel_table(config) if all(_bounds(w)) and _matches_platform(w, os_name, cpu)]
    carries = [w for w in table if arch_supported(cc, w.get("arch", []))]
    where = f"{'Windows' if windows else 'Linux'} {cpu}"
    if not carries:
        known = (f"no torch build in hpcdoctor's knowledge (2.0 and later) carries {sm} on {where}" if table
                 else f"hpcdoctor has no sourced wheel arch lists for {where}")
        return {"ok": False, "need_driver": None,
                "text": f"python3 -c 'import torch; print(torch.cuda.get_arch_list())'   # {known}: a torch build "
                        f"whose arch list includes {sm} is needed, or the site's module"}

    def runs(w):
        return driver is None or driver_supports(driver, w["cuda"], windows, config)[0] is True

    runnable = [w for w in carries if runs(w)]
    if not runnable:
        best = max(carries, key=lambda w: (_bounds(w)[1], version_of(w["cuda"])))
        # The gentlest driver requirement, and of those builds the newest release.
        gentlest = min(carries, key=lambda w: (version_of(required_driver(w["cuda"], windows, config) or "9999"),
                                               [-x for x in _bounds(w)[1].release]))
        need = required_driver(best["cuda"], windows, config)
        low = required_driver(gentlest["cuda"], windows, config)
        # The user cannot change the driver: the command shows the one in force, the comment what to ask for.
        text = (f"nvidia-smi --query-gpu=driver_version --format=csv,noheader   "
                f"# no torch build in hpcdoctor's knowledge (2.0 and later) for {sm} runs on driver {driver}: "
                f"ask the administrators for a driver >= {need} "
                f"(the newest builds, CUDA {best['cuda']})")
        if low and low != need:
            text += f"; >= {low} runs the CUDA {gentlest['cuda']} builds of torch{_spec(carries, gentlest['cuda'])}"
        return {"ok": False, "need_driver": need, "text": text}
    return _pick(runnable, sm, driver, windows, installer, config, python, current, companions)


def _pick(runnable, what, driver, windows, installer, config, python, current, companions, rocm=False):
    """Of the builds that run the GPU on this driver, the release (and its newest CUDA or ROCm
    variant) to install, and the command that installs it with its companions."""
    variant = "rocm" if rocm else "cuda"
    cands = [(m, w) for w in runnable for m in releases.minors_between(*_bounds(w))]
    py = releases.python_minor(python)
    if py:
        fits = [(m, w) for m, w in cands if _has_python(w, m, py, rocm, config) is True]
        if not fits:
            return _no_wheels_for_python(cands, py, what, config, rocm, windows, current)
        cands = fits
    companions = [c for c in releases.COMPANIONS if c in set(companions)]
    order = releases.nearest({m for m, _ in cands}, releases.release_minor(current))
    # A release whose companions' pairing is known is one whose fix installs as a whole.
    order.sort(key=lambda m: not all(releases.companion(m, c, config) for c in companions))
    if current or companions:
        target = order[0]
        best = max((w for m, w in cands if m == target), key=lambda w: version_of(w[variant]))
        spec, lo, hi = releases.pin(target), target, target
    else:
        best = max((w for _, w in cands), key=lambda w: (_bounds(w)[1], version_of(w[variant])))
        same = sorted({m for m, w in cands if w[variant] == best[variant]}, key=version_of)
        lo, hi = same[0], same[-1]
        spec = f">={lo},<{releases.next_minor(hi)}"
        target = hi
    tag = (f"rocm{best['rocm']}" if rocm else "cu" + best["cuda"].replace(".", ""))
    url = index_url(tag, config)
    pins, unpaired = [f'"torch{spec}"'], []
    for c in companions:
        paired = releases.companion(target, c, config)
        if paired:
            pins.append(f'"{c}{releases.pin(paired)}"')
        else:
            unpaired.append(c)
    command = f"pip install --force-reinstall {' '.join(pins)} --index-url {url}"
    line = f"conda remove -y pytorch && {command}" if installer == "conda" else command
    if rocm:
        text = (f"{line}   # the +{tag} wheels of torch{spec} carry {what}; they bring ROCm {best['rocm']}'s "
                "user-space libraries, the node's amdgpu kernel driver must support that ROCm release")
    else:
        text = f"{line}   # the +{tag} wheels of torch{spec} run {what}"
        text += f" on driver {driver}" if driver else f"; they need a driver >= {required_driver(best['cuda'], windows, config)}"
    if py is None:
        spans = sorted({s for s in (releases.python_span(m, config) for m in {lo, hi}) if s})
        text += ("; this environment's Python version is unknown: check python3 --version, these wheels exist for "
                 f"Python {' / '.join(spans)} only" if spans else
                 f"; this environment's Python version is unknown, and so is which Pythons torch {target} has wheels for")
    if unpaired:
        text += (f"; {' and '.join(unpaired)} also installed: hpcdoctor has no sourced release of "
                 f"{' or '.join(unpaired)} built against torch {target}, reinstall the one PyTorch pairs with it")
    if installer == "conda":
        text += f"; {CONDA_NOTE}"
    return {"ok": True, "torch": spec, variant: best[variant], "tag": tag, "index_url": url, "command": command,
            "text": text}


def _has_python(w, minor, py, rocm, config):
    # A site's wheel entry may name its own Pythons; the shipped ones rely on [[python]].
    own = w.get("python")
    return py in own if isinstance(own, list) else releases.has_wheels_for(minor, py, rocm, config)


def _no_wheels_for_python(cands, py, what, config, rocm, windows=False, current=None):
    """No build that runs the GPU has wheels for this Python: say which Python they need, and
    install into a new environment of that Python."""
    minors = sorted({m for m, _ in cands}, key=version_of)
    known = [m for m in minors if releases.python_entry(m, config)]
    if not known:
        return {"ok": False, "need_driver": None,
                "text": f"# hpcdoctor does not know which Python versions torch {minors[0]}-{minors[-1]} (the builds that "
                        f"run {what} here) has wheels for, and has none for Python {py} on record: check "
                        "pip index versions torch in this environment"}
    # The release nearest the installed one, and the Python nearest the node's that it has wheels for.
    target = releases.nearest(known, releases.release_minor(current))[0]
    pys = sorted((v for v in releases.python_entry(target, config)["versions"] if not v.endswith("t")), key=version_of)
    want = next((v for v in pys if version_of(v) > version_of(py)), pys[-1])
    best = max((w for m, w in cands if m == target), key=lambda w: version_of(w["rocm" if rocm else "cuda"]))
    tag = f"rocm{best['rocm']}" if rocm else "cu" + best["cuda"].replace(".", "")
    command = venv_command(want, f"\"torch{releases.pin(target)}\" --index-url {index_url(tag, config)}", windows)
    return {"ok": False, "need_driver": None,
            "text": f"{command}   # Python {py} has no wheels of any torch that runs {what} here (torch {target} has "
                    f"wheels for Python {releases.python_span(target, config)}): a new environment with Python {want} "
                    f"(where it is missing: module load python, or conda create -n torch python={want})"}


def venv_command(python: str, install: str, windows: bool = False) -> str:
    """A new virtual environment of CPython ``python`` (3.12) with ``install`` (pip's arguments) in it."""
    env = f"torch-py{python.replace('.', '')}"
    # The Python launcher (py -3.X) is how Windows picks an installed Python; elsewhere python3.X.
    return (f"py -{python} -m venv {env} && {env}\\Scripts\\python -m pip install {install}" if windows else
            f"python{python} -m venv ~/{env} && ~/{env}/bin/pip install {install}")


def _spec(entries: List[Dict[str, Any]], cuda: str) -> str:
    # Bounded above by where knowledge stops: a later release may have dropped the GPU.
    same = [_bounds(w) for w in entries if w["cuda"] == cuda]
    return f">={min(lo for lo, _ in same)},<{max(hi for _, hi in same)}"


def wheel_arch_list(torch_version: str, os_name: str = "linux", cpu: str = "x86_64",
                    config: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """Arch list of the official wheel a "2.6.0+cu124"-style version names (a "+rocmX.Y" one: its
    gfx list, Linux x86_64 only), or None."""
    if "+rocm" in str(torch_version or ""):
        return rocm_wheel_gfx_list(torch_version, config) if (os_name, cpu) == ("linux", "x86_64") else None
    m = re.match(r"^(\d+\.\d+(?:\.\d+)?)[^+]*\+cu(\d+)(\d)$", torch_version or "")
    release = version_of(m.group(1)) if m else None
    if release is None:
        return None
    cuda = f"{int(m.group(2))}.{m.group(3)}"
    from packaging.specifiers import SpecifierSet

    for w in wheel_table(config):
        if w["cuda"] == cuda and _matches_platform(w, os_name, cpu) and release in SpecifierSet(w["torch"]):
            return {"arch": list(w["arch"]), "cuda": cuda}
    return None


# --- ROCm: the gfx targets of the official "+rocmX.Y" wheels ----------------------------------

def rocm_wheel_table(config: Optional[Dict[str, Any]] = None) -> List[Dict[str, Any]]:
    """The site's [[knowledge.rocm_wheel]] entries first (they override), then the shipped ones."""
    return list(_site(config).get("rocm_wheel") or []) + list(knowledge.load("torch_wheels").get("rocm_wheel", []))


def gfx_base(target: str) -> str:
    """gfx90a:sramecc+:xnack- -> gfx90a: the feature flags do not change which code object runs."""
    return str(target).split(":")[0].strip().lower()


def rocm_wheel_gfx_list(torch_version: str, config: Optional[Dict[str, Any]] = None) -> Optional[Dict[str, Any]]:
    """gfx list of the official wheel a "2.5.1+rocm6.2"-style version names, or None: a nightly or
    source build ("2.5.0.dev20240821+rocm6.2", "+git...") and an unknown release are not guessed."""
    m = re.match(r"^(\d+\.\d+(?:\.\d+)?)\+rocm(\d+(?:\.\d+){1,2})$", str(torch_version or "").strip())
    if not m:
        return None
    release = version_of(m.group(1))
    from packaging.specifiers import SpecifierSet

    for w in rocm_wheel_table(config):
        if str(w.get("rocm")) == m.group(2) and release in SpecifierSet(w["torch"]):
            return {"arch": list(w["gfx"]), "rocm": m.group(2), "source": w.get("source")}
    return None


def resolve_rocm(gfx: str, config: Optional[Dict[str, Any]] = None, python: Optional[str] = None,
                 current: Optional[str] = None, companions: Sequence[str] = ()) -> Dict[str, Any]:
    """The official ROCm wheel in knowledge whose gfx list carries this GPU's target: nearest to
    the installed release, else the newest, for the node's Python (as ``resolve``).

    Returns {"ok": True, "torch", "rocm", "tag", "index_url", "command", "text"} or {"ok": False, "text"}.
    """
    target = gfx_base(gfx)
    table = [w for w in rocm_wheel_table(config) if all(_bounds(w))]
    carries = [w for w in table if target in {gfx_base(a) for a in w.get("gfx", [])}]
    if not carries:
        known = ", ".join(sorted({f"{_bounds(w)[0]}+rocm{w['rocm']}" for w in table}, key=version_of))
        return {"ok": False,
                "text": (f"python -c 'import torch; print(torch.cuda.get_arch_list())'   # no official ROCm wheel "
                         f"in hpcdoctor's knowledge ({known}) carries {target}: build torch from source with "
                         f"PYTORCH_ROCM_ARCH={target}, or ask the administrators for a module built for it")}
    return _pick(carries, target, None, False, "pip", config, python, current, companions, rocm=True)


def cuda_variants(minor: str, os_name: str = "linux", cpu: str = "x86_64",
                  config: Optional[Dict[str, Any]] = None) -> List[str]:
    """The CUDA versions of the official "+cuXYZ" wheels of torch ``minor`` on a platform, oldest
    first, as knowledge lists them; [] when it lists none (not known, or no such builds)."""
    v = version_of(minor)
    out = set()
    for w in wheel_table(config):
        lo, hi = _bounds(w)
        if lo is not None and hi is not None and v is not None and lo <= v < hi and _matches_platform(w, os_name, cpu):
            out.add(str(w["cuda"]))
    return sorted(out, key=version_of)


def cuda_tag(cuda: str) -> str:
    """'12.1' -> 'cu121', the local version and index name of that CUDA variant."""
    return "cu" + cuda.replace(".", "")


def cuda_of_tag(tag: str) -> Optional[str]:
    """'cu121' -> '12.1', 'cu92' -> '9.2'; None for anything else."""
    m = re.match(r"^cu(\d{1,2})(\d)$", str(tag or ""))
    return f"{int(m.group(1))}.{m.group(2)}" if m else None


# --- Whether torch's own official build carried a GPU: "no kernel image" torch's or an extension's ---

def release_arch_lists(release: str, cuda: Optional[str] = None, config: Optional[Dict[str, Any]] = None
                       ) -> List[Dict[str, Any]]:
    """The arch lists of the official Linux x86_64 wheels of torch ``release`` ("1.11.0", "1.7"): the
    one of its ``cuda`` variant ("11.3") where that is said, else every variant known. Reads
    [[wheel]] and [[old_wheel]] (1.7-1.13, never offered by the resolver); [] where none is known."""
    from packaging.specifiers import SpecifierSet

    m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", str(release or ""))
    if not m:
        return []
    v = version_of(f"{m.group(1)}.{m.group(2)}.{m.group(3) or 0}")
    rows = wheel_table(config) + list(knowledge.load("torch_wheels").get("old_wheel", []))
    found = [w for w in rows if _matches_platform(w, "linux", "x86_64") and v in SpecifierSet(w["torch"])
             and (cuda is None or w["cuda"] == cuda)]
    seen, out = set(), []
    for w in found:  # first match wins per variant, as in the resolver
        if w["cuda"] not in seen:
            seen.add(w["cuda"])
            out.append({"cuda": w["cuda"], "arch": list(w["arch"])})
    return out


def release_carries(cc: str, release: str, cuda: Optional[str] = None,
                    config: Optional[Dict[str, Any]] = None) -> Optional[bool]:
    """Whether torch ``release``'s official wheels (its ``cuda`` variant where said, else every variant
    known) carry compute capability ``cc`` (SASS of the same major at or below, or PTX: NVIDIA's binary
    compatibility): True where every list does, False where none does, None where unknown or split."""
    lists = release_arch_lists(release, cuda, config)
    if not lists:
        return None
    runs = {arch_supported(cc, w["arch"]) for w in lists}
    return runs.pop() if len(runs) == 1 else None


def series_past_end(version: str) -> Optional[Dict[str, Any]]:
    """A torch version past the last minor of an ended series ("1.15.0": 1.x ended at 1.13), which
    names no release at all: that series' entry (knowledge/torch_wheels.toml [[series]]), else None."""
    m = re.match(r"^\s*(\d+)\.(\d+)", str(version or ""))
    if not m:
        return None
    major, minor = int(m.group(1)), int(m.group(2))
    return next((s for s in knowledge.load("torch_wheels").get("series", [])
                 if s["major"] == major and minor > s["last_minor"]), None)
