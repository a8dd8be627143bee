"""Which framework a pasted ticket is about (torch, TensorFlow, JAX), for the rules whose fix
depends on it: a CUDA library TensorFlow cannot open is fixed with TensorFlow's own install, not
torch's, and a JAX one with JAX's."""

from __future__ import annotations

import re
from typing import Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

# JAX's installation guide (jax-ml/jax docs/installation.md at jax-v0.8.1): the pip CUDA wheels are
# "jax[cuda12]" (driver >= 525) and "jax[cuda13]" (driver >= 580); LD_LIBRARY_PATH "can override the
# NVIDIA CUDA libraries", so it must not be set.
JAX_CUDA_FIX = ("unset LD_LIBRARY_PATH   # JAX's guide: it can override the CUDA libraries of the pip wheels\n"
                "pip install -U \"jax[cuda12]\"   # jax, jaxlib, the CUDA plugin and NVIDIA's CUDA wheels it was built "
                "for; jax[cuda13] where the driver is 580 or newer")
# The tensorflow 2.15.0 wheel: extra "and-cuda" (the nvidia-* CUDA 12 and cuDNN wheels, pinned), and
# tf.sysconfig.get_build_info() with keys cuda_version, cudnn_version, cuda_compute_capabilities.
TF_CUDA_CHECK = ("python3 -c 'import tensorflow as tf; b = tf.sysconfig.get_build_info(); "
                 "print(tf.__version__, b.get(\"cuda_version\"), b.get(\"cudnn_version\"))'   "
                 "# what this TensorFlow was built for")
TF_CUDA_FIX = ("pip install -U \"tensorflow[and-cuda]\"   # Linux, TensorFlow 2.14+: NVIDIA's CUDA and cuDNN wheels "
               "of the versions it was built for")


def tf_tested_build(version: str) -> Optional[dict]:
    """TensorFlow's tested build configuration (knowledge/tensorflow_gpu_builds.toml) for a release as a
    user states it: "2.8.0", "2.8" (its .0), or a release line whose patch the table lists."""
    builds = {r["version"]: r for r in knowledge.load("tensorflow_gpu_builds")["release"]}
    return builds.get(version) or builds.get(f"{version}.0") or next(
        (b for v, b in builds.items() if v.rsplit(".", 1)[0] == version), None)


# Whole words: jaxtyping in a torch traceback is not JAX, tensorflow_datasets beside torch names TensorFlow
# only where TensorFlow itself is named.
_TF_WORD = re.compile(r"(?i)\btensorflow\b")
_JAX_WORD = re.compile(r"(?i)\bjax(?:lib)?\b")


def stack_of_ticket(f: FactView) -> Optional[str]:
    """"tensorflow" or "jax" where the pasted messages are that framework's own (its catalogue's
    entries, or a line naming it); None where they name neither, or both."""
    told = f.get("ticket.symptoms") or []
    families = {s.get("family") for s in told}
    named = " ".join(str(s.get("text", "")) for s in told)
    tf = "tensorflow" in families or bool(_TF_WORD.search(named))
    jax = "jax" in families or bool(_JAX_WORD.search(named))
    if tf and not jax:
        return "tensorflow"
    if jax and not tf:
        return "jax"
    return None


def tf_or_jax_framework_missing_arch(f: FactView) -> Optional[Hit]:
    """TensorFlow ignoring a GPU older than its build's minimum compute capability (or an AMD GPU
    its ROCm build has no code for), for framework-missing-arch: the first such line, or None."""
    s = next((s for s in catalogued(f, "framework-missing-arch") if s.get("family") == "tensorflow"), None)
    if s is None:
        return None
    if s.get("min_cc"):
        said = (f"TensorFlow ignores the GPU (compute capability {s.get('cc')}): this TensorFlow build's kernels start at "
                f"compute capability {s['min_cc']}, so it runs on the CPU")
        fix = (f"{TF_CUDA_CHECK.replace('cuda_version', 'cuda_compute_capabilities')}\n"
               "# no official build lists this GPU: run TensorFlow on a GPU of the capability printed, or build it from "
               "source with the GPU's capability in TF_CUDA_COMPUTE_CAPABILITIES (./configure asks for it)")
    else:
        said = (f"the ROCm build of TensorFlow ignores the GPU ({s.get('isa')}): it carries no code for this GPU's "
                f"target ({s.get('min_isa') or s.get('supported')})")
        fix = ("rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # the GPU's target: use a TensorFlow-ROCm release that lists it, "
               "or build it with the target added")
    return Hit(message=f"{said} (line {s.get('line')}: \"{told_text(s)}\")", fix=fix, evidence=told_evidence(s))
