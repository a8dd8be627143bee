"""TensorFlow and JAX against the CUDA libraries and GPUs they find: a CUDA library of another
version than the framework was built against, a JAX without CUDA on a machine with NVIDIA GPUs, and
jax and jaxlib that do not go together. Read from the catalogues tensorflow.toml, jax.toml, xla.toml."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, cuda_gpus, first_symptom, told_evidence, told_text
from hpcdoctor.rules._stacks import JAX_CUDA_FIX, TF_CUDA_CHECK, TF_CUDA_FIX, stack_of_ticket, tf_tested_build


@rule("SW035", "cuda-library-version-mismatch", "error",
      "a CUDA library of another version than the framework was built against", impact=9,
      also={"warning": "TensorFlow's issue template names a release and a CUDA version its build cannot load, beside a GPU not found"})
def cuda_library_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the framework's own check that a CUDA library other than cuDNN it
        loaded is not the version it was built against: JAX's CUDA plugin's "Outdated CUDA
        installation found" (the CUDA runtime, minimum 12010 = 12.1), and the same for cuBLAS
        (120100 = 12.1.0), cuFFT, cuSPARSE (12100 = 12.1.0) and cuPTI (API version 18), and jax
        0.4.14 to 0.4.25's "Found CUDA version X, but JAX was built against version Y, which is
        newer". cuDNN's version, in every framework (the stream executor's "Loaded runtime CuDNN
        library", JAX's "Outdated cuDNN installation found", its cuDNN 9.10.0 refusals), is
        cudnn-version-mismatch's. JAX checks no NCCL version (it only loads libnccl.so.2).
        TensorFlow's issue template naming a release and a CUDA version that release's build cannot
        load (its tested configuration's CUDA; before CUDA 11 the minor must match too) beside a GPU
        not found: a warning, since the CUDA installed is not always the one found.

    Why it matters:
        The library named cannot be used: JAX falls back to the CPU or fails. The library
        loaded is usually not the one the framework's install brought: an older copy on
        LD_LIBRARY_PATH, a system or conda cuDNN, or torch's pinned nvidia-cudnn wheel in the same
        environment.

    How to fix:
        JAX: unset LD_LIBRARY_PATH (JAX's installation guide: it can override the NVIDIA CUDA
        libraries of the pip wheels) and reinstall with pip install -U "jax[cuda12]"
        (jax[cuda13] where the driver is 580 or newer). TensorFlow 2.14+ on Linux: pip install -U
        "tensorflow[and-cuda]", which brings the CUDA and cuDNN wheels of the versions it was built
        for; tf.sysconfig.get_build_info() names them.

    References:
        - https://docs.jax.dev/en/latest/installation.html (jax-v0.8.1 docs/installation.md: LD_LIBRARY_PATH, jax[cuda12], drivers)
        - https://www.tensorflow.org/install/pip (tensorflow[and-cuda]; the extra in the tensorflow 2.15.0 wheel's METADATA)
        - https://github.com/jax-ml/jax/issues/15268 (maintainer: "we found a CuDNN v8.5, but JAX was built against CuDNN v8.6")
        - https://github.com/conda-forge/jax-feedstock/issues/149 (conda's cuDNN 8.9 under jax 0.4.31)
    """
    told = catalogued(f, "cuda-library-version-mismatch")
    if not told:
        yield from _tf_template_cuda(f)
        return
    s = told[0]
    if s.get("id") in _TF_TRT:
        yield Hit(message=f"TensorFlow was built against TensorRT {s.get('compiled')} and loaded TensorRT {s.get('found')} "
                          f"(line {s.get('line')}: \"{told_text(s)}\"): its TensorRT integration needs the release it was "
                          "built with",
                  fix=_TF_TRT_FIX.format(compiled=s.get("compiled")), evidence=told_evidence(s))
        return
    stack = stack_of_ticket(f)
    library = {"CUDA": "CUDA runtime"}.get(s.get("library"), s.get("library") or "CUDA library")
    # the plugin's minimum where it prints one (it can exceed the version it was built against)
    found, built = s.get("found"), s.get("compiled") or s.get("minimum") or s.get("built")
    versions = f": {found} loaded, {built} expected" if found and built else ""
    if stack == "tensorflow":
        fix = f"{TF_CUDA_CHECK}\n{TF_CUDA_FIX}"
        who = "TensorFlow"
    elif stack == "jax":
        fix = JAX_CUDA_FIX
        who = "JAX"
    else:
        fix = (f"{JAX_CUDA_FIX}\n# TensorFlow instead: {TF_CUDA_FIX}")
        who = "the framework (TensorFlow or jaxlib)"
    yield Hit(message=f"{who} loaded a {library} of another version than it was built against{versions} (line "
                      f"{s.get('line')}: \"{told_text(s)}\"): an older copy shadows the one its install brought",
              fix=fix, evidence=told_evidence(s))


# A GPU not found, in the user's words or TensorFlow's listing (faq_pytorch.toml, faq_jax_tf.toml).
_NOT_FOUND = ("faq_pytorch:gpu-not-detected-said", "faq_jax_tf:tf-not-using-gpu-said", "faq_jax_tf:tf-num-gpus-zero")


def _tf_template_cuda(f: FactView) -> Iterator[Hit]:
    """TensorFlow's issue template with a TensorFlow release and a CUDA version that is not the one its
    tested build configuration names (knowledge/tensorflow_gpu_builds.toml), beside a GPU not found.
    TensorFlow loads the CUDA runtime by the build's version: before CUDA 11 the major and minor
    (libcudart.so.10.1, cudart64_101.dll), from 11 the major (libcudart.so.11.0 for every 11.x): a
    CUDA 10.2 does not serve a build for 10.1, and a 11.8 serves one for 11.2. A warning: the user's
    CUDA is the one they installed, the one the loader finds may be another."""
    tf_said, cuda_said = first_symptom(f, "prose:tensorflow-version-said"), first_symptom(f, "prose:tf-template-cuda-said")
    lost = first_symptom(f, *_NOT_FOUND)
    if not (tf_said and cuda_said and lost):
        return
    build = tf_tested_build(str(tf_said.get("tensorflow") or ""))
    if build is None:
        return
    built, have = str(build["cuda"]), str(cuda_said.get("cuda"))
    b_major, h_major = built.split(".")[0], have.split(".")[0]
    if (b_major == h_major) if int(b_major) >= 11 else (built == have):
        return
    runtime = built if int(b_major) < 11 else f"{b_major}.0" if b_major == "11" else b_major
    yield Hit(message=f"TensorFlow {build['version']} was built and tested with CUDA {built}, and the CUDA installed is "
                      f"{have} (line {cuda_said.get('line')}), while the GPU is not found (line {lost.get('line')}): "
                      "TensorFlow loads the CUDA runtime of its build's version (before CUDA 11 its major and minor), "
                      f"libcudart.so.{runtime}, which a CUDA {have} does not provide",
              severity="warning",
              fix=(f"{TF_CUDA_CHECK}\n# install CUDA {built} with cuDNN {build['cudnn']} (the tested configuration of "
                   f"TensorFlow {build['version']}), or a TensorFlow release whose tested configuration names the CUDA "
                   "you have (tensorflow.org/install/source#gpu)"),
              evidence={**told_evidence(cuda_said), "tensorflow": build["version"], "built_cuda": built})


# TF-TRT's own version check (knowledge/messages/tensorflow.toml): TensorRT is not among the CUDA
# wheels tensorflow[and-cuda] brings, so the fix is the TensorRT release TensorFlow names.
_TF_TRT = ("tensorflow:tf-trt-version-mismatch", "tensorflow:tf-trt-major-too-old")
_TF_TRT_FIX = ("ldconfig -p | grep libnvinfer; echo \"$LD_LIBRARY_PATH\"   # which libnvinfer is found first\n"
               "# install TensorRT {compiled} (the release this TensorFlow was built against) and put its lib folder "
               "first, or use a TensorFlow built for the TensorRT you have (NVIDIA's TensorFlow container pairs them)")


@rule("SW036", "jax-without-cuda", "warning", "a JAX without CUDA on a machine with NVIDIA GPUs", impact=7,
      also={"advice": "nothing but JAX's own warning says JAX is what the program runs"})
def jax_without_cuda(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, JAX's "An NVIDIA GPU may be present on this machine, but a CUDA-enabled
        jaxlib is not installed. Falling back to cpu.", which JAX prints only where an NVIDIA
        device node exists (/dev/nvidia0, or /dev/dxg under WSL) and no CUDA backend was
        installed: jax and jaxlib without the jax-cuda plugin. A warning where the paste shows the
        program using JAX (its devices, its other messages), advice where the warning is all there
        is: a JAX that another package pulled in, while the job runs on torch, does no harm. A
        warning too for jax's older "No GPU/TPU found, falling back to CPU" where the log is at
        TF_CPP_MIN_LOG_LEVEL=0 (XLA's "initialized for platform" lines shown), names only the CPU's
        platforms (Host, Interpreter) and holds no CUDA line: a jaxlib with CUDA would have tried
        its GPU client and logged it. On a
        node, the same install seen in the job's Python (jax and jaxlib without a jax-cuda plugin,
        jaxlib not a +cuda build) beside NVIDIA GPUs, as advice: nothing says the job uses JAX.

    Why it matters:
        Everything JAX computes runs on the CPU, tens of times slower, without an error.

    How to fix:
        Install JAX with its CUDA plugin and NVIDIA's CUDA wheels: pip install -U "jax[cuda12]"
        (jax[cuda13] on a driver of 580 or newer), per JAX's installation guide; the CUDA plugin
        needs Linux on x86_64 or aarch64.

    References:
        - https://docs.jax.dev/en/latest/installation.html (jax-v0.8.1 docs/installation.md)
        - https://github.com/ziatdinovmax/gpax/issues/63 (fixed by installing the CUDA build)
        - https://github.com/JeffSHF/ColabDock/issues/28 (pip install -U "jax[cuda12]")
    """
    told = [s for s in catalogued(f, "jax-without-cuda") if s.get("id") != _XLA_SERVICE]
    if not told:
        cpu_only = _fell_back_without_trying_cuda(f)
        if cpu_only is not None:
            yield cpu_only
            return
        yield from _jax_without_cuda_installed(f)
        return
    s = told[0]
    used = any(t.get("family") == "jax" and t.get("id") != s.get("id") for t in f.get("ticket.symptoms") or [])
    yield Hit(message=f"JAX found an NVIDIA GPU but has no CUDA backend, so it runs on the CPU (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): jax and jaxlib are installed without the jax-cuda plugin",
              severity="warning" if used else "advice",
              fix="python -c 'import jax; print(jax.__version__, jax.devices())'   # [CpuDevice(id=0)]: no CUDA backend\n"
                  + JAX_CUDA_FIX.split("\n", 1)[1],
              evidence=told_evidence(s))


@rule("SW037", "jax-jaxlib-mismatch", "error", "jax and jaxlib installed at versions that do not go together", impact=8)
def jax_jaxlib_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, jax's check of jaxlib at import: "jaxlib is version X, but this
        version of jax requires version >= Y", "jaxlib version X is newer than and incompatible
        with jax version Y", "jax requires jaxlib to be installed", and the CUDA plugin of
        another release than jaxlib ("Mismatched PJRT plugin PJRT API version (0.54) and framework
        PJRT API version 0.51)").

    Why it matters:
        jax cannot be imported at all: jax and jaxlib are released together and each jax needs a
        jaxlib no older than its minimum and no newer than itself. It comes from upgrading one of
        the two alone, or from a pinned jaxlib (a CUDA wheel from an old index) beside a newer jax.

    How to fix:
        Install the two together at one version: pip install -U "jax[cuda12]" with NVIDIA GPUs
        (it pins jaxlib and the CUDA plugin to jax's version), pip install -U jax on a CPU machine.

    References:
        - https://docs.jax.dev/en/latest/jep/9419-jax-versioning.html (jax and jaxlib versioning)
        - https://github.com/Zuricho/ParallelFold/issues/13 (jaxlib 0.1.69 under jax 0.2.26)
        - https://github.com/jax-ml/jax/issues/22416 (jaxlib 0.4.28+cuda12 beside a newer CUDA plugin)
    """
    told = catalogued(f, "jax-jaxlib-mismatch")
    if not told:
        return
    s = told[0]
    said = _versions_said(s)
    yield Hit(message=f"jax and jaxlib do not go together{said} (line {s.get('line')}: \"{told_text(s)}\"): jax cannot be imported",
              fix="pip list 2>/dev/null | grep -E '^(jax|jaxlib|jax-cuda[0-9]+-(plugin|pjrt)) '   # the versions installed\n"
                  "pip install -U \"jax[cuda12]\"   # with NVIDIA GPUs: jax, jaxlib and the CUDA plugin at one version "
                  "(a CPU machine: pip install -U jax)",
              evidence=told_evidence(s))


def _versions_said(s: dict) -> str:
    jaxlib, minimum, jax = s.get("jaxlib"), s.get("minimum"), s.get("jax")
    if jaxlib and minimum:
        return f": jaxlib {jaxlib} is older than the {minimum} this jax requires"
    if jaxlib and jax:
        return f": jaxlib {jaxlib} is newer than jax {jax}"
    if s.get("key") == "jaxlib-not-installed":
        return ": jaxlib is not installed"
    if s.get("plugin") and s.get("framework"):
        return f": the CUDA plugin speaks PJRT {s['plugin']}, jaxlib {s['framework']} (two releases)"
    return ""


_XLA_SERVICE = "xla:service-initialized-for-platform"
_CPU_PLATFORMS = frozenset({"Host", "Interpreter"})
_GPU_FAMILIES = frozenset({"cuda", "cuda_driver", "cudnn", "cublas", "hip", "hsa", "nvml", "nvidia_smi"})


def _fell_back_without_trying_cuda(f: FactView):
    """jax <= 0.4.13's "No GPU/TPU found, falling back to CPU" in a log at TF_CPP_MIN_LOG_LEVEL=0 (XLA's
    service lines shown) whose every platform is the CPU's and where no line speaks of CUDA or a GPU
    backend: a jaxlib with CUDA tries its GPU client and logs it (a CUDA platform, or cuInit's and the
    driver's lines when it fails); one without CUDA logs nothing of the kind."""
    told = f.get("ticket.symptoms") or []
    fell = next((s for s in told if s.get("id") == "jax:no-gpu-tpu-found"), None)
    platforms = [str(s.get("platform")) for s in told if s.get("id") == _XLA_SERVICE]
    if fell is None or not platforms or not set(platforms) <= _CPU_PLATFORMS:
        return None
    tried = [s for s in told if s.get("family") in _GPU_FAMILIES
             or (s.get("family") in ("xla", "jax") and s.get("id") not in (_XLA_SERVICE, "jax:no-gpu-tpu-found"))]
    if tried:
        return None
    return Hit(message=f"JAX fell back to the CPU (line {fell.get('line')}), and its log, at the level that shows XLA's "
                       f"platforms, names only {', '.join(sorted(set(platforms)))}: no CUDA platform was tried and the log shown holds no CUDA "
                       "line, so the jaxlib installed has no CUDA backend (the CPU build)",
               fix="python -c 'import jax, jaxlib; print(jax.__version__, jaxlib.__version__, jax.devices())'   "
                   "# [CpuDevice(id=0)]: no CUDA backend\n" + JAX_CUDA_FIX.split("\n", 1)[1],
               evidence=told_evidence(fell), severity="warning")


def _jax_without_cuda_installed(f: FactView) -> Iterator[Hit]:
    """The job's Python has jax and jaxlib but no CUDA backend for them (no jax-cuda12/13 plugin or
    pjrt wheel; jaxlib not one of the old "+cuda" builds) on a node with NVIDIA GPUs: advice."""
    packages = f["torch"].get("packages") or {}
    jaxlib = packages.get("jaxlib")
    if not packages.get("jax") or not jaxlib or not cuda_gpus(f):
        return
    plugins = sorted(n for n in packages if n.startswith("jax-cuda"))
    if plugins or "+cuda" in str(jaxlib):
        return
    yield Hit(message=f"jax {packages['jax']} and jaxlib {jaxlib} are installed without a CUDA plugin on a node with "
                      f"{len(cuda_gpus(f))} NVIDIA GPU(s): anything this Python runs with JAX runs on the CPU",
              severity="advice", fix=JAX_CUDA_FIX.split("\n", 1)[1],
              evidence={"torch.packages.jax": packages["jax"], "torch.packages.jaxlib": jaxlib})
