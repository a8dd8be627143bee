"""The Python/AI stack a job would load: torch and its CUDA/ROCm libraries, asked of the target
interpreter by a payload, never imported here.

The fast depth reads package metadata only; what it cannot ask (the TF32 defaults of a release)
comes from knowledge and is marked so. The deep depth imports torch in the target interpreter and
initialises the GPU runtime. Replays fall back to a recorded ``collect_env`` when no payload
result is present.
"""

from __future__ import annotations

import importlib.util
import re
import os
import shutil
import sys
from pathlib import Path

import hpcdoctor
from typing import Any, Dict, Optional

from hpcdoctor.checks._report import environment_report, listed_environ
from hpcdoctor import jsonbound
from hpcdoctor.facts import Unknown
from hpcdoctor.parse.torch_config import parse_config
from hpcdoctor.sysroot import Missing, SysRoot, run_process

NAME = "torch_stack"
PROVIDES = ("torch",)
# The payloads ship inside the hpcdoctor package, wherever the checks folder is mapped from.
PAYLOAD = Path(hpcdoctor.__file__).resolve().parent / "payload" / "torch_probe.py"
FAST_TIMEOUT = 10.0
DEEP_TIMEOUT = 90.0


def timeout(options: Any) -> float:
    return (DEEP_TIMEOUT if options.depth == "deep" else FAST_TIMEOUT) + 2.0


def target_python(options: Any) -> Optional[str]:
    """The interpreter a job would run: --python, else the first python3 on PATH."""
    if options.python:
        return options.python
    return shutil.which("python3") or shutil.which("python")


def chosen_here(facts: Dict[str, Any], options: Any) -> None:
    """How the interpreter was chosen, and, when python3 on PATH has no torch but the one running
    hpcdoctor has (a venv's hpcdoctor run without activating the venv), that one: it is most
    likely the job's. Live runs only: a replay says nothing about the replaying machine."""
    facts["chosen_by"] = "--python" if options.python else "python3 on PATH"
    if options.python or facts.get("installed") or not sys.executable:
        return
    # Paths, not resolved files: a venv's python is a link to the very binary it differs from.
    if os.path.abspath(sys.executable) == os.path.abspath(str(facts.get("target_python") or "")):
        return
    if importlib.util.find_spec("torch") is None:  # finds the package, imports nothing
        return
    from importlib import metadata  # here, not at the top: ~10 ms of every start for a rare case

    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        version = None
    facts["own_python"] = {"path": sys.executable, "torch": version}


def run_payload(python: str, depth: str, limit: float, budget: Optional[float] = None) -> Dict[str, Any]:
    """``budget``: the run's --budget, where it and not the probe's own limit cut ``limit`` short."""
    if os.sep in python and not os.path.exists(python):
        raise Missing(f"{python} does not exist")
    argv = [python, str(PAYLOAD)] + (["--deep"] if depth == "deep" else [])
    res = run_process(argv, timeout=limit)
    if res.rc == 124 and budget is not None:
        raise Missing(f"the torch probe in {python} was stopped by the {budget:g}s budget")
    if res.rc == 124:
        raise Missing(f"the torch probe in {python} did not finish within {limit:.0f}s"
                      + (" (torch import or GPU initialisation hung)" if depth == "deep" else ""))
    return payload_result(res, python, "the torch probe")


def payload_result(res: Any, python: str, what: str) -> Dict[str, Any]:
    """The JSON object a payload printed, or Missing with the reason it printed none."""
    if res.rc in (126, 127):
        raise Missing(f"{python} cannot be run: {res.stderr.strip()}")
    try:
        data = jsonbound.loads(res.stdout)
    except ValueError as exc:
        if "nested deeper" in str(exc):
            raise Missing(f"{what} in {python} printed {exc}") from None
        lines = res.stderr.strip().splitlines() or ["no output"]
        # CPython's own fatal start-up error (a PYTHONHOME or PYTHONPATH of another installation) ends
        # with a thread dump; its first line is what says why.
        tail = next((ln for ln in lines if ln.startswith("Fatal Python error: ")), lines[-1])[:300]
        raise Missing(f"{what} failed in {python} (exit {res.rc}): {tail}") from None
    if not isinstance(data, dict):
        raise Missing(f"{what} printed something other than a JSON object")
    # A pyenv/asdf shim or a wrapper script is not the interpreter: name the one that ran.
    exe = data.get("executable")
    data["target_python"] = exe if isinstance(exe, str) and exe else python
    if data["target_python"] != python:
        data["invoked_as"] = python
    return data


WHEEL_LIBS = {"cudnn": "nvidia-cudnn-", "nccl": "nvidia-nccl-", "cublas": "nvidia-cublas",
              "cuda_runtime": "nvidia-cuda-runtime", "rccl": "rccl"}


def wheel_libraries(packages: Dict[str, str]) -> Dict[str, str]:
    """Versions of the CUDA libraries that pip wheels put beside torch: what torch loads when they
    are present, whatever the system has in /usr/lib."""
    found = {}
    for lib, prefix in WHEEL_LIBS.items():
        for name in sorted(packages):
            if name.startswith(prefix):
                found[lib] = ".".join(packages[name].split(".")[:3])
                break
    return found


def cudnn_version(value: Any) -> Any:
    """torch.backends.cudnn.version() is an int: 91900 is 9.19.0, 8902 is 8.9.2."""
    if isinstance(value, int) and value > 0:
        if value >= 90000:
            return f"{value // 10000}.{value % 10000 // 100}.{value % 100}"
        return f"{value // 1000}.{value % 1000 // 100}.{value % 100}"
    return value


def _build_kind(t: Dict[str, Any]) -> Optional[str]:
    if t.get("platform") in ("cuda", "rocm"):
        return t["platform"]  # sglang's check_env: the build is known, its CUDA version may not be
    if t.get("hip"):
        return "rocm"
    if t.get("cuda"):
        return "cuda"
    if isinstance(t.get("hip"), Unknown) or isinstance(t.get("cuda"), Unknown):
        # A pasted report whose build line was broken: only the wheel's own tag still tells.
        m = re.search(r"\+(cpu|cu(?=\d)|rocm(?=\d))", str(t.get("version") or ""))
        return {"cpu": "cpu", "cu": "cuda", "rocm": "rocm"}[m.group(1)] if m else None
    if t.get("version"):
        return "cpu"
    return None


def from_payload(data: Dict[str, Any], env: Dict[str, str]) -> Dict[str, Any]:
    t = dict(data.get("torch") or {})
    out: Dict[str, Any] = {
        "source": f"payload ({data.get('depth', 'fast')})",
        "depth": data.get("depth", "fast"),
        "target_python": data.get("target_python"),
        "invoked_as": data.get("invoked_as"),
        "python_version": data.get("python"),
        "virtualenv": data.get("virtualenv"),
        "conda": data.get("conda"),
        "installed": bool(t.get("version")),
        "installs": data.get("torch_installs", []),
        "packages": data.get("packages", {}),
        "site_fs": data.get("torch_mount"),
        "visible_devices": data.get("env", {}),
    }
    if data.get("conda_packages") is not None:
        out["conda_packages"] = data["conda_packages"]
    # Where the interpreter's imports come from: the user's site directory, and packages installed
    # twice whose first copy hides the other (host-python-env-in-container reads them).
    if isinstance(data.get("user_site"), dict):
        out["user_site"] = data["user_site"]
    if isinstance(data.get("shadowed"), list):
        out["shadowed"] = [s for s in data["shadowed"] if isinstance(s, dict)]
    for key in ("version", "cuda", "hip", "git_version", "path", "cudnn", "nccl", "arch_list", "cuda_available",
                "device_count", "devices", "float32_matmul_precision", "matmul_allow_tf32", "cudnn_allow_tf32",
                "num_threads", "num_interop_threads", "mkldnn", "mkl", "openmp", "cpu_capability", "acl",
                "cuda_init_s", "errors"):
        if key in t:
            out[key] = t[key]
    out["build"] = _build_kind(t)
    if "cudnn" in out:
        out["cudnn"] = cudnn_version(out["cudnn"])
    libs = wheel_libraries(out["packages"])
    out["wheel_libraries"] = libs
    for key in ("cudnn", "nccl"):
        if out.get(key) is None and key in libs and out["build"] == "cuda":
            out[key] = libs[key]
    if "config" in t and isinstance(t["config"], str):
        out["config"] = parse_config(t["config"])
        if "acl" not in out and "use_mkldnn_acl" in out["config"]:
            out["acl"] = out["config"]["use_mkldnn_acl"]
    if data.get("import_error"):
        out["import_error"] = data["import_error"]
    if "import_s" in data:
        out["import_s"] = data["import_s"]
    if data.get("loaded_libraries") is not None:
        out["loaded_libraries"] = data["loaded_libraries"]
        if "acl" not in out and out.get("config") is not None:
            out["acl"] = "libarm_compute" in data["loaded_libraries"]
    if data.get("payload_error"):
        out["payload_error"] = data["payload_error"]
    if out["depth"] == "fast" and out["installed"]:
        _fill_defaults(out, env)
    return out


def _fill_defaults(out: Dict[str, Any], env: Dict[str, str]) -> None:
    """What the fast depth cannot ask torch: its documented defaults, said to be knowledge.

    Since 1.12 torch leaves TF32 off for matmuls (float32 matmul precision "highest") and on for
    cuDNN convolutions; TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 turns matmul TF32 on for the process,
    NVIDIA_TF32_OVERRIDE=0 turns TF32 off in the libraries whatever torch asks.
    """
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(str(out["version"]).split("+")[0])
    except InvalidVersion:
        return
    if release < Version("1.12"):
        matmul = True
    else:
        matmul = env.get("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1"
    if env.get("NVIDIA_TF32_OVERRIDE") == "0":
        matmul = False
    out["matmul_allow_tf32"] = matmul
    out["float32_matmul_precision"] = "high" if matmul else "highest"
    out["cudnn_allow_tf32"] = env.get("NVIDIA_TF32_OVERRIDE") != "0"
    out["from_knowledge"] = ["matmul_allow_tf32", "float32_matmul_precision", "cudnn_allow_tf32"]


def from_collect_env(root: SysRoot) -> Dict[str, Any]:
    res, parsed = environment_report(root)
    source = "sglang check_env" if parsed.get("format") == "sglang" else "collect_env"
    if not parsed.get("recognised"):
        if res.rc != 0 and "No module named 'torch'" in (res.stdout + res.stderr):
            return {"source": source, "installed": False, "version": None}
        raise Missing(f"{source} output not usable ({res.why_failed() if res.rc else 'unrecognised text'})")
    t = parsed["torch"]
    t["source"] = source
    # A pasted library list alone says torch is there (pip's or conda's record), not which one imports.
    t["installed"] = True if t.get("version") or "torch" in t.get("pip", {}) or "pytorch" in t.get("conda_list", {}) \
        else Unknown("the report names no torch")
    libs = wheel_libraries(t.get("pip", {}))
    t["wheel_libraries"] = libs
    for key in ("cudnn", "nccl"):
        if key in libs:
            t[key] = libs[key]
    if t.get("version"):
        # A pasted vLLM report lists the TORCH* and NVIDIA* variables that decide TF32.
        listed = listed_environ(root)
        _fill_defaults(t, listed["vars"] if listed else root.environ())
        from hpcdoctor.knowledge import wheels

        platform = f"{t.get('os') or ''} {t.get('python_platform') or ''}".lower()
        os_name = "windows" if "windows" in platform else "linux"
        cpu = "aarch64" if "aarch64" in platform or "arm64" in platform else "x86_64"
        wheel = wheels.wheel_arch_list(str(t["version"]), os_name, cpu)
        if wheel and "arch_list" not in t:
            t["arch_list"] = wheel["arch"]
            t.setdefault("from_knowledge", []).append("arch_list")
        elif "arch_list" not in t and re.search(r"\+(cu\d{2,3}|rocm\d)", str(t["version"])):
            # A wheel named by its tag whose list knowledge lacks (Windows 2.6-2.8, ROCm before 2.2, a
            # nightly): the rules that need the list say they could not judge, rather than pass.
            t["arch_list"] = Unknown(f"the report names the wheel ({t['version']}), not its arch list, and "
                                     f"hpcdoctor has no sourced arch list for it on {os_name.title()} {cpu} "
                                     "(knowledge/torch_wheels.toml)")
    t["build"] = _build_kind(t)
    return t


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    options = ctx.options
    env = root.environ()
    python = target_python(options) if root.mode != "replay" else "python3"
    own = DEEP_TIMEOUT if options.depth == "deep" else FAST_TIMEOUT
    limit = ctx.remaining(own)
    budget = options.budget if limit < own else None
    try:
        if python is None:
            raise Missing("no python3 on PATH (pass --python)")
        data = root.probe("torch_stack", lambda: run_payload(python, options.depth, limit, budget))
        facts = from_payload(data, env)
        if root.mode == "live":
            chosen_here(facts, options)
        return {"torch": facts}
    except Missing as payload_exc:
        if root.mode != "replay":
            return {"torch": Unknown(str(payload_exc))}
        try:
            return {"torch": from_collect_env(root)}
        except Missing as exc:
            return {"torch": Unknown(f"{payload_exc}; {exc}")}
