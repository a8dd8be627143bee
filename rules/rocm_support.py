"""The ROCm release against AMD's own list of the GPUs it supports (knowledge/rocm_gpus.toml)."""

from __future__ import annotations

import re
from typing import Any, Dict, Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge import rocm_gpus
from hpcdoctor.rules._common import catalogued, first_symptom, told_evidence, told_text

# ROCm's environment-variable reference gives HSA_OVERRIDE_GFX_VERSION the values 11.0.0 and
# 10.3.0 ("used to enable HIP usage on unsupported hardware"): the version of gfx1100 and gfx1030,
# whose code a GPU of the same family (gfx1101..gfx1103, gfx1031..gfx1036) can then run.
_OVERRIDE = {"gfx103": ("10.3.0", "gfx1030"), "gfx110": ("11.0.0", "gfx1100")}


def _override(gfx: Optional[str], release: Dict[str, Any]) -> Optional[str]:
    if not gfx or not re.fullmatch(r"gfx1[01]\d[0-9a-f]", gfx):
        return None
    value, target = _OVERRIDE.get(gfx[:6], (None, None))
    ok = rocm_gpus.supported_gfx(release)
    if value is None or target == gfx or target not in ok:
        return None
    return (f"export HSA_OVERRIDE_GFX_VERSION={value}   # runs {target} code on this {gfx}: ROCm's reference "
            "calls it a way to use HIP on unsupported hardware, not support; unset it once on a listed GPU")


def _fix(name: str, j: Dict[str, Any]) -> str:
    r = j["release"]
    listed = ", ".join(rocm_gpus.listed(r))
    if r.get("os") == "windows":
        # The HIP SDK for Windows has neither rocminfo nor amd-smi; its hipInfo prints the target.
        where = (f"AMD's list has it in HIP SDK {', '.join(j['supported_by'])}: install that release"
                 if j["supported_by"] else f"the GPUs HIP SDK {r['series']} supports are {listed}")
        return ("hipInfo.exe | findstr /i gcnArchName   # this GPU's target, where the HIP runtime sees it\n"
                f"# {where} (AMD's Windows system requirements, "
                "https://rocm.docs.amd.com/projects/install-on-windows/en/latest/reference/system-requirements.html)")
    lines = ["rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # this GPU's target"]
    over = _override(j.get("gfx"), r)
    if over:
        lines.append(over)
    if j["supported_by"]:
        lines.append(f"amd-smi version   # ROCm {r['series']} here; AMD's list has this GPU in ROCm "
                     f"{', '.join(j['supported_by'])}: use that release (or its container image)")
    else:
        what = "GPUs" if r.get("gpu") else "GPU targets"
        lines.append(f"amd-smi version   # ROCm {r['series']} here; no ROCm list read lists this GPU: its supported {what} are {listed}")
    return "\n".join(lines)


def _message(name: str, j: Dict[str, Any], where: str) -> str:
    r = j["release"]
    if r.get("os") == "windows":
        return _windows_message(name, j, where)
    if j["why"] == "listed-unsupported":
        said = f"AMD's list for ROCm {r['series']} marks {j['entry']['name']} ({j['gfx']}) {j['entry']['support']}"
    elif j["why"] == "gfx-unlisted" and not r.get("gpu"):
        said = (f"AMD's compatibility matrix for ROCm {r['series']} lists the GPU targets {', '.join(r['targets'])}, "
                f"not {name}'s {j['gfx']}")
    elif j["why"] == "gfx-unlisted":
        said = f"AMD's list for ROCm {r['series']} has no GPU of {name}'s target {j['gfx']}"
    else:
        said = f"AMD's list for ROCm {r['series']} does not name {name} (\"If a GPU is not listed on this table, it's not officially supported by AMD\")"
    return (f"{said}{where}: ROCm's libraries may carry no code for it. Unsupported is not always unusable: "
            "consumer GPUs of a listed family often run with HSA_OVERRIDE_GFX_VERSION")


@rule("SW053", "rocm-gpu-not-in-release", "warning",
      "the ROCm release does not list this AMD GPU among those it supports", impact=7,
      also={"error": "the paste also shows the HIP runtime finding no code object for the GPU"})
def rocm_gpu_not_in_release(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A ROCm release (amd-smi version on the node; in a paste an /opt/rocm-X.Y path, rocminfo's
        "rocminfo-rocm-5.3.0" source path, a "rocm-hip-libraries 5.4.3" package, a +rocm6.2 wheel,
        libamdhip64.so.5.4.x) and an AMD GPU (amd-smi's gfx target on the node; in a paste lspci's
        "[AMD/ATI]" line or a Radeon/Instinct name) that AMD's "Supported GPUs" table for that release
        does not list, or lists as unsupported (knowledge/rocm_gpus.toml, one entry per release
        series read; where only AMD's compatibility matrix was read, its list of gfx targets). A GPU the release lists, or one of a gfx target it lists, is never reported;
        a release whose table was not read is unknown. Where the paste says Windows (and not
        WSL), the HIP SDK for Windows' own list of the release is the one read ("supported",
        "runtime-only", or not named). With no release named, a target rocBLAS
        names ("... for GPU arch : gfx90c") that no list read supports while they list newer
        targets of its generation (an APU, a retired consumer GPU): no release to move to.

    Why it matters:
        AMD builds ROCm's libraries (rocBLAS, MIOpen, the torch wheels' kernels) for the listed
        targets only. An unlisted GPU shows as segfaults, "invalid device function",
        hipErrorNoBinaryForGpu or an HSA runtime that cannot start, which look like bugs.
        Unsupported is not always unusable: GPUs of a listed family (gfx1031 beside gfx1030)
        often run with HSA_OVERRIDE_GFX_VERSION, at the user's risk; older ones (gfx803, APUs) do not.

    How to fix:
        Use a release whose table lists the GPU (the fix names it where one read does), or run
        on a listed GPU; for a GPU of a listed family, HSA_OVERRIDE_GFX_VERSION as ROCm's
        environment-variable reference gives it (10.3.0, 11.0.0).

    References:
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
        - https://github.com/ROCm/rocm-install-on-linux/blob/5a31cf41cfd370ea20e6f81d05c67543c7701336/docs/reference/system-requirements.rst
        - https://github.com/ROCm/ROCm/blob/rocm-5.7.1/docs/release/gpu_os_support.md
        - https://github.com/ROCm/ROCm/blob/rocm-6.3.3/docs/compatibility/compatibility-matrix.rst (6.3, 7.1, 7.2: targets only)
        - https://rocm.docs.amd.com/en/latest/reference/env-variables.html (HSA_OVERRIDE_GFX_VERSION)
        - https://github.com/ROCm/rocm-install-on-windows/blob/f0e1bb840ed6e7dd3f76c08a6dc289a04d83a79c/docs/reference/system-requirements.rst (the HIP SDK 6.2 for Windows)
    """
    failed = next(iter(catalogued(f, "torch-rocm-missing-gfx")), None)
    amd = [g for g in f.gpus() if g.get("vendor") == "amd"]
    if amd:
        series = _read(rocm_gpus.series_of(f["amd.rocm_version"]), "amd.rocm_version")
        for g in amd:
            j = rocm_gpus.judge(series, name=g.get("name"), gfx=g.get("gfx_target"))
            if j:
                yield _hit(str(g.get("name") or g.get("gfx_target")), j, f" (amd-smi: ROCm {f.get('amd.rocm_version')})",
                           {"gpu.name": g.get("name"), "gpu.gfx_target": g.get("gfx_target"),
                            "amd.rocm_version": f.get("amd.rocm_version")}, failed, f"GPU {g.get('index')}")
                return
        return
    if f.gpus():
        return  # the GPUs listed are not AMD's: a name in the text is not this node's
    series = {v["series"]: v for v in f.get("ticket.rocm_versions") or []}
    if not series:
        yield from _target_never_supported(f)
        return
    if len(series) != 1:
        return  # several releases named: which one runs is not known
    (v,) = series.values()
    # The HIP SDK for Windows has lists of its own; WSL runs Linux's ROCm.
    windows = first_symptom(f, "prose:windows-said") is not None and first_symptom(f, "prose:wsl-said") is None
    if _torch_devices(f) or f.get("ticket.amd_gpus_named"):
        _read(v["series"], "ticket.rocm_versions", windows)  # a GPU to judge: an unread release is unknown
    for g in _torch_devices(f):
        j = _judge(v["series"], windows, name=g["name"], gfx=g["gfx"])
        if j:
            where = f" (line {v.get('line')}: \"{v.get('text')}\"; collect_env: {g['name']} ({g['gfx']}))"
            yield _hit(g["name"], j, where, {"rocm_version": v, "torch.gpu_models": g["model"]}, failed, g["name"])
            return
    for g in f.get("ticket.amd_gpus_named") or []:
        judged = [_judge(v["series"], windows, name=n) for n in g.get("names") or []]
        if judged and all(judged):
            where = f" (line {v.get('line')}: \"{v.get('text')}\"; line {g.get('line')}: \"{g.get('text')}\")"
            yield _hit(g["gpu"], judged[0], where, {"rocm_version": v, "gpu_named": g}, failed, g["gpu"])
            return


def _judge(series: str, windows: bool, **gpu: Optional[str]) -> Optional[Dict[str, Any]]:
    """rocm_gpus.judge on the paste's platform. On Windows the GPU must be one Linux's list of the
    release does not support either: a paste that names Windows in passing may come from a Linux node."""
    j = rocm_gpus.judge(series, windows=windows, **gpu)
    if j and windows and rocm_gpus.release(series) is not None and rocm_gpus.judge(series, **gpu) is None:
        return None
    return j


def _target_never_supported(f: FactView) -> Iterator[Hit]:
    """With no release named: a GPU target that rocBLAS names ("... for GPU arch : gfx90c") and that no
    release's list read supports, though it lists newer targets of the same generation (an APU, a
    retired consumer GPU): no release to move to, whichever runs."""
    for s in catalogued(f, "rocblas-tensile-library-missing"):
        gfx = str(s.get("arch") or "")
        read = rocm_gpus.never_supported(gfx)
        if read:
            yield Hit(message=f"rocBLAS ran on a GPU of target {gfx} (line {s.get('line')}: \"{told_text(s)}\"), which no "
                              f"ROCm release whose supported-GPU list was read ({read[0]} to {read[-1]}) supports, though "
                              "they list newer targets of its generation: ROCm's libraries carry no kernels for it",
                      fix=(f"rocminfo | grep -o -m1 'gfx[0-9a-f]*'   # {gfx}: no ROCm release from {read[0]} to {read[-1]} "
                           "lists it\n"
                           "# run on a GPU AMD's list for the installed ROCm names (amd-smi version; "
                           "https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html), "
                           "or on the CPU"),
                      evidence={**told_evidence(s), "gfx": gfx, "table": "knowledge/rocm_gpus.toml"})
            return


def _read(series: Optional[str], path: str, windows: bool = False) -> str:
    """The series, where AMD's list for it was read; else the rule cannot judge (never a pass)."""
    if rocm_gpus.release(series, windows) is None:
        have = ", ".join(r["series"] for r in rocm_gpus.load_releases(windows))
        which = "the HIP SDK for Windows" if windows else "ROCm"
        raise MissingFact(path, f"AMD's supported-GPU list for {which} {series or '(not a version)'} is not in "
                                f"knowledge/rocm_gpus.toml (read: {have})")
    return str(series)


def _torch_devices(f: FactView) -> List[Dict[str, str]]:
    """The device a pasted ROCm collect_env names with its gcnArchName, "AMD Instinct MI210
    (gfx90a:sramecc+:xnack-)" (torch/utils/collect_env.py get_gpu_info): its gfx target is known."""
    out = []
    for model in f.get("torch.gpu_models") or []:
        m = re.match(r"^(.{1,80}?)\s{0,3}\((gfx[0-9a-f]{3,4})(?::[a-z]{1,8}[+-]){0,4}\)$", str(model).strip())
        if m:
            out.append({"name": m.group(1), "gfx": m.group(2), "model": str(model)})
    return out


def _windows_message(name: str, j: Dict[str, Any], where: str) -> str:
    r = j["release"]
    if j["why"] == "listed-unsupported":
        said = (f"AMD's list for the HIP SDK {r['series']} on Windows marks {j['entry']['name']} ({j['gfx']}) "
                f"{j['entry']['support']}")
    else:
        said = (f"AMD's list for the HIP SDK {r['series']} on Windows does not name {name} (\"If a GPU is not listed "
                "on this table, it is not officially supported by AMD\")")
    return f"{said}{where}: the HIP runtime and the SDK's libraries may not run on it"


def _hit(name: str, j: Dict[str, Any], where: str, evidence: Dict[str, Any], failed: Any, subject: str) -> Hit:
    message = _message(name, j, where)
    severity = None
    if failed is not None:
        message += f"; and the HIP runtime found no code object for it (line {failed.get('line')}: \"{told_text(failed)}\")"
        severity = "error"
        evidence = {**evidence, **told_evidence(failed)}
    return Hit(message=message, fix=_fix(name, j), subject=subject, severity=severity,
               evidence={**evidence, "table": "knowledge/rocm_gpus.toml", "source": j["release"]["source"]})
