"""The NVIDIA driver against the torch build's CUDA."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._builds import build_fix, node_platform
from hpcdoctor.rules._stacks import TF_CUDA_CHECK, stack_of_ticket
from hpcdoctor.rules.gpu_access import libs_not_bound_in_container
from hpcdoctor.rules._common import (DRIVER_JIT_FAILED, NO_GPU_ON_MACHINE, NO_GPU_REACHABLE, RUNS_WITHOUT_GPU, catalogued,
                                     cuda_gpus, facts_or_ticket, first_symptom, said_no_gpu, ticket_evidence, ticket_symptoms,
                                     told_evidence, told_text, version_of)


@rule("SW004", "driver-too-old", "error", "the NVIDIA driver is too old for the torch build's CUDA", impact=10,
      also={"warning": "versions the ticket states (a driver in the user's words or nvidia-smi's banner, torch.version.cuda's "
                       "answer, a +cuXYZ wheel, conda's cudatoolkit) judged through NVIDIA's minimum drivers, with no "
                       "program's message naming the fault"})
def driver_too_old(f: FactView) -> Iterator[Hit]:
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
        a newer CUDA than the driver's JIT compiler), and the JIT's own log of it ("ptxas
        application ptx input, line 5; fatal : Unsupported .version 6.0; current version is
        '5.0'") beside error 218 (a PTX JIT compilation failed). PaddlePaddle's "compiled with CUDA 11.7, but CUDA
        runtime version in your machine is 11.4" (the number being the driver's CUDA version): another
        major is the error, an older minor a warning (minor-version compatibility), equal is nothing. Error 35 in TensorFlow's or JAX's words
        ("cudaGetDevice() failed. Status: CUDA driver version is insufficient ...") is answered
        for their build, not torch's. A bare error 35 (no driver version with it) is said with both
        its causes, a driver older than the runtime or no libcuda.so.1 loadable at all, which the
        runtime reports in the same words (CuPy without libcuda, recorded on an H200:
        tests/fixtures/pastes/h200-env-cupy-libcuda-missing.txt). Where no message names the fault, versions the ticket states:
        the build's CUDA (torch.version.cuda answered in a REPL or print, a "+cu100" wheel, the
        cudatoolkit in conda's plan) against the driver nvidia-smi's banner or the user gives, or
        the user saying the driver is too old: a warning, the versions judged through NVIDIA's
        minimum drivers (CUDA Toolkit release notes, Table 3), not a failure shown.

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
    yield from facts_or_ticket(lambda: list(_driver_too_old_from_facts(f)), _driver_too_old_in_ticket(f))




def _driver_too_old_in_ticket(f: FactView):
    """torch's own verdict pasted: "driver on your system is too old (found version 12080)", the
    number being the driver's CUDA version (cudaDriverGetVersion), or CUDA runtime error 35."""
    if libs_not_bound_in_container(f):
        return  # error 35 in a container given the GPU's nodes but not libcuda: the run, not the host's driver
    sym = ticket_symptoms(f)
    hit = sym.get("torch:driver-too-old") or sym.get("torch:driver-insufficient")
    if no_driver_shown(f) is not None and _error_35(f) is not None and (hit is None or not hit.get("driver_cuda")):
        return  # error 35 where the paste says no GPU is there: cuda-build-on-node-without-gpu answers both causes
    if hit is None:
        yield from _driver_too_old_told(f)
        return
    stack = stack_of_ticket(f) if hit.get("id") == "torch:driver-insufficient" else None
    if stack is not None:
        # CUDA's error 35 in TensorFlow's or JAX's words: their build's CUDA, not torch's
        yield Hit(message=f"the NVIDIA driver is older than the CUDA {_STACK_NAMES[stack]} was built with (line {hit['line']}: "
                          f"{hit['text'][:120]})",
                  fix=_STACK_DRIVER_FIX[stack], evidence=ticket_evidence(hit))
        return
    found = hit.get("driver_cuda")
    driver_cuda = f"{int(found) // 1000}.{int(found) % 1000 // 10}" if found else None
    tag = _wheel_for_driver_cuda(driver_cuda) if driver_cuda else None
    built = "the CUDA of this torch build" if _torch_said(f, hit) else "the CUDA the program was built with"
    if tag:
        fix = f"pip install torch --index-url https://download.pytorch.org/whl/{tag}   # or ask the administrators for a newer driver"
        said = f"the driver supports CUDA {driver_cuda} only, older than {built}"
    elif driver_cuda:
        fix = "nvidia-smi   # shows the CUDA version the driver supports: ask the administrators for a newer driver, or install a torch built for that CUDA"
        said = f"the driver supports CUDA {driver_cuda} only, older than {built}"
    else:
        # Bare error 35 names no driver version: the runtime returns it for a driver older than
        # itself and for no driver library at all (torch's device count tells the two apart by
        # cudaDriverGetVersion, c10/cuda/CUDAFunctions.cpp; CuPy and a CUDA program print 35 for
        # both: tests/fixtures/pastes/h200-env-cupy-libcuda-missing.txt, libcuda.so.1 hidden).
        fix = _ERROR_35_FIX
        said = (f"CUDA runtime error 35: the driver is older than {built}, or no driver library (libcuda.so.1) "
                "could be loaded where the program ran, which the runtime reports in the same words")
    yield Hit(message=f"{said} (line {hit['line']}: {hit['text'][:120]})",
              fix=fix, evidence={**ticket_evidence(hit), "nvidia.cuda_driver_version": driver_cuda})


_ERROR_35_FIX = ("nvidia-smi | head -4   # a table: the driver's version and the highest CUDA it runs; an error or "
                 "'command not found': no usable driver where the program ran\n"
                 "ldconfig -p | grep -F libcuda.so.1   # nothing: the driver's CUDA library is not installed (or, in a "
                 "container, not mounted: docker run --gpus all, apptainer exec --nv)\n"
                 "# a driver older than the program's CUDA: ask the administrators for a newer driver, or install a build "
                 "of the program for the CUDA nvidia-smi shows")


def _torch_said(f: FactView, hit: dict) -> bool:
    """Whether the error-35 line is torch's: torch's own words, or a traceback through torch. The
    runtime's sentence is the same in any CUDA program (CuPy, a CUDA binary)."""
    if hit.get("id") == "torch:driver-too-old" or "torch" in str(hit.get("text", "")).lower():
        return True
    return any(str(s.get("id", "")).startswith("torch:") and s.get("id") not in _ERROR_35
               for s in f.get("ticket.symptoms") or [])


# PaddlePaddle's CUDA check (knowledge/messages/paddle.toml): its "CUDA runtime version in your machine" is the
# driver's CUDA version (cudaDriverGetVersion) from Paddle 1.8; logged only where it is older than the build's.
_PADDLE_CUDA = ("paddle:cuda-older-than-built", "paddle:cuda-and-cudnn-major-older")


def _paddle_cuda_older(f: FactView, s: dict):
    from hpcdoctor.rules.libraries import paddle_release
    if s.get("id") == "paddle:cuda-and-cudnn-major-older":
        found, built = paddle_release(s.get("found_cuda")), paddle_release(s.get("compiled_cuda"))
    else:
        found, built = paddle_release(s.get("found")), paddle_release(s.get("compiled"))
    if not found or not built or found >= built[:len(found)]:
        return None
    said = ".".join(map(str, found)), ".".join(map(str, built))
    note = ticket_symptoms(f).get("paddle:device-properties")
    seen = (f"; Paddle's note on line {note.get('line')} gives the driver's CUDA {note.get('driver_cuda')} and the "
            f"runtime's {note.get('runtime_cuda')}") if note else ""
    fix = ("nvidia-smi | head -4   # the driver and the highest CUDA it runs\n"
           "python -c 'import paddle; print(paddle.version.cuda())'   # the CUDA this Paddle was built with\n"
           f"# install the Paddle wheel built for CUDA {said[0]} or older (paddlepaddle.org.cn/install), "
           f"or ask the administrators for a driver that runs CUDA {said[1]}")
    evidence = {**told_evidence(s), "paddle.built_cuda": said[1], "driver.cuda": said[0]}
    if found[0] != built[0]:
        return Hit(message=f"PaddlePaddle was built with CUDA {said[1]} and the NVIDIA driver runs CUDA {said[0]} at most "
                           f"(line {s.get('line')}: \"{told_text(s)}\"{seen}): another major, so its CUDA calls fail",
                   fix=fix, evidence=evidence)
    return Hit(message=f"PaddlePaddle was built with CUDA {said[1]} and the NVIDIA driver's CUDA is {said[0]} (line "
                       f"{s.get('line')}: \"{told_text(s)}\"{seen}): the same major, so CUDA's minor-version compatibility "
                       "runs most of it, but kernels JIT-compiled from PTX and APIs newer than the driver fail",
               severity="warning", fix=fix, evidence=evidence)


def _driver_too_old_told(f: FactView):
    """CUDA's own words for it, in any program's wording (the catalogue entries that feed
    driver-too-old): error 35, "CUDA driver version is insufficient for CUDA runtime version";
    36, an API call that needs a newer driver; 222, PTX newer than the driver's JIT compiler."""
    for s in catalogued(f, "driver-too-old"):
        if s.get("id") in _PADDLE_CUDA:
            hit = _paddle_cuda_older(f, s)
            if hit is None:
                continue
            yield hit
            return
        yield Hit(message=f"the NVIDIA driver is older than the CUDA this program was built with ({s.get('key')}, "
                          f"line {s.get('line')}: \"{told_text(s)}\")",
                  fix="nvidia-smi | head -4   # the highest CUDA this driver runs: install a build of that CUDA or older, "
                      "or ask the administrators for a newer driver",
                  evidence=told_evidence(s))
        return
    jit = _driver_jit_too_old(f)
    if jit is not None:
        yield jit
        return
    yield from _driver_too_old_stated(f)


def _driver_jit_too_old(f: FactView):
    """The driver's PTX JIT refusing PTX of a newer ISA than it knows: its log ("ptxas application ptx
    input, line 5; fatal : Unsupported .version 6.0; current version is '5.0'") beside the JIT's own
    error (218, a PTX JIT compilation failed). The driver, not a toolkit's ptxas, assembled it."""
    jit = first_symptom(f, *DRIVER_JIT_FAILED)
    s = first_symptom(f, "ptxas:unsupported-version")
    if jit is None or s is None:
        return None
    given, known = version_of(str(s.get("ptx") or "")), version_of(str(s.get("current") or ""))
    if given is None or known is None or given <= known:
        return None
    return Hit(message=f"the NVIDIA driver's PTX JIT compiler knows PTX ISA up to {s['current']} and was given PTX {s['ptx']} "
                       f"(line {s.get('line')}: \"{told_text(s)}\", with {jit.get('key')} on line {jit.get('line')}): the PTX "
                       "was written by a newer CUDA toolchain than this driver supports, so the driver is too old for it",
               fix="nvidia-smi | head -4   # the driver and the highest CUDA it runs\n"
                   f"# ask the administrators for a driver whose CUDA knows PTX {s['ptx']}, or have the program emit PTX of "
                   f"ISA {s['current']} or older (its code generator's PTX version option, or a build for an older CUDA)",
               evidence={**told_evidence(s), "jit.line": jit.get("line")})


def _build_cuda_stated(f: FactView):
    """The CUDA runtime a ticket shows the environment using, with where it says so: torch's own
    answer (torch.version.cuda in a REPL or print; the last one, a ticket that upgraded shows the
    build before and after), a wheel named with its tag (+cu100), or the cudatoolkit conda's plan
    installs. None where the ticket shows none."""
    answers = [s for s in f.get("ticket.symptoms") or [] if s.get("id") == "prose:torch-version-cuda-said"]
    sym = ticket_symptoms(f)
    if answers:
        s = answers[-1]
        return s["cuda"], f"torch.version.cuda answers {s['cuda']} (line {s['line']})", s
    named = sym.get("prose:torch-build-named")
    if named:
        cuda = f"{named['cu'][:-1]}.{named['cu'][-1]}"
        return cuda, f"torch {named['torch']}+cu{named['cu']} (line {named['line']}) is built with CUDA {cuda}", named
    planned = sym.get("conda:cudatoolkit-planned")
    if planned:
        return planned["cuda"], f"conda installs cudatoolkit {planned['cuda']} (line {planned['line']})", planned
    return None


def _newest_cuda_for_driver(driver: str, windows: bool, config=None):
    """The newest CUDA release of NVIDIA's table (knowledge/cuda.toml) this driver runs: it reaches the
    release's own driver, or the minimum wheels.required_driver gives (from CUDA 11 its major's
    minor-version minimum, which for 11.0 is above 11.0's own 450.36.06)."""
    have = version_of(driver)
    if have is None:
        return None
    own = knowledge.load("cuda")["release_driver_windows" if windows else "release_driver"]
    runs = [rel for rel, need in own.items()
            if any(v is not None and have >= v
                   for v in (version_of(need), version_of(wheels.required_driver(rel, windows, config) or "")))]
    return max(runs, key=version_of) if runs else None


def _driver_too_old_stated(f: FactView):
    """Versions a ticket states, with no program's message naming the fault: the CUDA the build
    uses (_build_cuda_stated) against the driver a pasted nvidia-smi shows or the user states,
    through NVIDIA's minimum drivers (knowledge/cuda.toml); or, where no driver is stated, the
    user's own words that the driver is too old. A warning: versions read from prose and judged
    through a table, not the failure itself."""
    build = _build_cuda_stated(f)
    if build is None:
        return
    cuda, where, s = build
    sym = ticket_symptoms(f)
    windows = "prose:windows-said" in sym
    need = wheels.required_driver(cuda, windows, f.config)
    if need is None:
        return
    listed = [g.get("driver_version") for g in cuda_gpus(f) if g.get("driver_version")]
    said = sym.get("nvidia_smi:banner") or sym.get("prose:driver-version-said")
    if listed:
        driver, driver_where = listed[0], "the pasted nvidia-smi"
    elif said:
        driver, driver_where = said["driver"], f"line {said['line']}: \"{str(said.get('text', ''))[:80]}\""
    else:
        driver = None
    if driver is not None:
        ok, why = wheels.driver_supports(driver, cuda, windows, f.config)
        if ok is not False:
            return
        runs = _newest_cuda_for_driver(driver, windows, f.config)
        if runs and s.get("id") == "conda:cudatoolkit-planned":
            fix = (f"conda install cudatoolkit={runs}   # the newest CUDA driver {driver} runs (NVIDIA's minimum drivers); "
                   f"or ask the administrators for a driver >= {need}")
        else:
            fix = ("nvidia-smi | head -4   # the driver and the highest CUDA it runs"
                   + (f" ({runs} for {driver})" if runs else "")
                   + f": install a build of that CUDA or older, or ask the administrators for a driver >= {need}")
        yield Hit(message=f"{where}; the driver is {driver} ({driver_where}): {why}",
                  fix=fix,
                  evidence={**ticket_evidence(s), "torch.cuda": cuda, "nvidia.driver_version": driver},
                  severity="warning")
        return
    told = sym.get("prose:driver-too-old-said")
    if told is None:
        return
    yield Hit(message=f"the user says the NVIDIA driver is too old (line {told['line']}: \"{str(told.get('text', ''))[:100]}\"), "
                      f"and {where}: CUDA {cuda} needs a driver >= {need}",
              fix=f"nvidia-smi | head -4   # the driver's version: below {need}, ask the administrators for a newer one, "
                  "or install a torch built for the CUDA it runs",
              evidence={**ticket_evidence(told), "torch.cuda": cuda},
              severity="warning")


def _wheel_for_driver_cuda(driver_cuda: str):
    """The newest CUDA variant of the official wheels that a driver of this CUDA version runs
    without minor-version compatibility (knowledge/torch_wheels.toml)."""
    have = version_of(driver_cuda)
    cudas = {w["cuda"] for w in knowledge.load("torch_wheels").get("wheel", []) if w.get("cuda")}
    fitting = [c for c in cudas if version_of(c) and version_of(c) <= have]
    if not fitting:
        return None
    return "cu" + max(fitting, key=version_of).replace(".", "")


def _driver_too_old_from_facts(f: FactView):
    t = f["torch"]
    if t.get("build") != "cuda" or not t.get("cuda") or not cuda_gpus(f):
        return
    driver = f.get("nvidia.driver_version") or cuda_gpus(f)[0].get("driver_version")
    if not driver:
        raise MissingFact("nvidia.driver_version", f.reason("nvidia.driver_version"))
    windows = node_platform(f)[0] == "windows"
    ok, why = wheels.driver_supports(driver, t["cuda"], windows, f.config)
    ok = ok is not False
    if not ok and t.get("cuda_available") is True:
        # torch initialised CUDA on this driver: CUDA's forward-compatibility package (cuda-compat,
        # data-centre GPUs, as NGC containers ship it) bridges the gap. Not an error.
        return
    if not ok:
        yield Hit(message=f"torch {t.get('version')} uses CUDA {t['cuda']}, driver {driver} is too old: {why}",
                  fix=build_fix(f, cuda_gpus(f)),
                  evidence={"torch.cuda": t["cuda"], "nvidia.driver_version": driver,
                            "nvidia.cuda_driver_version": f.get("nvidia.cuda_driver_version")})


_STACK_NAMES = {"tensorflow": "TensorFlow", "jax": "jaxlib"}
# JAX's installation guide (docs/installation.md at jax-v0.8.1): the driver must be >= 525 for the
# CUDA 12 wheels and >= 580 for the CUDA 13 ones.
_STACK_DRIVER_FIX = {
    "tensorflow": f"{TF_CUDA_CHECK}\nnvidia-smi | head -4   # the highest CUDA this driver runs: install a TensorFlow "
                  "built for that CUDA or older, or ask the administrators for a newer driver",
    "jax": "nvidia-smi | head -4   # the driver's version: jax[cuda12] needs 525 or newer, jax[cuda13] 580 or newer (JAX's "
           "installation guide)\npip install -U \"jax[cuda12]\"   # on a driver of 525 to 579",
}


_ERROR_35 = ("torch:driver-insufficient", "cuda:cudaErrorInsufficientDriver")
_NO_DRIVER_FIX = ("nvidia-smi   # 'command not found' or \"couldn't communicate with the NVIDIA driver\": no NVIDIA driver on this node; "
                  "a table: the driver's version, then an old driver is the cause\n"
                  "ldconfig -p | grep -F libcuda.so.1   # nothing: the CUDA driver library the runtime loads is not installed\n"
                  "# on CPU nodes install the framework's CPU build (pip install paddlepaddle, not paddlepaddle-gpu; "
                  "pip install torch --index-url https://download.pytorch.org/whl/cpu), or run the job on a GPU node")


def _error_35(f: FactView):
    """CUDA runtime error 35 pasted, in any program's wording: None where it is not."""
    sym = ticket_symptoms(f)
    return next((sym[k] for k in _ERROR_35 if k in sym), None) or next(
        (s for s in catalogued(f, "driver-too-old")
         if "insufficient for cuda runtime" in str(s.get("text", "")).lower()), None)


def no_driver_shown(f: FactView):
    """The paste's statement that no GPU is there, where it shows no driver either (no nvidia-smi
    listing or banner, no driver version in the user's words): None otherwise."""
    sym = ticket_symptoms(f)
    # the user's words (a CPU node or cluster, the template's device line; not a Mac) or a framework's own
    # start-up notice (Paddle's): any line whose catalogue entry claims no GPU
    said = said_no_gpu(f, NO_GPU_ON_MACHINE, RUNS_WITHOUT_GPU, NO_GPU_REACHABLE)
    if said is None or cuda_gpus(f) or "nvidia_smi:banner" in sym or "prose:driver-version-said" in sym:
        return None
    return said


@rule("ENV090", "cuda-build-on-node-without-gpu", "warning",
      "CUDA error 35 where the paste says the node has no GPU: no NVIDIA driver installed, or an older one", impact=6)
def cuda_build_on_node_without_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        CUDA runtime error 35, cudaErrorInsufficientDriver ("CUDA driver version is insufficient
        for CUDA runtime version", in any program's wording), in a paste that says the job runs
        where there is no GPU: a CPU node or cluster, an issue template's device line answered
        "CPU", "I haven't gpu on this computer", "a system that does not have a Cuda driver", or a GPU build's own notice that it found none
        (PaddlePaddle's "Compiled with WITH_GPU, but no GPU found in runtime."), and that shows no
        driver (no nvidia-smi listing or version). A warning naming both causes.

    Why it matters:
        The CUDA runtime returns error 35 both when the installed driver is older than the runtime
        and when no driver (libcuda.so.1) is installed at all, as on a CPU-only node: a GPU build of
        the framework was installed or scheduled where no GPU is. Upgrading a driver that is not
        there does not help; the job needs the CPU build, or a GPU node.

    How to fix:
        Run nvidia-smi and look for libcuda.so.1 on the node: with no driver, install the
        framework's CPU build (paddlepaddle rather than paddlepaddle-gpu, torch's CPU wheels) or
        run the job on a GPU node; with a driver listed, it is older than the build's CUDA.

    References:
        - https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html (cudaErrorInsufficientDriver = 35)
        - https://github.com/PaddlePaddle/Paddle/issues/14625 (a CUDA build on a CPU cluster: the maintainer, install the CPU build)
        - https://github.com/PaddlePaddle/Paddle/issues/12237 (Compiled with WITH_GPU, but no GPU found, then error 35)
    """
    said = no_driver_shown(f)
    if said is None:
        return
    err = _error_35(f)
    if err is None:
        return
    yield Hit(message=f"CUDA error 35 (line {err.get('line')}: \"{told_text(err)}\") where the paste says no GPU or no NVIDIA driver is there "
                      f"(line {said.get('line')}: \"{told_text(said)}\"): the CUDA runtime returns it when no NVIDIA driver is "
                      "installed at all, as on a CPU-only node, as well as when the driver is older than the runtime; "
                      "a GPU build of the program is running where there is no GPU",
              fix=_NO_DRIVER_FIX, evidence=told_evidence(err))
