#!/usr/bin/env python3
"""Record what the emitters print when a GPU node's environment, not the program, is at fault.

    python3 bench/gpu_env_emitters.py OUTDIR [CASE...]   # as root, on a node with one NVIDIA GPU

bench/gpu_emitters.py makes programs fail on a sound node. This makes the node unsound the ways
tickets meet it, each in a private mount namespace (bench/env_fault.sh) that ends with the case:
a container started without the NVIDIA device nodes, device nodes only root may open, a driver
install without libnvidia-ml or libcuda, the CUDA toolkit's stub libcuda found first, a loader
cache that lists no libcuda (Triton), a driver without its PTX JIT compiler, a torch without
cuDNN, CuPy without NVRTC, and JAX beside another JAX process that preallocated the card. The
same namespaces then run `hpcdoctor check`, whose node-side rules must see each fault live, and
record a redacted snapshot of each (OUTDIR/snapshot-<fault>.tar.gz) for tests to replay.

OUTDIR/<case>.txt holds what a terminal shows (stdout and stderr), OUTDIR/manifest.json each
case's command, environment, exit status and time. Nothing here changes the GPU's settings or
the node's files: every mount lives in the namespace, every process ends with its case.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import site
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gpu_emitters import CU_SOURCE, DIST, PY, run_case  # noqa: E402

FAULT = ["unshare", "-m", "--propagation", "private", "bash", str(HERE / "env_fault.sh")]

TORCH_INIT = (
    "import torch; print('available:', torch.cuda.is_available(), 'count:', torch.cuda.device_count()); "
    "print(torch.zeros(1, device='cuda'))"
)
TORCH_NVML = (
    "import torch; print('count:', torch.cuda.device_count()); print(torch.zeros(1, device='cuda')); "
    "print('utilization:', torch.cuda.utilization())"
)
TORCH_CONV = (
    "import torch; print(torch.__version__, torch.backends.cudnn.is_available()); "
    "x = torch.randn(1, 3, 32, 32, device='cuda'); w = torch.randn(8, 3, 3, 3, device='cuda'); "
    "print(torch.nn.functional.conv2d(x, w).shape)"
)
TRITON_ADD = """
import torch, triton, triton.language as tl
@triton.jit
def add(x, y, out, n, B: tl.constexpr):
    i = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out + i, tl.load(x + i, mask=i < n) + tl.load(y + i, mask=i < n), mask=i < n)
a = torch.ones(1000, device="cuda"); b = torch.ones_like(a); c = torch.empty_like(a)
add[(4,)](a, b, c, a.numel(), B=256)
print(float(c.sum()))
"""
CUPY_KERNEL = (
    "import cupy as cp; k = cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x * 2', 'dbl'); "
    "print(k(cp.ones(4, dtype=cp.float32)))"
)
NUMBA_INIT = "from numba import cuda; print(cuda.gpus); print(cuda.to_device([1.0, 2.0]).copy_to_host())"
JAX_INIT = "import jax, jax.numpy as jnp; print(jax.devices()); print(float(jnp.ones(4).sum()))"
# Another JAX process holds the card first: JAX preallocates three quarters of it by default.
JAX_BESIDE_JAX = """
import subprocess, sys
hog = subprocess.Popen([sys.executable, "-c", "import time, jax.numpy as jnp; jnp.ones(4).block_until_ready(); "
                        "print('holding', flush=True); time.sleep(90)"], stdout=subprocess.PIPE, text=True)
try:
    if hog.stdout.readline().strip() != "holding":
        sys.exit("the holding process did not start")
    import jax, jax.numpy as jnp
    print(jax.devices())
    x = jnp.ones((8 << 30,), jnp.float32)
    print(float(x.sum()))
finally:
    hog.kill()
    hog.wait()
"""


def hd(*args: str) -> list[str]:
    return [PY, "-m", "hpcdoctor", "check", "--python", PY, "--fail-on", "never", *args]


def snap(path: Path) -> list[str]:
    """A redacted snapshot of the node as the fault leaves it: the facts the live rules read, for
    tests to replay."""
    return [PY, "-m", "hpcdoctor", "snapshot", "--redact", "--python", PY, str(path)]


def site_libs(*patterns: str) -> list[str]:
    """Globs of the pip packages' copies of a library (torch's own cuDNN, CuPy's NVRTC)."""
    roots = site.getsitepackages() + [site.getusersitepackages()]
    return [f"{r}/{p}" for r in roots for p in patterns if glob.glob(f"{r}/{p}")]


def cases(work: Path, out: Path):
    """(name, argv, environment changes, seconds): in the order they run."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    src = work / "scale.cu"
    src.write_text(CU_SOURCE)
    sass, ptx = work / "scale_sm90", work / "scale_ptx90"
    yield "build", ["bash", "-c", f"{nvcc} -arch=sm_90 -o {sass} {src} && "
                    f"{nvcc} -gencode arch=compute_90,code=compute_90 -o {ptx} {src} && ls -l {work}"], {}, 120
    fresh = {"TRITON_CACHE_DIR": str(work / "triton"), "CUPY_CACHE_DIR": str(work / "cupy"),
             "CUDA_CACHE_DISABLE": "1"}

    nodes = FAULT + ["no-dev-nodes", "--"]
    yield "nvidia-smi-no-device-nodes", nodes + ["nvidia-smi"], {}, 30
    yield "torch-no-device-nodes", nodes + [PY, "-c", TORCH_INIT], {}, 60
    yield "check-no-device-nodes", nodes + hd(), {}, 60
    yield "snapshot-no-device-nodes", nodes + snap(out / "snapshot-no-device-nodes.tar.gz"), {}, 90

    root_only = FAULT + ["root-only-nodes", "--"]
    yield "nvidia-smi-root-only-nodes", root_only + ["nvidia-smi"], {}, 30
    yield "torch-root-only-nodes", root_only + [PY, "-c", TORCH_INIT], {}, 60
    yield "check-root-only-nodes", root_only + hd(), {}, 60
    yield "snapshot-root-only-nodes", root_only + snap(out / "snapshot-root-only-nodes.tar.gz"), {}, 90

    no_nvml = FAULT + ["hide-lib", "libnvidia-ml.so*", "--"]
    yield "nvidia-smi-nvml-missing", no_nvml + ["nvidia-smi"], {}, 30
    yield "torch-nvml-missing", no_nvml + [PY, "-c", TORCH_NVML], {"PYTORCH_NVML_BASED_CUDA_CHECK": "1"}, 60
    yield "nccl-nvml-missing", no_nvml + [PY, "-c", DIST], {"NCCL_DEBUG": "INFO"}, 60
    yield "check-nvml-missing", no_nvml + hd(), {}, 60
    yield "snapshot-nvml-missing", no_nvml + snap(out / "snapshot-nvml-missing.tar.gz"), {}, 90

    no_libcuda = FAULT + ["hide-lib", "libcuda.so*", "--"]
    yield "torch-libcuda-missing", no_libcuda + [PY, "-c", TORCH_INIT], {}, 60
    yield "jax-libcuda-missing", no_libcuda + [PY, "-c", JAX_INIT], {"JAX_PLATFORMS": "cuda"}, 90
    yield "cupy-libcuda-missing", no_libcuda + [PY, "-c", CUPY_KERNEL], fresh, 60
    yield "numba-libcuda-missing", no_libcuda + [PY, "-c", NUMBA_INIT], {}, 60
    yield "check-libcuda-missing", no_libcuda + hd(), {}, 60
    yield "snapshot-libcuda-missing", no_libcuda + snap(out / "snapshot-libcuda-missing.tar.gz"), {}, 90

    stub = FAULT + ["stub-libcuda", "--"]
    yield "torch-stub-libcuda", stub + [PY, "-c", TORCH_INIT], {}, 60
    yield "cuda-stub-libcuda", stub + [str(sass)], {}, 30
    yield "check-stub-libcuda", stub + hd(), {}, 60
    yield "snapshot-stub-libcuda", stub + snap(out / "snapshot-stub-libcuda.tar.gz"), {}, 90

    (work / "triton_add.py").write_text(TRITON_ADD)
    yield "triton-libcuda-not-found", FAULT + ["empty-ldconfig", "--", "env", "-u", "LD_LIBRARY_PATH",
                                               PY, str(work / "triton_add.py")], fresh, 120

    # The PTX-only binary first without the JIT compiler: its cache is off, so neither run
    # reuses the other's translation.
    yield "cuda-ptx-jit-missing", FAULT + ["hide-lib", "libnvidia-ptxjitcompiler.so*", "--", str(ptx)], fresh, 30
    yield "cuda-ptx-jit-healthy", [str(ptx)], fresh, 60

    cudnn = site_libs("nvidia/cudnn/lib/libcudnn*.so*", "nvidia/cu13/lib/libcudnn*.so*")
    yield "torch-cudnn-missing", FAULT + ["hide-lib", "libcudnn*.so*", *cudnn, "--", PY, "-c", TORCH_CONV], {}, 90
    # CuPy looks for NVRTC in the pip packages and under CUDA_PATH as well as the loader's cache.
    nvrtc = site_libs("nvidia/cuda_nvrtc/lib/libnvrtc*.so*", "nvidia/cu13/lib/libnvrtc*.so*")
    nvrtc += [g for g in ("/usr/local/cuda*/lib64/libnvrtc*.so*", "/usr/local/cuda*/targets/*/lib/libnvrtc*.so*")
              if glob.glob(g)]
    yield "cupy-nvrtc-missing", FAULT + ["hide-lib", "libnvrtc*.so*", *nvrtc, "--", PY, "-c", CUPY_KERNEL], fresh, 90

    yield "jax-beside-jax", [PY, "-c", JAX_BESIDE_JAX], {}, 150


def main() -> int:
    out = Path(sys.argv[1])
    only = set(sys.argv[2:])
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o777)  # the root-only case's snapshot is written by nobody
    work = Path(tempfile.mkdtemp())
    os.chmod(work, 0o755)  # the root-only case runs as nobody and execs nothing from here
    manifest = {"recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": PY, "cases": []}
    for name, argv, env_changes, seconds in cases(work, out):
        if not only or name in only or name == "build":
            manifest["cases"].append(run_case(name, argv, env_changes, seconds, out))
            (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    if not only:
        manifest["cases"].append(run_case("dmesg-nvidia", ["bash", "-c",
            "dmesg -T 2>&1 | grep -iE 'nvrm|xid|nvidia' | tail -n 40"], {}, 20, out))
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
