"""The torch build against the node's GPUs: torch that cannot be imported, a CPU-only build, and
a build without kernels for an NVIDIA GPU."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._builds import build_fix, arch_list_not_known
from hpcdoctor.rules._fatbin import ggml_raised
from hpcdoctor.rules._loader import loader_import_failure
from hpcdoctor.rules._torch_carries import torch_build_verdict, torch_works_said
from hpcdoctor.rules._common import (catalogued, cuda_gpus, said_no_gpu, stated, facts_or_ticket, first_symptom, gpu_of_ticket, ticket_all,
                                     ticket_evidence, ticket_symptoms, told_evidence, torch_hip_invalid_function,
                                     torch_import_frame_before, told_text,
                                     version_of)


@rule("SW001", "torch-import-failed", "error", "torch cannot be imported", impact=10,
      also={"warning": "a pasted NCCL symbol the loader could not bind, with no word that torch's import raised it"})
def torch_import_failed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The job's interpreter fails to import torch; the message is the real exception (a missing
        libcudnn, an undefined symbol from a mixed install, a NumPy ABI mismatch), or, in a paste, the
        dynamic loader's errors (knowledge/messages/loader.toml) where the library is torch's own, one
        torch requires (libstdc++, libnccl), or the user says `import torch` raised it.

    Why it matters:
        The job dies at its first line. The exception text names the cause far more precisely than
        the traceback users usually paste.

    How to fix:
        Reinstall torch in a clean environment (python -m venv; pip install torch), or load the
        module the site provides; for "cannot open shared object file", make sure no
        LD_LIBRARY_PATH entry shadows the libraries the wheel brings. For the loader's
        "version `GLIBCXX_3.4.NN' not found", check the libstdc++ it names (strings <file> | grep
        GLIBCXX_3.4.NN) and put a newer one first (conda install -c conda-forge libstdcxx-ng in a
        conda env); for an undefined nccl* symbol, keep one nvidia-nccl-cu* package, the one torch
        requires (python3 -m pip show torch).

    References:
        - 001_dd2fe1913b91ca0a.txt (installing PyTorch in a virtual environment)
        - https://github.com/bminor/glibc/blob/glibc-2.42/elf/dl-version.c (the loader's symbol version errors)
        - https://github.com/pytorch/pytorch/issues/186591 (nvidia-nccl-cu12 and -cu13 both installed)
    """
    yield from facts_or_ticket(lambda: list(_import_failed_from_facts(f)), _import_failed_in_ticket(f))


def _import_failed_from_facts(f: FactView):
    err = f["torch"].get("import_error")
    if err:
        yield Hit(message=f"import torch fails in {f.get('torch.target_python') or 'the job interpreter'}: {err}",
                  fix="# reinstall torch in a fresh virtual environment, and check LD_LIBRARY_PATH for shadowing libraries",
                  evidence={"torch.import_error": err, "torch.target_python": f.get("torch.target_python")})


def _import_failed_in_ticket(f: FactView):
    """A pasted import traceback: the loader's error names the library torch could not load."""
    sym = ticket_symptoms(f)
    missing = sym.get("torch:import-missing-library")
    # A library that another package (mmcv, TensorFlow) cannot load is not torch's import failing:
    # cuda-runtime-library-missing answers it.
    if missing is not None and not torch_import_frame_before(f, missing):
        missing = None
    # The loader's errors read one by one (loader.toml): a symbol version, an NCCL symbol, an executable
    # stack, each with its own fix, torch's when the library is torch's, is NCCL, or the user says
    # `import torch` failed. A library torch could not find at all keeps the finding below.
    loader = [] if missing is not None else list(loader_import_failure(f))
    if loader:
        yield loader[0]
        return
    hit = missing or sym.get("torch:import-undefined-symbol")
    if hit is None:
        yield from _torch_not_installed(sym)
        return
    lib = hit.get("library")
    # The loader's own words point at a library path that shadows the wheel's: try without it first.
    fix = ("unset LD_LIBRARY_PATH; python3 -c 'import torch'   "
           "# if it still fails, reinstall torch in a fresh virtual environment")
    why = f"{lib} was not found" if lib else "a library was loaded from another build than torch was linked against"
    yield Hit(message=f"import torch fails: {why} ({hit['error'][:200]}, line {hit['line']})", fix=fix,
              evidence={**ticket_evidence(hit), "torch.import_error": hit["error"][:300], "library": lib})


def _torch_not_installed(sym: dict):
    """Python's own "No module named 'torch'" (knowledge/messages/python_import.toml): the interpreter
    that ran has no torch on its path, most often not the one torch was installed for."""
    s = sym.get("python_import:no-module-named")
    if s is None or s.get("module") != "torch":
        return   # a submodule (torch._C, torch.distributed...) missing is another fault than no torch at all
    yield Hit(message=f"import torch fails: the Python that ran has no torch on its path (line {s['line']}: "
                      f"\"{told_text(s)}\"): torch is not installed in that environment, or another interpreter ran "
                      "than the one it was installed for (a job script that did not activate the environment or "
                      "load the module, a container's python)",
              fix=("python3 -c 'import sys; print(sys.executable, sys.prefix)'   # in the job script, on the line "
                   "before the one that failed: the interpreter that runs\n"
                   "python3 -m pip show torch 2>/dev/null | head -2 || echo 'no torch for this python'   # whether "
                   "that interpreter has torch\n"
                   "# then activate the environment torch is in before python runs (source ENV/bin/activate, or "
                   "conda activate ENV after source \"$(conda info --base)/etc/profile.d/conda.sh\"), or module "
                   "load the site's PyTorch module, in the job script itself"),
              evidence={**ticket_evidence(s), "torch.import_error": str(s.get("text") or "")[:300]})


@rule("SW002", "torch-cpu-only", "error", "a CPU-only torch build on a node with GPUs", impact=10,
      also={"warning": "torch said it was built without CUDA, and the paste shows no GPU listing to confirm one is there"})
def torch_cpu_only(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A torch build without CUDA or ROCm (a "+cpu" wheel, conda's cpu_mkl build, the cpuonly
        package) on a node where GPUs are present. In a pasted ticket, torch's own "Torch not
        compiled with CUDA enabled": an error beside a GPU listing, a warning without one (a
        machine without an NVIDIA GPU says it too), nothing beside a listing with no GPU. libtorch
        outside Python as a warning with its binding's fix: "PyTorch is not linked with support for
        cuda devices" (R's torch, C++) and tch's Cuda::is_available() printed false (Rust): a CPU
        libtorch, or a CUDA one whose torch_cuda library was never loaded.

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
    told = catalogued(f, "torch-cpu-only") or _installed_cpu_said(f)
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
                  fix=build_fix(f, gpus),
                  evidence={"torch.version": t.get("version"), "torch.build": t.get("build"),
                            "conda.pytorch": conda or None, "gpus": len(gpus)})


def _installed_cpu_said(f: FactView) -> list:
    """The user saying an install gave the CPU build instead of CUDA's, where the paste shows that
    install was PyTorch's (prose.toml): alone the words could be any framework's."""
    found = f.get("ticket.symptoms") or []
    said = [s for s in found if s.get("id") == "prose:cpu-build-installed-said" and stated(s)]
    return said if said and any(s.get("id") == "prose:conda-install-pytorch" for s in found) else []


# torch's version with the CPU wheels' local tag (knowledge/messages/faq_pytorch.toml).
_CPU_TAG = "faq_pytorch:torch-version-cpu-tag"
# torch's own answers to "built with CUDA?" as a print or a REPL shows them, and the user's words for
# what a PyTorch install gave (prose.toml): the build said, not a job that asked it for CUDA.
_BUILD_ANSWERED = {"prose:torch-version-cuda-none": "torch.version.cuda is None", "prose:cuda-is-built-false":
                   "torch.backends.cuda.is_built() is False", "prose:built-with-cuda-false": "a check script prints that torch was built without CUDA",
                   "prose:cpu-build-installed-said": "the user says the PyTorch install gave the CPU build instead of the CUDA one"}


# libtorch outside Python (knowledge/messages/torch.toml): R's torch, Rust's tch and C++ programs install or
# link their own libtorch, so the fix is that binding's, not a pip wheel.
_LIBTORCH_TOLD = ("torch:cuda-device-not-linked", "torch:tch-cuda-not-available")
_R_TORCH_FIX = ("Rscript -e \"options(timeout = 600, repos = c(CRAN = 'https://cloud.r-project.org')); kind <- 'cu128'; "
                "version <- available.packages()['torch', 'Version']; options(repos = c(torch = "
                "sprintf('https://torch-cdn.mlverse.org/packages/%s/%s/', kind, version), CRAN = 'https://cloud.r-project.org')); "
                "install.packages('torch')\"   # R torch's CUDA binaries (its installation guide: Linux and Windows, cpu or cu128); "
                "double-quoted, so it runs in cmd and PowerShell too\n"
                f"nvidia-smi   # the cu128 build runs on a driver of {wheels.required_driver('12.8')} or newer on Linux, "
                f"{wheels.required_driver('12.8', windows=True)} on Windows (CUDA 12's minor-version compatibility)")
_TCH_FIX = ("find target -path '*libtorch/lib*' -name '*torch_cuda*' | head -1   # nothing: torch-sys downloaded the CPU "
            "libtorch, its default\n"
            "export LIBTORCH_USE_PYTORCH=1   # link the active Python's torch (one whose torch.cuda.is_available() is True); "
            "or TORCH_CUDA_VERSION=cu128 for a downloaded CUDA libtorch\n"
            "cargo clean -p torch-sys && cargo build --release")
_CPP_FIX = ("ls \"${LIBTORCH:?set LIBTORCH to the libtorch folder the program links}/lib\" | grep -E 'torch_cuda|c10_cuda'   "
            "# none: a CPU-only libtorch; download the CUDA one from "
            "pytorch.org\n"
            "# with them there, link torch_cuda even where no symbol of it is used: -Wl,--no-as-needed -ltorch_cuda "
            "-Wl,--as-needed")


def _libtorch_cpu_told(f: FactView, s) -> Iterator[Hit]:
    """libtorch in R, Rust or C++ saying it has no CUDA: a CPU-only libtorch (the bindings' default
    download) or a CUDA one whose torch_cuda was never loaded, which the words alone do not tell apart."""
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    texts = " ".join(str(t.get("text", "")) for t in f.get("ticket.symptoms") or [])
    if s.get("id") == "torch:tch-cuda-not-available":
        who, fix = "tch's Cuda::is_available() is false", _TCH_FIX
    elif "Error in (function (self, device" in texts:   # R torch's call, as R prints the failing call
        who, fix = "R torch says libtorch has no CUDA support linked", _R_TORCH_FIX
    else:
        who, fix = "libtorch says no CUDA support is linked into the process", _CPP_FIX
    yield Hit(message=f"{who} ({said}): the libtorch in use is a CPU-only build (R's torch and Rust's tch install one "
                      "unless a CUDA build is asked for), or a CUDA libtorch whose torch_cuda library was never loaded",
              severity="warning", fix=fix, evidence=ticket_evidence(s))


def _cpu_build_told(f: FactView, s):
    """torch's own "Torch not compiled with CUDA enabled": the build is CPU-only and the job asked
    it for CUDA. With the node's GPUs listed it is the error above; without, a warning, since a
    machine with no NVIDIA GPU (a laptop, a Mac) raises it too, where the program is what to change."""
    if s.get("id") in _LIBTORCH_TOLD:
        yield from _libtorch_cpu_told(f, s)
        return
    gpus = f.get("gpus")
    if isinstance(gpus, list) and not gpus:
        return  # a listing with no GPU: the program asked a machine without one for CUDA
    if not gpus and said_no_gpu(f, mac=True):
        return  # the user says the machine has no NVIDIA GPU (a Mac, a CPU-only laptop): the program is what to change
    said = f"line {s.get('line')}: \"{str(s.get('text', '')).strip()[:100]}\""
    if s.get("have_torch"):
        # xFormers' warning names both builds: its own (for CUDA) and this environment's "+cpu" torch.
        said = f"xFormers, built for {s.get('built_torch')}, finds torch {s['have_torch']}, line {s.get('line')}"
    who = "the user says torch is a CPU-only build" if str(s.get("id", "")).startswith("prose:") else "torch says it was built without CUDA"
    who = _BUILD_ANSWERED.get(s.get("id"), who)
    if s.get("id") == _CPU_TAG:
        who = f"torch {s.get('version')}+cpu is PyTorch's CPU-only wheel (its +cpu tag)"
    check = ("python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'   "
             "# None: a CPU build in this environment")
    if gpus:
        yield Hit(message=f"{who} ({said}), and this node has {len(gpus)} GPU(s)",
                  fix=f"{check}\n{build_fix(f, gpus)}", evidence=ticket_evidence(s))
        return
    # The tag alone says which build, not that the job asked it for CUDA.
    asked = "" if s.get("id") == _CPU_TAG or s.get("id") in _BUILD_ANSWERED else " and the job asked it for CUDA"
    yield Hit(message=f"{who} ({said}): this environment's torch is a CPU-only build"
                      f"{asked}. On a machine with an NVIDIA GPU, install a CUDA build; on one "
                      "without (a Mac, a CPU node), the program must use the CPU or MPS",
              severity="warning", fix=f"{check}\nnvidia-smi   # the driver a CUDA build must run on; none: no NVIDIA GPU here",
              evidence=ticket_evidence(s))




@rule("SW003", "torch-missing-arch", "error", "the torch build has no kernels for this GPU", impact=10,
      also={"warning": "the build's CUDA is read from the user's own words (\"CUDA 9.0 pytorch 1.1.0\"), which may name the system toolkit"})
def torch_missing_arch(f: FactView) -> Iterator[Hit]:
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
        framework-missing-arch's. The cuBLAS case where the build's CUDA is known only from the
        user's own line naming CUDA and torch together ("CUDA 9.0 pytorch 1.1.0") is a warning:
        that CUDA may be the system toolkit's.

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
        if "torch:gpu-arch-not-compatible" in symptoms:
            yield _missing_arch_from_warning(f, symptoms)
        elif torch_hip_invalid_function(f):
            s = torch_hip_invalid_function(f)
            yield Hit(message=f"a HIP kernel has no code object for this GPU's gfx target (line {s['line']}: "
                              "\"HIP error: invalid device function\"): the ROCm build's arch list lacks the GPU",
                      fix="rocminfo | grep -m1 gfx; python -c 'import torch; print(torch.cuda.get_arch_list())'   "
                          "# then install a ROCm build of torch whose list has that gfx",
                      evidence=ticket_evidence(s))
        elif {"torch:gpu-cc-old-form", "torch:gpu-cc-list-form"} & set(symptoms):
            yield from _missing_arch_from_cc_warning(f, symptoms)
        else:
            cublas = list(_cublas_on_turing(f, symptoms))
            named = cublas or list(_missing_arch_from_named_build(f, symptoms))
            yield from named or _missing_arch_told(f)

    yield from facts_or_ticket(lambda: list(_missing_arch_from_facts(f)), from_ticket())


def _cublas_on_turing(f: FactView, symptoms):
    """torch's "cublas runtime error : the GPU program failed to execute" on a Turing GPU (7.5)
    under a torch built with CUDA 9.0 or older, read from collect_env ("CUDA used to build
    PyTorch: 9.0.176") or a wheel named with its tag (+cu90): its kernels run there by binary
    compatibility, its cuBLAS does not (knowledge/frameworks.toml, cublas_turing). A CUDA version
    named in prose says nothing of the build and is not read."""
    s = symptoms.get("torch:cublas-execution-failed")
    gpu = gpu_of_ticket(f) if s else None
    if gpu is None:
        return
    known = knowledge.load("frameworks")["cublas_turing"]
    if gpu["cc"] != known["cc"]:
        return
    named = symptoms.get("prose:torch-build-named")
    said = _versions_said(symptoms)
    build = f.get("torch.cuda")
    severity = None
    if build:
        where = f"torch is built with CUDA {build}"
    elif named:
        build = f"{named['cu'][:-1]}.{named['cu'][-1]}"
        where = f"torch {named['torch']}+cu{named['cu']} (line {named['line']}) is built with CUDA {build}"
    elif said:
        # The user's "CUDA 9.0 pytorch 1.1.0" may name the system toolkit, not the build: a warning.
        build, severity = said["cuda"], "warning"
        where = (f"the user names CUDA {build} with torch {said['torch']} (line {said['line']}), which, if it is "
                 "the CUDA torch was built with (torch.version.cuda), is too old")
    else:
        return
    release = version_of(str(build))
    if release is None or version_of(".".join(map(str, release.release[:2]))) > version_of(known["fails_up_to_cuda"]):
        return
    yield Hit(message=f"cuBLAS failed on {gpu['name']} (compute capability {gpu['cc']}, Turing; line {s['line']}: "
                      f"\"cublas runtime error : the GPU program failed to execute\"), and {where}: Turing needs a "
                      f"CUDA {known['needs_cuda']}+ build of torch (PyTorch's maintainers, pytorch#18620); its sm_70 "
                      "kernels run there, its CUDA 9 cuBLAS does not",
              fix=_said_check(said, severity) + build_fix(f, [{"compute_capability": gpu["cc"]}]), severity=severity,
              evidence={**ticket_evidence(s), "compute_capability": gpu["cc"], "torch.cuda": str(build),
                        **({"torch.cuda_from": "the user's words"} if severity else {})})


# The user's own line naming CUDA and torch together (knowledge/messages/prose.toml), either order.
_VERSIONS_SAID = ("prose:cuda-torch-versions-said", "prose:torch-cuda-versions-said")


def _versions_said(symptoms):
    """The first line where the user names a CUDA and a torch version together, or None."""
    said = [symptoms[k] for k in _VERSIONS_SAID if k in symptoms and symptoms[k].get("cuda") and symptoms[k].get("torch")]
    return min(said, key=lambda s: s.get("line") or 0) if said else None


def _said_check(said, severity) -> str:
    """Where the build's CUDA was read from the user's words, the line that tells it for certain."""
    if not severity or not said:
        return ""
    return "python -c 'import torch; print(torch.__version__, torch.version.cuda)'   # the CUDA torch was built with\n"


# torch's own CUDA checks print the runtime's text after these words (C10_CUDA_CHECK since 1.5,
# THCudaCheck before): a framework's kernels say it in their own words ("RMSNorm failed with error
# code ...") and are framework-missing-arch's.
_TORCH_CHECK_WORDS = ("CUDA error: ", "HIP error: ", "cuda runtime error (", "THCudaCheck FAIL")


def _missing_arch_told(f: FactView):
    """CUDA's "no kernel image is available for execution on the device" (or "invalid device
    function") raised through torch's own check, with nothing else in the ticket naming the
    architectures: the build, or an extension built against it, has no code for this GPU."""
    for s in catalogued(f, "torch-missing-arch"):
        if s.get("family") not in ("cuda", "hip") or not any(w in str(s.get("text", "")) for w in _TORCH_CHECK_WORDS):
            continue
        if s.get("family") == "hip" and str(s.get("text", "")).strip().startswith("HIP error: "):
            continue  # a library's own HIP check (rocALUTION prints the bare words); torch raises "...Error: HIP error: "
        if ggml_raised(f, s):
            continue  # ggml's own check printed the same words: its kernels' (framework-missing-arch)
        # Whose kernel image: torch's own wheels of the release named may carry the GPU (binary
        # compatibility within a major), or the user says plain torch runs: framework-missing-arch's.
        verdict = torch_build_verdict(f)
        if verdict["carries"] or torch_works_said(f):
            return
        if verdict["carries"] is None and first_symptom(f, "cmake_cuda:cuda-architectures-set") is not None:
            return  # the paste's own CMake build names the architectures it compiled: framework-missing-arch's
        gpu = gpu_of_ticket(f)
        if gpu:
            fix = build_fix(f, [{"compute_capability": gpu["cc"]}])
            about = f"{gpu['name']} (compute capability {gpu['cc']})"
        else:
            fix = ("python -c 'import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())'"
                   "   # the GPU's sm_XY must be in the list: else install a torch build that lists it")
            about = "this GPU"
        if verdict["carries"] is False:
            whose = (f"torch {verdict['torch']}'s official wheels"
                     + (f" (CUDA {verdict['cuda']})" if verdict.get("cuda") else "")
                     + f" carry no code for compute capability {gpu['cc']} (line {verdict['line']})")
        else:
            whose = (f"the torch build, or an extension built against it, lacks the GPU's architecture "
                     f"({verdict['why']}: whose kernel it was is not known)")
        yield Hit(message=f"a CUDA kernel has no code for {about} (line {s.get('line')}: \"{s.get('message') or s.get('key')}\"): "
                          f"{whose}", fix=fix, evidence=told_evidence(s))
        return


def _missing_arch_from_named_build(f: FactView, symptoms):
    """A torch wheel named with its CUDA tag ("torch==1.7.1+cu101") and a GPU named in the same
    ticket: a build whose CUDA predates every architecture of the GPU's major carries no code for
    it (knowledge/frameworks.toml [toolkit_arch]). Majors the table does not reach stay unjudged."""
    named = symptoms.get("prose:torch-build-named")
    gpu = gpu_of_ticket(f) if named else None
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
              fix=build_fix(f, [{"compute_capability": gpu["cc"]}]),
              evidence={**ticket_evidence(named), "compute_capability": gpu["cc"], "torch.cuda": str(build_cuda)})


def _missing_arch_from_cc_warning(f: FactView, symptoms):
    """torch's other capability warnings: before 2.8 "... which is of cuda capability X.Y" with the
    build's minimum (or "no longer supports this GPU"), from 2.8 "... compute capability (CC) X.Y"
    followed by the CCs the build supports. A capability above an old build's maximum but of the
    same major runs (binary compatibility within a major): torch warned all the same, no finding."""
    old = symptoms.get("torch:gpu-cc-old-form")
    new = symptoms.get("torch:gpu-cc-list-form")
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
        ranges = ticket_all(f, "torch:arch-cc-built-for")
        runs = [r for r in ranges if version_of(r["lo"]) <= cc < version_of(r["hi"])
                and warn["cc"] not in re.split(r"[,\s]+", r.get("except", ""))]
        if runs:
            return
        built = ", ".join(r["built"] for r in ranges)
        carries = f"the build supports CC {built}" if built else "torch lists it outside its build's CCs"
    yield Hit(message=f"{warn.get('gpu')} is compute capability {warn['cc']}, but {carries} (torch's warning, "
                      f"line {warn['line']}): \"no kernel image is available for execution on the device\"",
              fix=build_fix(f, [{"compute_capability": warn["cc"]}]), evidence=ticket_evidence(warn))




def _missing_arch_from_facts(f: FactView):
    t = f["torch"]
    arch = t.get("arch_list")
    if t.get("build") == "cuda":
        arch_list_not_known(f, t, cuda_gpus(f))
    if t.get("build") != "cuda" or not isinstance(arch, list) or not arch:
        return
    for g in cuda_gpus(f):
        cc = g.get("compute_capability")
        if isinstance(cc, str) and not wheels.arch_supported(cc, arch):
            sm = "sm_" + cc.replace(".", "")
            yield Hit(message=f"{g.get('name')} is {sm}, but torch {t.get('version')} carries "
                              f"{', '.join(arch)}: \"no kernel image is available for execution on the device\"",
                      subject=f"GPU {g.get('index')}", fix=build_fix(f, [g]),
                      evidence={"compute_capability": cc, "torch.arch_list": arch})


def _missing_arch_from_warning(f: FactView, symptoms):
    """torch's own warning, pasted without an environment report: it names the GPU, its
    architecture and, on its next line, the build's arch list."""
    warn = symptoms["torch:gpu-arch-not-compatible"]
    sm = f"sm_{warn['sm']}"
    listed = symptoms.get("torch:arch-list-reported", {}).get("archs")
    carries = f"this torch carries {', '.join(listed.split())}" if listed else "this torch does not carry it"
    return Hit(message=f"{warn.get('gpu')} is {sm}, but {carries} (torch's warning, line {warn['line']}): "
                       "\"no kernel image is available for execution on the device\"",
               fix=build_fix(f, [{"compute_capability": f"{sm[3:-1]}.{sm[-1]}"}]), evidence={"ticket.line": warn["line"], "ticket.text": warn["text"][:160]})
