"""The software a job loads: the torch build against the GPUs and the driver, and its libraries."""

from __future__ import annotations

import re

from hpcdoctor import knowledge
from hpcdoctor.knowledge import gpus as gpu_table, wheels
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import MissingFact
from hpcdoctor.rules._common import catalogued, ticket_all, ticket_evidence, ticket_symptoms, told_evidence, version_of


def _cuda_gpus(f):
    return [g for g in f.gpus() if g.get("vendor") == "nvidia"]


@rule("SW001", "torch-import-failed", "error", "torch cannot be imported", impact=10)
def torch_import_failed(f):
    """
    What it detects:
        The job's interpreter fails to import torch; the message is the real exception (a missing
        libcudnn, an undefined symbol from a mixed install, a NumPy ABI mismatch).

    Why it matters:
        The job dies at its first line. The exception text names the cause far more precisely than
        the traceback users usually paste.

    How to fix:
        Reinstall torch in a clean environment (python -m venv; pip install torch), or load the
        module the site provides; for "cannot open shared object file", make sure no
        LD_LIBRARY_PATH entry shadows the libraries the wheel brings.

    References:
        - 001_dd2fe1913b91ca0a.txt (installing PyTorch in a virtual environment)
    """
    yield from _facts_or_ticket(lambda: list(_import_failed_from_facts(f)), _import_failed_in_ticket(f))


def _import_failed_from_facts(f):
    err = f["torch"].get("import_error")
    if err:
        yield Hit(message=f"import torch fails in {f.get('torch.target_python') or 'the job interpreter'}: {err}",
                  fix="# reinstall torch in a fresh virtual environment, and check LD_LIBRARY_PATH for shadowing libraries",
                  evidence={"torch.import_error": err, "torch.target_python": f.get("torch.target_python")})


def _import_failed_in_ticket(f):
    """A pasted import traceback: the loader's error names the library torch could not load."""
    sym = ticket_symptoms(f)
    hit = sym.get("import-missing-library") or sym.get("import-undefined-symbol")
    if hit is None:
        return
    lib = hit.get("library")
    # The loader's own words point at a library path that shadows the wheel's: try without it first.
    fix = ("unset LD_LIBRARY_PATH; python3 -c 'import torch'   "
           "# if it still fails, reinstall torch in a fresh virtual environment")
    why = f"{lib} was not found" if lib else "a library was loaded from another build than torch was linked against"
    yield Hit(message=f"import torch fails: {why} ({hit['error'][:200]}, line {hit['line']})", fix=fix,
              evidence={**ticket_evidence(hit), "torch.import_error": hit["error"][:300], "library": lib})


@rule("SW002", "torch-cpu-only", "error", "a CPU-only torch build on a node with GPUs", impact=10,
      also={"warning": "torch said it was built without CUDA, and the paste shows no GPU listing to confirm one is there"})
def torch_cpu_only(f):
    """
    What it detects:
        A torch build without CUDA or ROCm (a "+cpu" wheel, conda's cpu_mkl build, the cpuonly
        package) on a node where GPUs are present. In a pasted ticket, torch's own "Torch not
        compiled with CUDA enabled": an error beside a GPU listing, a warning without one (a
        machine without an NVIDIA GPU says it too), nothing beside a listing with no GPU.

    Why it matters:
        torch.cuda.is_available() is False and everything runs on the CPU, tens of times slower,
        often without an error: the job only seems slow. Conda often resolves the CPU build when
        the CUDA channel or a matching pytorch-cuda package is missing.

    How to fix:
        Install the CUDA build nearest the installed release that this node's driver, GPU, OS, CPU
        architecture and Python run, which the fix names with the torchvision/torchaudio releases
        built for it (hpcdoctor.knowledge.wheels, from knowledge/torch_wheels.toml and cuda.toml),
        e.g. pip install --force-reinstall "torch>=2.11,<2.12" "torchvision>=0.26,<0.27"
        --index-url https://download.pytorch.org/whl/cu130; or the site's PyTorch module. PyTorch publishes no conda packages after 2.5: in a conda
        env, remove conda's pytorch and use pip inside the env.

    References:
        - 002_4b90f9ad31dff33f.txt (ARC4: the conda cpu_mkl build of PyTorch)
        - 001_dd2fe1913b91ca0a.txt (installing the GPU build)
        - https://github.com/pytorch/pytorch/issues/138506 (no conda packages after 2.5)
    """
    told = catalogued(f, "torch-cpu-only")
    try:
        t = f["torch"]
        gpus = f["gpus"]
    except MissingFact:
        if not told:
            raise
        yield from _cpu_build_told(f, told[0])
        return
    if not gpus or not t.get("installed"):
        return
    conda = (t.get("conda_packages") or {}).get("pytorch") or (t.get("conda_list") or {}).get("pytorch") or {}
    cpu_build = t.get("build") == "cpu" or "cpu" in str(conda.get("build", "")) or "cpuonly" in (t.get("conda_packages") or {})
    if cpu_build:
        kinds = sorted({g.get("vendor") for g in gpus})
        yield Hit(message=f"torch {t.get('version')} is a CPU-only build, but this node has {len(gpus)} "
                          f"{'/'.join(kinds)} GPU(s): everything runs on the CPU",
                  fix=_build_fix(f, gpus),
                  evidence={"torch.version": t.get("version"), "torch.build": t.get("build"),
                            "conda.pytorch": conda or None, "gpus": len(gpus)})


def _cpu_build_told(f, s):
    """torch's own "Torch not compiled with CUDA enabled": the build is CPU-only and the job asked
    it for CUDA. With the node's GPUs listed it is the error above; without, a warning, since a
    machine with no NVIDIA GPU (a laptop, a Mac) raises it too, where the program is what to change."""
    gpus = f.get("gpus")
    if isinstance(gpus, list) and not gpus:
        return  # a listing with no GPU: the program asked a machine without one for CUDA
    said = f"line {s.get('line')}: \"{str(s.get('text', '')).strip()[:100]}\""
    check = ("python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'   "
             "# None: a CPU build in this environment")
    if gpus:
        yield Hit(message=f"torch says it was built without CUDA ({said}), and this node has {len(gpus)} GPU(s)",
                  fix=f"{check}\n{_build_fix(f, gpus)}", evidence=ticket_evidence(s))
        return
    yield Hit(message=f"torch says it was built without CUDA ({said}): this environment's torch is a CPU-only build "
                      "and the job asked it for CUDA. On a machine with an NVIDIA GPU, install a CUDA build; on one "
                      "without (a Mac, a CPU node), the program must use the CPU or MPS",
              severity="warning", fix=f"{check}\nnvidia-smi   # the driver a CUDA build must run on; none: no NVIDIA GPU here",
              evidence=ticket_evidence(s))


arch_supported = wheels.arch_supported


@rule("SW003", "torch-missing-arch", "error", "the torch build has no kernels for this GPU", impact=10)
def torch_missing_arch(f):
    """
    What it detects:
        An NVIDIA GPU whose compute capability is not covered by the torch build's arch list: no
        binary for that architecture and no PTX old enough to be compiled for it. In a pasted
        ticket without an environment report, torch's own warnings say it ("... with CUDA
        capability sm_120 is not compatible ...", then the build's arch list; "... which is of
        cuda capability 3.5 ... minimum ... is 3.7"; from 2.8 "... compute capability (CC) 7.0"
        and the CCs the build supports); on ROCm, "HIP error: invalid device function", a kernel
        without a code object for the GPU's gfx target. On Turing (7.5) under a torch built with
        CUDA 9.0 or older, torch's "cublas runtime error : the GPU program failed to execute": the
        build's sm_70 kernels run there, its cuBLAS does not (PyTorch's maintainers). Where nothing
        else names the architectures, CUDA's own "no kernel image is available for execution on
        the device" (error 209) raised through torch's check ("CUDA error: ..." or, before 1.5,
        "cuda runtime error (48) : ..."); a framework's kernels saying it in their own words are
        framework-missing-arch's.

    Why it matters:
        CUDA calls fail with "no kernel image is available for execution on the device", and torch
        warns "... with CUDA capability sm_120 is not compatible with the current PyTorch
        installation". Old builds lack new GPUs (Blackwell needs CUDA 12.8+ wheels); new builds
        drop old ones (Kepler, Maxwell, then Volta).

    How to fix:
        Install a build that lists the GPU's architecture: a newer CUDA variant for new GPUs, an
        older torch release for retired ones. The fix names the official wheels that run it, from
        knowledge/torch_wheels.toml.

    References:
        - 001_dd2fe1913b91ca0a.txt ("no kernel image is available for execution on the device")
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility
        - https://github.com/pytorch/pytorch/issues/18620 (CUDA 10 for RTX cards: cuBLAS of CUDA 9)
    """
    symptoms = ticket_symptoms(f)

    def from_ticket():
        if "sm-not-compatible" in symptoms:
            yield _missing_arch_from_warning(f, symptoms)
        elif "hip-invalid-device-function" in symptoms:
            s = symptoms["hip-invalid-device-function"]
            yield Hit(message=f"a HIP kernel has no code object for this GPU's gfx target (line {s['line']}: "
                              "\"HIP error: invalid device function\"): the ROCm build's arch list lacks the GPU",
                      fix="rocminfo | grep -m1 gfx; python -c 'import torch; print(torch.cuda.get_arch_list())'   "
                          "# then install a ROCm build of torch whose list has that gfx",
                      evidence=ticket_evidence(s))
        elif {"gpu-cc-old-form", "gpu-cc-list-form"} & set(symptoms):
            yield from _missing_arch_from_cc_warning(f, symptoms)
        else:
            cublas = list(_cublas_on_turing(f, symptoms))
            named = cublas or list(_missing_arch_from_named_build(f, symptoms))
            yield from named or _missing_arch_told(f)

    yield from _facts_or_ticket(lambda: list(_missing_arch_from_facts(f)), from_ticket())


def _cublas_on_turing(f, symptoms):
    """torch's "cublas runtime error : the GPU program failed to execute" on a Turing GPU (7.5)
    under a torch built with CUDA 9.0 or older, read from collect_env ("CUDA used to build
    PyTorch: 9.0.176") or a wheel named with its tag (+cu90): its kernels run there by binary
    compatibility, its cuBLAS does not (knowledge/frameworks.toml, cublas_turing). A CUDA version
    named in prose says nothing of the build and is not read."""
    s = symptoms.get("cublas-execution-failed")
    gpu = _gpu_of_ticket(f) if s else None
    if gpu is None:
        return
    known = knowledge.load("frameworks")["cublas_turing"]
    if gpu["cc"] != known["cc"]:
        return
    named = symptoms.get("torch-build-named")
    build = f.get("torch.cuda")
    if build:
        where = f"torch is built with CUDA {build}"
    elif named:
        build = f"{named['cu'][:-1]}.{named['cu'][-1]}"
        where = f"torch {named['torch']}+cu{named['cu']} (line {named['line']}) is built with CUDA {build}"
    else:
        return
    release = version_of(str(build))
    if release is None or version_of(".".join(map(str, release.release[:2]))) > version_of(known["fails_up_to_cuda"]):
        return
    yield Hit(message=f"cuBLAS failed on {gpu['name']} (compute capability {gpu['cc']}, Turing; line {s['line']}: "
                      f"\"cublas runtime error : the GPU program failed to execute\"), and {where}: Turing needs a "
                      f"CUDA {known['needs_cuda']}+ build of torch (PyTorch's maintainers, pytorch#18620); its sm_70 "
                      "kernels run there, its CUDA 9 cuBLAS does not",
              fix=_build_fix(f, [{"compute_capability": gpu["cc"]}]),
              evidence={**ticket_evidence(s), "compute_capability": gpu["cc"], "torch.cuda": str(build)})


# torch's own CUDA checks print the runtime's text after these words (C10_CUDA_CHECK since 1.5,
# THCudaCheck before): a framework's kernels say it in their own words ("RMSNorm failed with error
# code ...") and are framework-missing-arch's.
_TORCH_CHECK_WORDS = ("CUDA error: ", "HIP error: ", "cuda runtime error (", "THCudaCheck FAIL")


def _missing_arch_told(f):
    """CUDA's "no kernel image is available for execution on the device" (or "invalid device
    function") raised through torch's own check, with nothing else in the ticket naming the
    architectures: the build, or an extension built against it, has no code for this GPU."""
    for s in catalogued(f, "torch-missing-arch"):
        if s.get("family") not in ("cuda", "hip") or not any(w in str(s.get("text", "")) for w in _TORCH_CHECK_WORDS):
            continue
        gpu = _gpu_of_ticket(f)
        if gpu:
            fix = _build_fix(f, [{"compute_capability": gpu["cc"]}])
            about = f"{gpu['name']} (compute capability {gpu['cc']})"
        else:
            fix = ("python -c 'import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())'"
                   "   # the GPU's sm_XY must be in the list: else install a torch build that lists it")
            about = "this GPU"
        yield Hit(message=f"a CUDA kernel has no code for {about} (line {s.get('line')}: \"{s.get('message') or s.get('key')}\"): "
                          "the torch build, or an extension built against it, lacks the GPU's architecture",
                  fix=fix, evidence=told_evidence(s))
        return


def _missing_arch_from_named_build(f, symptoms):
    """A torch wheel named with its CUDA tag ("torch==1.7.1+cu101") and a GPU named in the same
    ticket: a build whose CUDA predates every architecture of the GPU's major carries no code for
    it (knowledge/frameworks.toml [toolkit_arch]). Majors the table does not reach stay unjudged."""
    named = symptoms.get("torch-build-named")
    gpu = _gpu_of_ticket(f) if named else None
    if gpu is None:
        return
    cu = named["cu"]
    build_cuda = version_of(f"{cu[:-1]}.{cu[-1]}")
    firsts = {cc: v for cc, v in knowledge.load("frameworks")["toolkit_arch"].items() if cc != "source"}
    major = version_of(gpu["cc"]).major
    same_major = [v for cc, v in firsts.items() if version_of(cc).major == major]
    if not same_major or build_cuda is None:
        return
    needs = min(same_major, key=version_of)
    if build_cuda >= version_of(needs):
        return
    yield Hit(message=f"torch {named['torch']}+cu{cu} is built with CUDA {build_cuda}, older than CUDA {needs}, the first "
                      f"that builds code for compute capability {major}.x; {gpu['name']} is {gpu['cc']} "
                      f"(line {named['line']}): \"no kernel image is available for execution on the device\"",
              fix=_build_fix(f, [{"compute_capability": gpu["cc"]}]),
              evidence={**ticket_evidence(named), "compute_capability": gpu["cc"], "torch.cuda": str(build_cuda)})


def _missing_arch_from_cc_warning(f, symptoms):
    """torch's other capability warnings: before 2.8 "... which is of cuda capability X.Y" with the
    build's minimum (or "no longer supports this GPU"), from 2.8 "... compute capability (CC) X.Y"
    followed by the CCs the build supports. A capability above an old build's maximum but of the
    same major runs (binary compatibility within a major): torch warned all the same, no finding."""
    old = symptoms.get("gpu-cc-old-form")
    new = symptoms.get("gpu-cc-list-form")
    warn = old or new
    if warn is None:
        return
    cc = version_of(warn["cc"])
    if old:
        lowest = old.get("min") or old.get("min2")
        if not (old.get("too_old") or (lowest and cc < version_of(lowest))):
            return
        carries = f"its minimum is {lowest}" if lowest else "torch no longer supports it"
    else:
        ranges = ticket_all(f, "arch-cc-built-for")
        runs = [r for r in ranges if version_of(r["lo"]) <= cc < version_of(r["hi"])
                and warn["cc"] not in re.split(r"[,\s]+", r.get("except", ""))]
        if runs:
            return
        built = ", ".join(r["built"] for r in ranges)
        carries = f"the build supports CC {built}" if built else "torch lists it outside its build's CCs"
    yield Hit(message=f"{warn.get('gpu')} is compute capability {warn['cc']}, but {carries} (torch's warning, "
                      f"line {warn['line']}): \"no kernel image is available for execution on the device\"",
              fix=_build_fix(f, [{"compute_capability": warn["cc"]}]), evidence=ticket_evidence(warn))


def _arch_list_not_known(f, t, devices) -> None:
    """A wheel whose arch list knowledge lacks, on a node with GPUs to judge against it: not judged
    (the rule is skipped with the reason), never a silent pass."""
    if devices and t.get("arch_list") is None and "torch.arch_list" in f.unknown:
        raise MissingFact("torch.arch_list", f.unknown["torch.arch_list"])


def _missing_arch_from_facts(f):
    t = f["torch"]
    arch = t.get("arch_list")
    if t.get("build") == "cuda":
        _arch_list_not_known(f, t, _cuda_gpus(f))
    if t.get("build") != "cuda" or not isinstance(arch, list) or not arch:
        return
    for g in _cuda_gpus(f):
        cc = g.get("compute_capability")
        if isinstance(cc, str) and not arch_supported(cc, arch):
            sm = "sm_" + cc.replace(".", "")
            yield Hit(message=f"{g.get('name')} is {sm}, but torch {t.get('version')} carries "
                              f"{', '.join(arch)}: \"no kernel image is available for execution on the device\"",
                      subject=f"GPU {g.get('index')}", fix=_build_fix(f, [g]),
                      evidence={"compute_capability": cc, "torch.arch_list": arch})


def _missing_arch_from_warning(f, symptoms):
    """torch's own warning, pasted without an environment report: it names the GPU, its
    architecture and, on its next line, the build's arch list."""
    warn = symptoms["sm-not-compatible"]
    sm = f"sm_{warn['sm']}"
    listed = symptoms.get("arch-list-reported", {}).get("archs")
    carries = f"this torch carries {', '.join(listed.split())}" if listed else "this torch does not carry it"
    return Hit(message=f"{warn.get('gpu')} is {sm}, but {carries} (torch's warning, line {warn['line']}): "
                       "\"no kernel image is available for execution on the device\"",
               fix=_build_fix(f, [{"compute_capability": f"{sm[3:-1]}.{sm[-1]}"}]), evidence={"ticket.line": warn["line"], "ticket.text": warn["text"][:160]})


def driver_supports(driver: str, runtime: str, windows: bool = False):
    """(ok, why) for a CUDA runtime on a driver (hpcdoctor.wheels); unknown counts as not refused."""
    ok, why = wheels.driver_supports(driver, runtime, windows)
    return ok is not False, why


def _platform(f):
    """(os, cpu architecture) of the node the build must run on, as the wheel tables name them."""
    t = f["torch"] if isinstance(f.get("torch"), dict) else {}
    text = f"{t.get('os') or ''} {t.get('python_platform') or ''}".lower()
    os_name = "windows" if "windows" in text else "linux"
    arch = str(f.get("cpu.arch") or "").lower()
    cpu = "aarch64" if arch in ("aarch64", "arm64") or "aarch64" in text or "arm64" in text else "x86_64"
    return os_name, cpu


def _installer(t) -> str:
    conda = (t.get("conda_packages") or {}).get("pytorch") or (t.get("conda_list") or {}).get("pytorch")
    if isinstance(conda, dict) and conda.get("channel") != "pypi" and not str(conda.get("build", "")).startswith("pypi"):
        return "conda"
    return "conda" if "cpuonly" in (t.get("conda_packages") or {}) else "pip"


def _environment(t) -> dict:
    """What of the environment decides which build installs there: its Python version, the torch
    it has (the fix moves as little as it can) and the torchvision/torchaudio that must move with it."""
    version = t.get("version") if isinstance(t.get("version"), str) else None
    python = t.get("python_version") if isinstance(t.get("python_version"), str) else None
    return {"python": python, "current": version, "companions": wheels.releases.installed_companions(t)}


def _build_fix(f, gpus) -> str:
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
            return wheels.resolve_rocm(gfx[0], f.config, **_environment(t))["text"]
        if "amd" in kinds:
            return ("amd-smi version   # then a ROCm build of torch for that ROCm: pip install torch --index-url "
                    f"{wheels.DEFAULT_INDEX}/rocmX.Y, or the site's PyTorch module")
        return ("nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv   # then a CUDA build of torch "
                "for that compute capability and driver, or the site's PyTorch module")
    driver = f.get("nvidia.driver_version") or next((g.get("driver_version") for g in f.gpus()
                                                    if isinstance(g.get("driver_version"), str)), None)
    os_name, cpu = _platform(f)
    # The oldest architecture decides: a build that runs it and every newer one listed.
    answers = [wheels.resolve(cc, driver if isinstance(driver, str) else None, os_name, cpu, _installer(t), f.config,
                              **_environment(t)) for cc in ccs]
    bad = next((a for a in answers if not a["ok"]), None)
    return (bad or answers[0])["text"]


@rule("SW004", "driver-too-old", "error", "the NVIDIA driver is too old for the torch build's CUDA", impact=10)
def driver_too_old(f):
    """
    What it detects:
        A CUDA build of torch whose CUDA runtime needs a newer driver than the node has, beyond what
        CUDA's minor-version compatibility covers (any 11.x runtime on a driver >= 450.80.02, any
        12.x on >= 525.60.13, any 13.x on >= 580.65.06). Silent when torch reports CUDA available
        all the same: the forward-compatibility package (cuda-compat) is then in use. In a pasted
        ticket, torch's own verdict: "driver on your system is too old (found version 12080)",
        the number being the driver's CUDA version, or CUDA runtime error 35 ("CUDA driver version
        is insufficient for CUDA runtime version") in any program's wording (torch, CTranslate2,
        onnxruntime, CUDA samples), 36 (an API call that needs a newer driver) or 222 (PTX built by
        a newer CUDA than the driver's JIT compiler).

    Why it matters:
        torch.cuda.is_available() is False with "The NVIDIA driver on your system is too old", or
        CUDA initialisation fails with error 803/804: the GPUs are unusable from this environment.

    How to fix:
        Install the build nearest the installed release that this driver runs, that carries the GPU's
        architecture and that has wheels for the environment's Python, which the fix names
        (hpcdoctor.knowledge.wheels), or, where no official build runs on this driver, ask the
        administrators for the driver the fix names.

    References:
        - https://docs.nvidia.com/deploy/cuda-compatibility/
        - 001_dd2fe1913b91ca0a.txt (matching PyTorch builds to the cluster's CUDA)
    """
    yield from _facts_or_ticket(lambda: list(_driver_too_old_from_facts(f)), _driver_too_old_in_ticket(f))


def _facts_or_ticket(from_facts, from_ticket):
    """What the gathered facts establish; where they establish nothing, or are unknown, what the
    pasted messages say. Unknown facts with no message stay unknown (the rule is skipped)."""
    try:
        hits = from_facts()
    except MissingFact:
        hits = list(from_ticket)
        if not hits:
            raise
        return hits
    return hits or list(from_ticket)


def _driver_too_old_in_ticket(f):
    """torch's own verdict pasted: "driver on your system is too old (found version 12080)", the
    number being the driver's CUDA version (cudaDriverGetVersion), or CUDA runtime error 35."""
    sym = ticket_symptoms(f)
    hit = sym.get("driver-cuda-too-old") or sym.get("driver-insufficient")
    if hit is None:
        yield from _driver_too_old_told(f)
        return
    found = hit.get("driver_cuda")
    driver_cuda = f"{int(found) // 1000}.{int(found) % 1000 // 10}" if found else None
    tag = _wheel_for_driver_cuda(driver_cuda) if driver_cuda else None
    if tag:
        fix = f"pip install torch --index-url https://download.pytorch.org/whl/{tag}   (or ask the administrators for a newer driver)"
    else:
        fix = "nvidia-smi   # shows the CUDA version the driver supports: ask the administrators for a newer driver, or install a torch built for that CUDA"
    said = f"the driver supports CUDA {driver_cuda} only" if driver_cuda else "the driver is older than the CUDA runtime"
    yield Hit(message=f"{said}, older than the CUDA of this torch build (line {hit['line']}: {hit['text'][:120]})",
              fix=fix, evidence={**ticket_evidence(hit), "nvidia.cuda_driver_version": driver_cuda})


def _driver_too_old_told(f):
    """CUDA's own words for it, in any program's wording (the catalogue entries that feed
    driver-too-old): error 35, "CUDA driver version is insufficient for CUDA runtime version";
    36, an API call that needs a newer driver; 222, PTX newer than the driver's JIT compiler."""
    for s in catalogued(f, "driver-too-old"):
        yield Hit(message=f"the NVIDIA driver is older than the CUDA this program was built with ({s.get('key')}, "
                          f"line {s.get('line')}: \"{str(s.get('text', '')).strip()[:120]}\")",
                  fix="nvidia-smi | head -4   # the highest CUDA this driver runs: install a build of that CUDA or older, "
                      "or ask the administrators for a newer driver",
                  evidence=told_evidence(s))
        return


def _wheel_for_driver_cuda(driver_cuda: str):
    """The newest CUDA variant of the official wheels that a driver of this CUDA version runs
    without minor-version compatibility (knowledge/torch_wheels.toml)."""
    have = version_of(driver_cuda)
    cudas = {w["cuda"] for w in knowledge.load("torch_wheels").get("wheel", []) if w.get("cuda")}
    fitting = [c for c in cudas if version_of(c) and version_of(c) <= have]
    if not fitting:
        return None
    return "cu" + max(fitting, key=version_of).replace(".", "")


def _driver_too_old_from_facts(f):
    t = f["torch"]
    if t.get("build") != "cuda" or not t.get("cuda") or not _cuda_gpus(f):
        return
    driver = f.get("nvidia.driver_version") or _cuda_gpus(f)[0].get("driver_version")
    if not driver:
        raise MissingFact("nvidia.driver_version", f.reason("nvidia.driver_version"))
    windows = _platform(f)[0] == "windows"
    ok, why = wheels.driver_supports(driver, t["cuda"], windows, f.config)
    ok = ok is not False
    if not ok and t.get("cuda_available") is True:
        # torch initialised CUDA on this driver: CUDA's forward-compatibility package (cuda-compat,
        # data-centre GPUs, as NGC containers ship it) bridges the gap. Not an error.
        return
    if not ok:
        yield Hit(message=f"torch {t.get('version')} uses CUDA {t['cuda']}, driver {driver} is too old: {why}",
                  fix=_build_fix(f, _cuda_gpus(f)),
                  evidence={"torch.cuda": t["cuda"], "nvidia.driver_version": driver,
                            "nvidia.cuda_driver_version": f.get("nvidia.cuda_driver_version")})


@rule("SW008", "torch-rocm-missing-gfx", "error", "the ROCm torch build has no kernels for this AMD GPU", impact=10)
def torch_rocm_missing_gfx(f):
    """
    What it detects:
        A ROCm build of torch whose arch list (torch.cuda.get_arch_list(), gfx targets) lacks the
        graphics target of an AMD GPU on the node: a gfx1100 Radeon under a wheel built for
        gfx90a/gfx942 only, or an MI300X (gfx942) under an older ROCm wheel. In a pasted log, the
        HIP runtime's "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!".

    Why it matters:
        ROCm code objects run only on the gfx target they were built for; there is no PTX-like
        forward path. Kernels fail with "HIP error: invalid device function" or "no kernel image",
        or torch.cuda.is_available() is True and the first operation fails.

    How to fix:
        Install a ROCm build of torch whose arch list includes the GPU's gfx target, which the fix
        names from knowledge/torch_wheels.toml ([[rocm_wheel]], e.g. the +rocm7.2 wheels of 2.11 for
        gfx950 or gfx1151), or the site's module built for it; where no official wheel carries the
        target (gfx1010, gfx1031), build from source with PYTORCH_ROCM_ARCH set to it. Check with
        python -c "import torch; print(torch.cuda.get_arch_list())". A pasted collect_env names the
        wheel, not its list: the official wheel's list is then used.

    References:
        - https://rocm.docs.amd.com/projects/install-on-linux/en/latest/reference/system-requirements.html
        - https://github.com/pytorch/pytorch/issues/138506
        - https://github.com/pytorch/pytorch/issues/132570 (gfx1010 absent from the ROCm 6.2 wheels)
        - https://github.com/astral-sh/uv/issues/14086 (get_arch_list() of the official ROCm wheels)
    """
    try:
        t = f["torch"]
    except MissingFact:
        told = list(_rocm_gfx_told(f))
        if not told:
            raise
        yield from told
        return
    arch = t.get("arch_list")
    if t.get("build") == "rocm":
        _arch_list_not_known(f, t, [g for g in _amd_devices(f, t) if g.get("vendor") == "amd"])
    if t.get("build") != "rocm" or not isinstance(arch, list) or not arch:
        yield from _rocm_gfx_told(f)
        return
    built = {wheels.gfx_base(a) for a in arch}  # gfx90a:xnack- is still gfx90a code
    # A pasted collect_env names the wheel, not its list: the list is then the official wheel's
    # (knowledge/torch_wheels.toml [[rocm_wheel]]), and the message says so.
    official = wheels.rocm_wheel_gfx_list(str(t.get("version") or ""), f.config)
    from_table = "arch_list" in (t.get("from_knowledge") or []) and official is not None and official["arch"] == arch
    whose = ("the official wheel " if from_table else "") + f"torch {t.get('version')}"
    for g in _amd_devices(f, t):
        gfx = g.get("gfx_target")
        if g.get("vendor") == "amd" and isinstance(gfx, str) and gfx.startswith("gfx") and wheels.gfx_base(gfx) not in built:
            yield Hit(message=f"{g.get('name')} is {gfx}, but {whose} carries {', '.join(arch)}: "
                              "\"invalid device function\" at the first kernel",
                      subject=f"GPU {g.get('index')}",
                      fix=wheels.resolve_rocm(gfx, f.config, **_environment(t))["text"],
                      evidence={"gfx_target": gfx, "torch.arch_list": arch,
                                "arch_list_from": "knowledge/torch_wheels.toml" if from_table else "torch"})


def _rocm_gfx_told(f):
    """The HIP runtime's "hipErrorNoBinaryForGpu: Unable to find code object for all current
    devices!" (ROCm/clr hip_code_object.cpp), pasted: the program's HIP code carries no code
    object for the GPU's gfx target."""
    for s in catalogued(f, "torch-rocm-missing-gfx"):
        yield Hit(message=f"the HIP runtime found no code object for this GPU's gfx target (line {s.get('line')}: "
                          f"\"{str(s.get('text', '')).strip()[:120]}\"): the ROCm build lacks the GPU's architecture",
                  fix="rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # the GPU's target: install a ROCm build of torch whose "
                      "torch.cuda.get_arch_list() has it (AMD_LOG_LEVEL=1 prints the targets the binary carries)",
                  evidence=told_evidence(s))
        return


def _amd_devices(f, t):
    """The node's AMD GPUs; where no GPU tool was recorded (a pasted collect_env), the device torch
    itself reports: a ROCm collect_env prints torch.cuda.get_device_name() with the device's
    gcnArchName, "AMD Instinct MI210 (gfx90a:sramecc+:xnack-)" (torch/utils/collect_env.py,
    get_gpu_info). That is the current device only, so it is used for its gfx, never as a count."""
    gpus = f.gpus()
    if gpus or not isinstance(t.get("gpu_models"), list):
        return f["gpus"]
    named = []
    for n, model in enumerate(t["gpu_models"]):
        m = re.match(r"^(.+?)\s*\((gfx[0-9a-f]+(?::[a-z]+[+-])*)\)$", str(model).strip())
        if m:
            named.append({"index": n, "vendor": "amd", "name": m.group(1), "gfx_target": m.group(2)})
    return named or f["gpus"]


OPENMP_RUNTIMES = ("libgomp", "libiomp5", "libomp")


@rule("SW005", "duplicate-libraries", "warning", "two copies of a runtime library loaded, or torch installed twice", impact=8)
def duplicate_libraries(f):
    """
    What it detects:
        Two different files of the same library loaded into the job's process (two libnccl, two
        libcudart, two libcudnn), more than one OpenMP runtime (libgomp with libiomp5 or libomp),
        torch installed in two places on sys.path (user site and a venv, pip and conda), or, in a
        collect_env library list, conda's cudatoolkit or nccl beside NVIDIA's pip wheels of them,
        or pip's torch ("torch 1.3.1 pypi_0 pypi") beside conda's pytorch. In a pasted ticket,
        the messages a second copy causes: cuDNN's "version incompatibility: PyTorch was compiled
        against ... but found runtime version ..." and Intel OpenMP's "OMP: Error #15".

    Why it matters:
        Two copies of a library means two states: NCCL communicators that hang, cuDNN version
        errors, crashes at exit. Two OpenMP runtimes oversubscribe the cores and can deadlock
        (Intel's "OMP: Error #15"). A second torch install shadows the one the user upgraded.

    How to fix:
        Remove the extra copy: uninstall the duplicate torch (pip uninstall torch until none is
        left, then reinstall once), drop LD_LIBRARY_PATH entries or LD_PRELOADs that bring another
        libnccl/libcudart, and avoid mixing conda's and pip's CUDA libraries.

    References:
        - https://github.com/pytorch/pytorch/issues/37377
        - 001_dd2fe1913b91ca0a.txt (one clean virtual environment per project)
    """
    yield from _facts_or_ticket(lambda: list(_duplicates_from_facts(f)), _duplicates_in_ticket(f))


def _duplicates_in_ticket(f):
    """The messages a second copy causes: cuDNN's version check (another libcudnn than torch's
    own was loaded) and Intel OpenMP's "OMP: Error #15" (two libiomp5 in one process)."""
    sym = ticket_symptoms(f)
    if "cudnn-mismatch" in sym:
        s = sym["cudnn-mismatch"]
        yield Hit(message=f"torch was built with cuDNN {s['compiled']} but loaded cuDNN {s['found']} (line {s['line']}): "
                          "another libcudnn shadows the one torch brings",
                  fix="unset LD_LIBRARY_PATH   # or remove the cuDNN directory from it, so torch loads its own libcudnn",
                  evidence=ticket_evidence(s))
    if "omp-error-15" in sym:
        s = sym["omp-error-15"]
        yield Hit(message=f"two copies of the Intel OpenMP runtime ({s['library']}) were loaded into one process (line {s['line']})",
                  fix="conda install nomkl   # or pip uninstall intel-openmp, keeping torch's own libiomp5; "
                      "KMP_DUPLICATE_LIB_OK=TRUE only hides the conflict",
                  evidence=ticket_evidence(s))


def _duplicates_from_facts(f):
    t = f["torch"]
    libs = t.get("loaded_libraries") or {}
    for name, paths in sorted(libs.items()):
        if len(paths) > 1 and name not in OPENMP_RUNTIMES:
            yield Hit(message=f"{len(paths)} different {name} files are loaded: {', '.join(paths)}",
                      fix="# remove the LD_LIBRARY_PATH/LD_PRELOAD entry or package that brings the extra copy",
                      evidence={f"torch.loaded_libraries.{name}": paths})
    omp = [n for n in OPENMP_RUNTIMES if n in libs]
    if len(omp) > 1:
        yield Hit(message=f"{len(omp)} OpenMP runtimes loaded ({', '.join(omp)}): threads oversubscribe and may deadlock",
                  fix="# keep one OpenMP runtime: drop the LD_PRELOAD of the other, or install torch and MKL from one source",
                  evidence={n: libs[n] for n in omp})
    installs = t.get("installs") or []
    places = sorted({i.get("location") for i in installs})
    if len(places) > 1:
        yield Hit(message="torch is installed in %d places on sys.path: %s" % (len(places), "; ".join(
                      f"{i.get('version')} in {i.get('location')}" for i in installs)),
                  fix="pip uninstall -y torch   # repeat until none is left, then install it once",
                  evidence={"torch.installs": installs})
    conda = t.get("conda_list") or {}
    pip = t.get("pip") or {}
    if "pytorch" in conda and conda.get("torch") and _from_pypi(conda["torch"]):
        # conda list shows pip's installs with the pypi channel: "torch 1.3.1 pypi_0 pypi" beside
        # conda's own "pytorch" package is a second torch in the same site-packages.
        yield Hit(message=f"torch {conda['torch'].get('version')} from pip and pytorch {conda['pytorch'].get('version')} "
                          "from conda are both installed in this environment",
                  fix="pip uninstall -y torch && conda install --force-reinstall pytorch   (or remove conda's: conda remove --force pytorch)",
                  evidence={"conda.torch": conda["torch"], "conda.pytorch": conda["pytorch"]})
    elif "pytorch" in conda and "torch" in pip and conda["pytorch"].get("version", "").split("+")[0] != pip["torch"].split("+")[0]:
        yield Hit(message=f"torch {pip['torch']} from pip and pytorch {conda['pytorch'].get('version')} from conda in one environment",
                  fix="# remove one of them (conda remove pytorch, or pip uninstall torch) and reinstall from one source",
                  evidence={"pip.torch": pip["torch"], "conda.pytorch": conda["pytorch"]})
    for what, conda_names, wheel in CUDA_LIBRARY_COPIES:
        ours = [n for n in conda_names if n in conda and not _from_pypi(conda[n])]
        wheels = sorted(n for n in pip if re.fullmatch(wheel, n))
        if ours and wheels:
            c = ours[0]
            yield Hit(message=f"two copies of {what}: {c} {conda[c].get('version')} from conda and "
                              f"{wheels[0]} {pip[wheels[0]]} from pip",
                      fix=f"conda remove {c}   # keep one copy: the pip wheels come with torch (or install torch from conda only)",
                      evidence={f"conda.{c}": conda[c], f"pip.{wheels[0]}": pip[wheels[0]]})


# The same library from conda's channels and from NVIDIA's pip wheels (collect_env lists conda's
# cudatoolkit and nccl; pip's nvidia-* wheels are torch's own since 1.13).
CUDA_LIBRARY_COPIES = (
    ("the CUDA runtime", ("cudatoolkit", "cuda-runtime", "cuda-cudart"), r"nvidia-cuda-runtime-cu\d+"),
    ("NCCL", ("nccl",), r"nvidia-nccl-cu\d+"),
    ("cuDNN", ("cudnn",), r"nvidia-cudnn-cu\d+"),
)


def _from_pypi(entry) -> bool:
    """conda list shows pip's installs too, as build pypi_0 in channel pypi: not a second copy."""
    return entry.get("channel") == "pypi" or str(entry.get("build", "")).startswith("pypi")


@rule("SW006", "tf32-disabled", "advice", "fp32 matmuls without TF32 on an Ampere-or-newer GPU", impact=7)
def tf32_disabled(f):
    """
    What it detects:
        An NVIDIA GPU of compute capability 8.0 or newer while torch computes fp32 matrix
        multiplications at full precision (float32 matmul precision "highest", torch's default),
        said only where it matters: the setting was read (--deep), a benchmark measured fp32
        against TF32, or a pasted log shows fp32 work (Lightning's tensor-core warning, a vLLM
        engine in float32). From torch's default alone it stays quiet.

    Why it matters:
        TF32 tensor cores run fp32 matmuls many times faster (on an H100, ~51 TFLOP/s without and
        ~380 with, measured here), at a 10-bit mantissa for the multiplication inputs; accumulation
        stays fp32. Most training converges the same; the Alliance guide discusses the trade-off.

    How to fix:
        In the script: torch.backends.cuda.matmul.allow_tf32 = True, or
        torch.set_float32_matmul_precision("high"). Keep "highest" where fp32 accuracy is required.

    References:
        - 001_dd2fe1913b91ca0a.txt (TF32: Performance vs numerical accuracy)
        - https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
    """
    t = f["torch"]
    if t.get("build") != "cuda":
        return
    precision = f["torch.float32_matmul_precision"]
    # Worth saying only where something shows fp32 work or the setting itself: torch's default
    # alone (a release's default, from knowledge) would make it the only line of every reply.
    read = "float32_matmul_precision" not in (t.get("from_knowledge") or [])
    symptoms = {s["id"] for s in (f.get("ticket.symptoms") or [])}
    if not (read or symptoms & {"fp32-matmul-warned", "fp32-requested"} or _tf32_measured(f)):
        return
    ampere = [g for g in _cuda_gpus(f)
              if isinstance(g.get("compute_capability"), str) and version_of(g["compute_capability"]) >= version_of("8.0")]
    if precision == "highest" and ampere:
        proof = _tf32_measured(f)
        source = " (this release's default, from hpcdoctor's knowledge)" if "float32_matmul_precision" in (t.get("from_knowledge") or []) else ""
        yield Hit(message=f"float32 matmul precision is \"highest\"{source} on {ampere[0].get('name')}: fp32 matmuls "
                          "skip the TF32 tensor cores" + (proof or ", several times slower")
                          + "; TF32 trades input precision (10-bit mantissa)",
                  fix='torch.set_float32_matmul_precision("high")   # or torch.backends.cuda.matmul.allow_tf32 = True', fix_lang="python",
                  evidence={"torch.float32_matmul_precision": precision, "compute_capability": ampere[0].get("compute_capability")})


def _tf32_measured(f):
    for g in (f.get("bench.gpus") or []):
        fp32 = ((g.get("gemm") or {}).get("fp32") or {}).get("tflops")
        tf32 = ((g.get("gemm") or {}).get("tf32") or {}).get("tflops")
        if isinstance(fp32, (int, float)) and isinstance(tf32, (int, float)) and fp32 > 0:
            return f": TF32 would make them {tf32 / fp32:.1f}x faster here ({fp32:.0f} -> {tf32:.0f} TFLOP/s measured)"
    return None


@rule("SW007", "bf16-unsupported", "warning", "bf16 requested on hardware without it", impact=7)
def bf16_unsupported(f):
    """
    What it detects:
        bf16 asked for on GPUs older than Ampere (V100, T4, P100) or on a CPU without native bf16
        (A64FX, Graviton2, Skylake): by the environment (ACCELERATE_MIXED_PRECISION=bf16,
        DNNL_DEFAULT_FPMATH_MODE=BF16), or, in a pasted ticket, by the framework's own log
        (vLLM's engine configuration with dtype=torch.bfloat16, or its refusal "Bfloat16 is only
        supported on GPUs with compute capability of at least 8.0").

    Why it matters:
        On GPUs without bf16 units, torch either refuses bf16 autocast or emulates it far slower
        than fp16, and vLLM refuses to load the model; on CPUs without bf16 the fast-math mode
        gains nothing.

    How to fix:
        On V100/T4 use fp16 mixed precision with a gradient scaler (ACCELERATE_MIXED_PRECISION=fp16),
        or for vLLM --dtype=half (LLM(..., dtype="half")); on the CPU, unset DNNL_DEFAULT_FPMATH_MODE.

    References:
        - 004_3c12714629749d50.txt (data types supported per GPU generation)
        - 000_6e25303b50457a54.txt (section 3.2: bf16 support on Grace)
        - https://github.com/vllm-project/vllm/pull/2374
    """
    symptoms = {s["id"]: s for s in (f.get("ticket.symptoms") or [])}
    if "bf16-refused-hf" in symptoms and "bf16-refused" not in symptoms:
        s = symptoms["bf16-refused-hf"]
        g = _first_without_bf16(f.gpus())
        on = f" on {g.get('name')}" if g is not None else ""
        yield Hit(message=f"transformers refused bf16{on}: torch.cuda.is_bf16_supported() is False (line {s['line']}), "
                          "the GPU has no bf16 units (pre-Ampere: V100, T4, P100, RTX 20xx)",
                  fix="# on the command line, --fp16 in place of --bf16; in code:\n"
                      "args = TrainingArguments(output_dir=\"out\", fp16=True, bf16=False)", fix_lang="python",
                  evidence=ticket_evidence(s))
        return
    if "bf16-refused" in symptoms or "bf16-requested" in symptoms:
        yield from _bf16_in_ticket(f, symptoms)
        return
    if "bf16-intent" in symptoms:
        yield from _bf16_intent(f, symptoms["bf16-intent"])
        return
    env = f["env.vars"]
    if (env.get("ACCELERATE_MIXED_PRECISION") or "").lower() == "bf16":
        g = _first_without_bf16(f.gpus())
        if g is not None:
            yield Hit(message=f"ACCELERATE_MIXED_PRECISION=bf16 but {g.get('name')} has no bf16 units",
                      subject=f"GPU {g.get('index')}", fix="export ACCELERATE_MIXED_PRECISION=fp16",
                      evidence={"env.ACCELERATE_MIXED_PRECISION": "bf16", "compute_capability": g.get("compute_capability")})
    mode = (env.get("DNNL_DEFAULT_FPMATH_MODE") or env.get("ONEDNN_DEFAULT_FPMATH_MODE") or "").upper()
    if mode == "BF16" and f.get("cpu.capabilities.bf16") is False:
        yield Hit(message=f"DNNL_DEFAULT_FPMATH_MODE=BF16 but this CPU ({f.get('cpu.microarch')}) has no native bf16",
                  fix="unset DNNL_DEFAULT_FPMATH_MODE", evidence={"env.DNNL_DEFAULT_FPMATH_MODE": mode,
                                                                  "cpu.capabilities.bf16": False})


def _bf16_intent(f, seen):
    """bf16 asked for by a framework's own flag or dtype (bf16-mixed, torch.bfloat16, --bf16) in a
    ticket, on the GPU its tool outputs show or, with none, the one its text names (all names of
    one compute capability, see _gpu_of_ticket)."""
    if f.gpus():
        g = _first_without_bf16(f.gpus())
        gpu = {"name": g.get("name"), "cc": g.get("compute_capability")} if g is not None else None
    else:
        gpu = _gpu_of_ticket(f)
        if gpu and not _lacks_bf16(gpu["name"], gpu["cc"]):
            gpu = None
    if gpu is None:
        return
    said = seen["text"]
    if "bf16-mixed" in said:
        fix = ("# no bf16 units on this GPU: fp16 mixed precision with loss scaling instead (litgpt: --precision 16-mixed)\n"
               "trainer = L.Trainer(precision=\"16-mixed\")")
    elif "bfloat16" in said:
        fix = ("# no bf16 units on this GPU: load and run the model in fp16 instead\n"
               "model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16)")
    else:
        fix = ("# no bf16 units on this GPU: transformers' fp16 mixed precision instead (--fp16 on the command line)\n"
               "args = TrainingArguments(output_dir=\"out\", fp16=True, bf16=False)")
    yield Hit(message=f"the job asks for bf16 (line {seen['line']}: {said[:80]}) but {gpu['name']} (compute capability "
                      f"{gpu['cc']}) has no bf16 units: torch refuses bf16 there or emulates it far slower than fp16",
              fix=fix, fix_lang="python",
              evidence={"ticket.line": seen["line"], "ticket.text": said[:160], "compute_capability": gpu["cc"]})


def _lacks_bf16(name, cc, vendor="nvidia"):
    sku = gpu_table.datasheet(name or "")
    return (sku is not None and sku.get("has_bf16") is False) or (
        vendor == "nvidia" and isinstance(cc, str) and version_of(cc) < version_of("8.0"))


def _first_without_bf16(gpus):
    return next((g for g in gpus if _lacks_bf16(g.get("name"), g.get("compute_capability"), g.get("vendor"))), None)


def _bf16_in_ticket(f, symptoms):
    """A pasted log asked for bf16 (or vLLM refused it): on which GPU, from the pasted GPU facts or,
    with none pasted, from the refusal itself, which names the GPU and its compute capability."""
    refused = symptoms.get("bf16-refused")
    gpus = f.gpus()
    g = _first_without_bf16(gpus)
    if g is not None:
        name, cc, subject = g.get("name"), g.get("compute_capability"), f"GPU {g.get('index')}"
    elif refused and not gpus and refused.get("gpu"):
        name, cc, subject = refused["gpu"], refused.get("cc"), None
    else:
        return  # the pasted GPUs have bf16 units, or none is known: nothing to say
    seen = refused or symptoms["bf16-requested"]
    yield Hit(message=f"the job asks for bf16 but {name} (compute capability {cc}) has no bf16 units"
                      + (": vLLM refused to start" if refused else ""),
              subject=subject,
              fix='vllm serve MODEL --dtype=half   # in Python LLM(..., dtype="half"); in training, fp16 with a GradScaler',
              evidence={"ticket.line": seen["line"], "ticket.text": seen["text"][:160], "compute_capability": cc})


@rule("SW013", "framework-missing-arch", "error", "a framework's own kernels have no code for this GPU", impact=9,
      also={"warning": "flash-attn 2 is only installed, not seen asked for or failing; or vLLM LoRA on a GPU "
                                "below 8.0 with no vLLM release named"})
def framework_missing_arch(f):
    """
    What it detects:
        A framework above torch whose own CUDA kernels are not built for the GPU while torch's
        build is not the problem: flash-attn 2's refusal "FlashAttention only supports Ampere GPUs
        or newer", vLLM's "punica LoRA kernels require compute capability >= 8.0", a framework
        kernel reporting CUDA's error by name ("RMSNorm failed with error code no kernel image is
        available for execution on the device", flashinfer's norms inside sglang; "... kernel
        launch failed, error: ..."; "CUDA Error: ... (209)" from flashinfer's own source), or
        flash-attn 2 asked for (attn_implementation="flash_attention_2") or installed
        on a GPU below its minimum compute capability (knowledge/frameworks.toml); vLLM started
        with LoRA (--enable-lora, enable_lora=True) on a GPU below 8.0 in the releases whose LoRA
        ran punica CUDA kernels (0.3.0 to 0.5.3.post1): an error where the paste names such a
        release ("Initializing an LLM engine (v0.4.2)", vllm==0.4.2), a warning where it names
        none, silent where it names only later ones. Silent where
        torch's own arch list lacks the GPU: that is torch-missing-arch, one cause, one finding.

    Why it matters:
        torch runs on the GPU, so its checks pass, and the job dies at the framework's first
        kernel. Reinstalling torch, the usual advice for "no kernel image", changes nothing: the
        framework's wheel carries no code for this architecture (flash-attn 2 and sgl-kernel start
        at compute capability 8.0, vLLM at 7.0 up to 0.19.1 and 7.5 from 0.20.0).

    How to fix:
        Use the framework's fallback that runs on this GPU: in transformers,
        attn_implementation="sdpa" (PyTorch's scaled_dot_product_attention) instead of
        "flash_attention_2"; uninstall flash-attn where a library picks it up by itself; for
        vLLM's LoRA, merge the adapter into the base model and serve that; or run
        the framework on a GPU of the compute capability its kernels are built for.

    References:
        - https://github.com/Dao-AILab/flash-attention/blob/main/README.md
        - https://github.com/sgl-project/sglang/blob/main/sgl-kernel/CMakeLists.txt
        - https://docs.vllm.ai/en/v0.7.2/getting_started/installation/gpu/
        - https://huggingface.co/docs/transformers/v4.49.0/perf_infer_gpu_one
        - https://github.com/vllm-project/vllm/issues/4434
        - https://github.com/vllm-project/vllm/pull/5036
        - https://pypi.org/project/vllm/0.5.3.post1/ (sdist: CMakeLists.txt, _punica_C arches >= 8.0)
    """
    sym = ticket_symptoms(f)
    if not sym or _torch_lacks_the_gpu(f, sym):
        return
    table = knowledge.load("frameworks")["framework"]
    fa = table["flash-attn"]
    gpu = _gpu_of_ticket(f)
    on = f" on {gpu['name']} (compute capability {gpu['cc']})" if gpu else ""
    if "flash-attn-ampere-only" in sym:
        s = sym["flash-attn-ampere-only"]
        yield Hit(message=f"flash-attn 2 refused the GPU{on} (line {s['line']}): its kernels run on compute capability "
                          f"{fa['min_cc']} (Ampere) and newer only; the refusal is flash-attn's own check, not torch's",
                  fix=_SDPA_FIX, fix_lang="python", evidence={**ticket_evidence(s), "framework.min_cc": fa["min_cc"]})
        return
    if "vllm-lora-punica-cc" in sym:
        s = sym["vllm-lora-punica-cc"]
        yield Hit(message=f"vLLM refused LoRA on this GPU{on} (line {s['line']}): its punica LoRA kernels need compute "
                          f"capability {s['min_cc']} or newer; the base model runs where vLLM itself supports the GPU ({_vllm_minimum()})",
                  fix=_MERGE_LORA_FIX, fix_lang="python", evidence={**ticket_evidence(s), "framework.min_cc": s["min_cc"]})
        return
    lora = _vllm_lora_on_old_gpu(f, sym, table["vllm-lora-punica"], gpu)
    if lora:
        yield lora
        return
    if "framework-kernel-no-image" in sym or "framework-cuda-error-209" in sym:
        s = sym.get("framework-kernel-no-image") or sym["framework-cuda-error-209"]
        what = f"the framework kernel {s['kernel']}" if s.get("kernel") else f"a kernel of {s['framework']}"
        sgl = table["sgl-kernel"]
        yield Hit(message=f"{what} has no code for this GPU{on} (line {s['line']}: \"no kernel image is available\" from "
                          "the framework's own kernel, not torch's); flashinfer's norm and sampling kernels come built "
                          f"into sglang's sgl-kernel, which is built for compute capability {sgl['min_cc']} and newer",
                  fix="pip list 2>/dev/null | grep -i -E '^(sglang|sgl.kernel|flashinfer|vllm) '   "
                      "# the package whose kernel failed is built for newer GPUs: run it on a GPU of compute "
                      f"capability {sgl['min_cc']}+, or serve this GPU with a framework that lists it ({_vllm_minimum()})",
                  evidence={**ticket_evidence(s), "framework.min_cc": sgl["min_cc"]})
        return
    asked = sym.get("flash-attn2-requested") or sym.get("flash-attn2-installed")
    if asked and gpu and version_of(gpu["cc"]) < version_of(fa["min_cc"]):
        requested = "flash-attn2-requested" in sym
        what = ("the code asks for flash-attn 2 (attn_implementation=\"flash_attention_2\")"
                if requested else f"flash-attn {asked.get('version')} is installed")
        yield Hit(message=f"{what}, but {gpu['name']} is compute capability {gpu['cc']}: flash-attn 2's kernels run "
                          f"on {fa['min_cc']} (Ampere) and newer only, and "
                          + ("it fails" if requested else "code that selects it fails")
                          + " with \"FlashAttention only supports Ampere GPUs or newer\"",
                  # Installed is not used: many stacks install it and fall back to SDPA on older GPUs.
                  severity="error" if requested else "warning",
                  fix=_SDPA_FIX, fix_lang="python",
                  evidence={**ticket_evidence(asked), "compute_capability": gpu["cc"], "framework.min_cc": fa["min_cc"]})


def _vllm_minimum() -> str:
    v = knowledge.load("frameworks")["framework"]["vllm"]
    return f"vLLM documents {v['min_cc_before']}+ before {v['since']}, {v['min_cc']}+ from it"


def _vllm_lora_on_old_gpu(f, sym, punica, gpu):
    """vLLM started with LoRA (--enable-lora, enable_lora=True) on a GPU below the compute
    capability of its punica CUDA kernels, in the releases that ran them (knowledge/frameworks.toml,
    vllm-lora-punica): an error where the paste names a release in that range, a warning where it
    names none (the releases after it run LoRA on Triton kernels), silence where every release it
    names lies outside the range."""
    asked = sym.get("vllm-lora-enabled") or sym.get("vllm-lora-enabled-kwarg")
    if not asked or not gpu or version_of(gpu["cc"]) >= version_of(punica["min_cc"]):
        return None
    first, fixed = version_of(punica["first"]), version_of(punica["fixed_in"])
    named = [s for s in f.get("ticket.symptoms") or [] if s["id"] in ("vllm-version-logged", "vllm-version-pinned")]
    inside = [s for s in named if first <= version_of(s["version"]) < fixed]
    if named and not inside:
        return None
    why = (f"vLLM {punica['first']} up to {punica['fixed_in']} (not included) runs LoRA on punica CUDA kernels built "
           f"for compute capability {punica['min_cc']} and newer only, which fail on this GPU with \"no kernel image is "
           "available\" or \"punica LoRA kernels require compute capability >= 8.0\" while the base model runs")
    evidence = {**ticket_evidence(asked), "compute_capability": gpu["cc"], "framework.min_cc": punica["min_cc"]}
    if inside and len(inside) == len(named):
        v = inside[0]
        return Hit(message=f"LoRA is enabled (line {asked['line']}) with vLLM {v['version']} (line {v['line']}) on "
                           f"{gpu['name']} (compute capability {gpu['cc']}): {why}",
                   fix=_LORA_FIX_HEAD + _MERGE_LORA_FIX, fix_lang="python",
                   evidence={**evidence, "vllm.version": v["version"]})
    return Hit(message=f"LoRA is enabled (line {asked['line']}) on {gpu['name']} (compute capability {gpu['cc']}) and the "
                       f"paste does not say which vLLM ran: {why}; from {punica['fixed_in']} on, LoRA runs Triton kernels instead",
               severity="warning", fix=_LORA_FIX_HEAD + _MERGE_LORA_FIX, fix_lang="python", evidence=evidence)


# Which vLLM ran decides it (knowledge/frameworks.toml, vllm-lora-punica); the way round the
# punica kernels' minimum that vLLM's maintainers give is the merged adapter (#4434).
_LORA_FIX_HEAD = ("import vllm\n"
                  "print(vllm.__version__)  # 0.3.0 to 0.5.3.post1 run LoRA on punica kernels built for compute capability "
                  "8.0+ only; from 0.5.4 LoRA runs Triton kernels (vllm-project/vllm#5036)\n")


_SDPA_FIX = ("# transformers: PyTorch's own attention (scaled_dot_product_attention) runs on every GPU torch supports;\n"
             "# flash-attn 2 needs compute capability 8.0+. Elsewhere: pip uninstall flash-attn, so libraries fall back.\n"
             "model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16, attn_implementation=\"sdpa\")")


# vLLM maintainers' advice for LoRA on GPUs its punica kernels lack (vllm-project/vllm#4434): merge the
# adapter into the base model (PEFT's merge_and_unload) and serve the merged model without --enable-lora.
_MERGE_LORA_FIX = ("# punica LoRA needs compute capability 8.0+: merge the adapter into the base model, then serve the\n"
                   "# merged directory without --enable-lora (vllm-project/vllm#4434)\n"
                   "merged = PeftModel.from_pretrained(base_model, adapter_path).merge_and_unload()\n"
                   "merged.save_pretrained(\"merged-model\")")


def _torch_lacks_the_gpu(f, sym) -> bool:
    """Whether torch's own build lacks the GPU (torch-missing-arch's cause, not a framework's):
    torch's architecture warnings pasted, or a known arch list without the GPU's capability."""
    if {"sm-not-compatible", "gpu-cc-old-form", "gpu-cc-list-form", "hip-invalid-device-function"} & set(sym):
        return True
    arch = f.get("torch.arch_list")
    if f.get("torch.build") == "cuda" and isinstance(arch, list) and arch:
        return any(isinstance(g.get("compute_capability"), str) and not arch_supported(g["compute_capability"], arch)
                   for g in _cuda_gpus(f))
    return False


def _gpu_of_ticket(f):
    """The NVIDIA GPU a ticket is about, {name, cc}: from the pasted tool outputs, else the GPUs its
    text names (hpcdoctor.paste.find_gpu_names) when they all have one compute capability; None
    when unknown or when the names disagree (no guess)."""
    listed = [g for g in _cuda_gpus(f) if isinstance(g.get("compute_capability"), str)]
    if listed:
        low = min(listed, key=lambda g: version_of(g["compute_capability"]))
        return {"name": low.get("name"), "cc": low["compute_capability"]}
    if f.gpus():
        return None
    named = f.get("ticket.gpus_named") or []
    if named and len({g["cc"] for g in named}) == 1:
        return {"name": named[0]["gpu"], "cc": named[0]["cc"]}
    return None
