"""XLA (JAX, TensorFlow) not finding libdevice, the CUDA math library in LLVM bitcode that it links
into GPU kernels, because the CUDA it should use is not among the directories it searches
(knowledge/messages/xla.toml; a user's own words in prose.toml)."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, stated, told_evidence, told_text

SYMBOL = "xla-libdevice-not-found"
# what stops the compile, then XLA's warning that it will, then the user's words
_ORDER = ("xla:libdevice-not-found-at", "xla:libdevice-required-not-found", "xla:libdevice-dir-not-found",
          "prose:libdevice-not-found-said")
_FIX = ("ls \"${CUDA_HOME:-$CUDA_PATH}\"/nvvm/libdevice/libdevice.10.bc   # the CUDA the job loaded (module load cuda sets "
        "CUDA_HOME or CUDA_PATH on most sites) holds it\n"
        "export XLA_FLAGS=\"--xla_gpu_cuda_data_dir=${CUDA_HOME:-$CUDA_PATH} $XLA_FLAGS\"   # the directory above nvvm/; "
        "in the batch script, before python\n"
        "# or let pip bring it: pip install -U \"jax[cuda12]\" (the nvidia-cuda-nvcc-cu12 wheel ships nvvm/libdevice/libdevice.10.bc)")


@rule("SW057", SYMBOL, "error", "XLA (JAX, TensorFlow) cannot find libdevice in the CUDA directories it searches", impact=6,
      also={"warning": "XLA's warning alone, or XLA_FLAGS naming a CUDA directory without libdevice",
            "info": "the user's words that libdevice is not found"})
def xla_libdevice_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, XLA not finding libdevice: "libdevice not found at ./libdevice.10.bc"
        (jaxlib's "INTERNAL:" or TensorFlow's op error) and "libdevice is required by this HLO
        module but was not found at ...", errors; "Can't find libdevice directory
        ${CUDA_DIR}/nvvm/libdevice", a warning (it fails once a kernel needs a math routine); and
        the user's own words that libdevice is missing or not detected, as information. Live, as a
        warning: XLA_FLAGS=--xla_gpu_cuda_data_dir naming a directory without
        nvvm/libdevice/libdevice.10.bc (checks/named_paths.py).

    Why it matters:
        XLA links libdevice (nvvm/libdevice/libdevice.10.bc) into any GPU kernel that uses a math
        function. It searches --xla_gpu_cuda_data_dir, the NVIDIA pip wheels' paths, the CUDA
        path its build was configured with and /usr/local/cuda; a CUDA from a cluster's module
        (jax[cuda12_local], TensorFlow with a site CUDA) is elsewhere, so the first jitted kernel
        fails although CUDA itself loads.

    How to fix:
        Point XLA at the CUDA that holds nvvm/libdevice: XLA_FLAGS=--xla_gpu_cuda_data_dir=$CUDA_HOME
        (the directory above nvvm), or install the pip CUDA wheels (jax[cuda12]) that ship it.

    References:
        - https://github.com/openxla/xla/blob/main/xla/service/gpu/llvm_gpu_backend/nvptx_libdevice_path.cc
        - https://github.com/openxla/xla/blob/main/xla/debug_options_flags.cc (xla_gpu_cuda_data_dir)
        - https://docs.jax.dev/en/latest/installation.html (NVIDIA GPU, local CUDA)
        - https://github.com/jax-ml/jax/issues/22590
    """
    told = [s for s in catalogued(f, SYMBOL) if s.get("id") != "prose:libdevice-not-found-said" or stated(s)]
    if not told:
        live = f.get("named_paths.xla_cuda_data_dir")
        if isinstance(live, dict) and live.get("libdevice") is False:
            yield Hit(message=f"XLA_FLAGS points XLA at {live.get('path')} for CUDA, which holds no nvvm/libdevice/libdevice.10.bc: "
                              "JAX and TensorFlow kernels that need a math routine will fail to compile",
                      fix=_FIX, evidence={"named_paths.xla_cuda_data_dir": live}, severity="warning")
        return
    s = min(told, key=lambda t: _ORDER.index(t["id"]) if t.get("id") in _ORDER else len(_ORDER))
    sid = s.get("id")
    if sid == "prose:libdevice-not-found-said":
        yield Hit(message=f"the user says libdevice is not found (line {s.get('line')}: \"{told_text(s)}\"): the usual cause "
                          "(XLA's own message) is a CUDA installed outside the directories XLA searches, such as a "
                          "cluster's CUDA module",
                  fix=_FIX, evidence=told_evidence(s), severity="info")
        return
    at = f" (it looked for {s['path']})" if s.get("path") else ""
    warned = sid == "xla:libdevice-dir-not-found"
    yield Hit(message=f"XLA found no libdevice in the CUDA directories it searched{at} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): {'kernels that need a math routine will fail to compile' if warned else 'the compile failed'}",
              fix=_FIX, evidence=told_evidence(s), severity="warning" if warned else None)
