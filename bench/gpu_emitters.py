#!/usr/bin/env python3
"""Record what the emitters really print on a GPU node (issue 24), for triage to be tested on.

    python3 bench/gpu_emitters.py OUTDIR [CASE...]   # on a node with one NVIDIA GPU and CUDA torch

Each case makes one library state its own fault, the way a user's program meets it: torch's
caching allocator out of memory (alone, and beside another process that holds the card), an
ordinal that does not exist, CUDA_VISIBLE_DEVICES hiding the GPU, a device-side assert, a kernel
that writes to an unmapped address (torch through Triton, and CuPy), a CUDA binary built only for
another architecture, NCCL given an interface or a network or a topology file that is not there
or two ranks on one GPU, JAX without a visible GPU or out of memory, Triton asking for more shared
memory than the SM has, nvidia-smi asked for a GPU that is not there, and healthy runs of the same
tools as controls.

OUTDIR/<case>.txt holds the case's stdout and stderr as a terminal shows them (what a user
pastes), OUTDIR/manifest.json the command, environment changes, exit status and time of each.
The kernel log's NVIDIA lines are read last (dmesg), since the faulting kernels raise Xids.
Nothing here changes the GPU's settings: every fault is a process's own and ends with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = os.environ.get("PYTHON", sys.executable)
HERE = Path(__file__).resolve().parent

DIST = """
import os, torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29517")
dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
t = torch.ones(4, device="cuda"); dist.all_reduce(t); torch.cuda.synchronize()
print("all_reduce", t.tolist()); dist.destroy_process_group()
"""

# Two ranks on one GPU: every rank sets cuda:0, as a job script that forgets LOCAL_RANK does.
DIST_SAME_GPU = """
import torch, torch.distributed as dist
dist.init_process_group("nccl", device_id=torch.device("cuda:0"))
t = torch.ones(4, device="cuda:0"); dist.all_reduce(t); torch.cuda.synchronize()
print("rank", dist.get_rank(), "all_reduce", t.tolist()); dist.destroy_process_group()
"""

# Another process holds three quarters of the card: torch's out-of-memory message then names it
# by pid. Sized from the card, not a fixed figure, so an 80 GB H100 and a 141 GB H200 both meet it.
HELD_BY_OTHER = """
import subprocess, sys, torch
total = torch.cuda.get_device_properties(0).total_memory
hog = subprocess.Popen([sys.executable, "-c", "import sys, time, torch; x = torch.empty(int(sys.argv[1]), "
                        "dtype=torch.uint8, device='cuda'); print('holding', flush=True); time.sleep(60)",
                        str(total * 3 // 4)], stdout=subprocess.PIPE, text=True)
try:
    if hog.stdout.readline().strip() != "holding":
        sys.exit("the holding process did not start")
    torch.empty(total // 2, dtype=torch.uint8, device="cuda")
finally:
    hog.kill()
    hog.wait()
"""

TRITON_BAD_STORE = """
import torch, triton, triton.language as tl
@triton.jit
def poke(p):
    tl.store(p + (1 << 40), 1.0)
x = torch.zeros(1, device="cuda")
poke[(1,)](x)
torch.cuda.synchronize()
"""

TRITON_SHARED = """
import torch, triton, triton.language as tl
@triton.jit
def mm(a, b, c, N: tl.constexpr, B: tl.constexpr):
    r = tl.arange(0, B)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k in range(0, N, B):
        x = tl.load(a + r[:, None] * N + (k + r)[None, :])
        y = tl.load(b + (k + r)[:, None] * N + r[None, :])
        acc += tl.dot(x, y)
    tl.store(c + r[:, None] * N + r[None, :], acc)
n = 1024
a = torch.randn(n, n, device="cuda", dtype=torch.float16); b = torch.randn_like(a); c = torch.empty(n, n, device="cuda")
mm[(1,)](a, b, c, N=n, B=512, num_stages=4)
torch.cuda.synchronize()
"""

CUPY_BAD_STORE = """
import cupy
k = cupy.RawKernel(r'extern "C" __global__ void poke(float* p) { p[1LL << 40] = 1.0f; }', "poke")
k((1,), (1,), (cupy.zeros(1, dtype=cupy.float32),))
cupy.cuda.runtime.deviceSynchronize()
"""

CU_SOURCE = r"""
#include <cstdio>
#include <cuda_runtime.h>
// The CUDA samples' check (helper_cuda.h's checkCudaErrors) prints code, name and call like this.
#define check(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
  fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\": %s\n", __FILE__, __LINE__, (int)e, \
          cudaGetErrorName(e), #call, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }
int main() {
  float* x; check(cudaMalloc(&x, 32 * sizeof(float)));
  scale<<<1, 32>>>(x); check(cudaGetLastError()); check(cudaDeviceSynchronize());
  printf("ok\n"); return 0;
}
"""

HEALTHY_TORCH = (
    "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), "
    "torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0)); "
    "a = torch.randn(1024, 1024, device='cuda'); print(float((a @ a).sum()) == float((a @ a).sum()))"
)


def cases(work: Path):
    """(name, argv, environment changes, seconds): in the order they run."""
    py = [PY, "-c"]
    yield "nvidia-smi", ["nvidia-smi"], {}, 20
    yield "torch-healthy", py + [HEALTHY_TORCH], {}, 60
    yield "torch-oom", py + ["import torch; torch.empty(200 << 30, dtype=torch.uint8, device='cuda')"], {}, 60
    yield "torch-invalid-ordinal", py + ["import torch; torch.zeros(1, device='cuda:4')"], {}, 60
    yield "torch-visible-devices-empty", py + [
        "import torch; print('available:', torch.cuda.is_available()); torch.zeros(1, device='cuda')"
    ], {"CUDA_VISIBLE_DEVICES": ""}, 60
    yield "torch-visible-devices-bad-uuid", py + [
        "import torch; print('count:', torch.cuda.device_count()); torch.zeros(1, device='cuda')"
    ], {"CUDA_VISIBLE_DEVICES": "GPU-00000000-0000-0000-0000-000000000000"}, 60
    yield "torch-device-assert", py + [
        "import torch; x = torch.arange(4, device='cuda'); i = torch.tensor([7], device='cuda'); print(x[i].tolist())"
    ], {}, 60
    yield "torch-alloc-conf-bad", py + ["import torch; torch.zeros(1, device='cuda')"], {
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segment:True"}, 60
    # Triton compiles a kernel from its source file, so these two run as scripts, not with -c.
    (work / "triton_bad_store.py").write_text(TRITON_BAD_STORE)
    (work / "triton_shared.py").write_text(TRITON_SHARED)
    yield "torch-triton-illegal-address", [PY, str(work / "triton_bad_store.py")], {}, 90
    yield "cupy-illegal-address", py + [CUPY_BAD_STORE], {}, 60
    yield "triton-out-of-shared-memory", [PY, str(work / "triton_shared.py")], {}, 90
    yield "nccl-healthy-info", py + [DIST], {"NCCL_DEBUG": "INFO"}, 60
    yield "nccl-socket-ifname-missing", py + [DIST], {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "ib9"}, 60
    yield "nccl-net-ib-missing", py + [DIST], {"NCCL_DEBUG": "WARN", "NCCL_NET": "IB"}, 60
    (work / "dist_same_gpu.py").write_text(DIST_SAME_GPU)
    yield "nccl-two-ranks-one-gpu", [PY, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                                     "--master-port", "29519", str(work / "dist_same_gpu.py")], {
        "NCCL_DEBUG": "WARN"}, 90
    yield "nccl-topo-file-missing", py + [DIST], {"NCCL_DEBUG": "WARN", "NCCL_TOPO_FILE": "/etc/nccl/topo.xml"}, 60
    yield "jax-visible-devices-empty", py + ["import jax; print(jax.devices())"], {
        "CUDA_VISIBLE_DEVICES": "", "JAX_PLATFORMS": "cuda"}, 90
    yield "jax-oom", py + [
        "import jax, jax.numpy as jnp; print(jax.devices()); x = jnp.ones((60 << 30,), jnp.float32); print(x.sum())"
    ], {}, 90
    yield "torch-oom-gpu-held-by-other-process", py + [HELD_BY_OTHER], {}, 120
    # A process capped by torch.cuda.set_per_process_memory_fraction asking past its cap: the caching
    # allocator's out-of-memory with its "<size> allowed;" part, against the card's own out-of-memory.
    yield "torch-oom-memory-fraction", py + [
        "import torch; torch.cuda.set_per_process_memory_fraction(0.25); "
        "torch.empty(torch.cuda.get_device_properties(0).total_memory // 2, dtype=torch.uint8, device='cuda')"
    ], {}, 60
    yield "nvidia-smi-bad-index", ["nvidia-smi", "-i", "7"], {}, 20
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    src = work / "scale.cu"
    src.write_text(CU_SOURCE)
    # Built for Blackwell alone: an H100 (sm_90) has no kernel image to run.
    yield "cuda-no-kernel-image", ["bash", "-c",
        f"{nvcc} -arch=sm_100a -o {work}/scale_sm100 {src} && {work}/scale_sm100"], {}, 120
    yield "cuda-healthy", ["bash", "-c", f"{nvcc} -arch=sm_90 -o {work}/scale_sm90 {src} && {work}/scale_sm90"], {}, 120
    yield "mpirun-as-root", ["bash", "-c", "mpirun --version | head -2; mpirun -n 1 hostname"], {}, 30


def run_case(name, argv, env_changes, seconds, out: Path) -> dict:
    env = dict(os.environ, **env_changes)
    start = time.monotonic()
    with open(out / f"{name}.txt", "wb") as fh:
        try:
            rc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=seconds).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
        except OSError as exc:
            fh.write(f"(could not start: {exc})\n".encode())
            rc = "not started"
    took = round(time.monotonic() - start, 2)
    print(f"== {name}: rc={rc} in {took} s", flush=True)
    shown = [argv[0], "-c", "<script in bench/gpu_emitters.py>"] if argv[1:2] == ["-c"] else argv
    return {"case": name, "argv": shown, "env": env_changes, "rc": rc, "seconds": took}


def main() -> int:
    out = Path(sys.argv[1])
    # OUTDIR CASE...: only the cases named (a second lease for the ones that need another try).
    only = set(sys.argv[2:])
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp())
    manifest = {"recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": PY, "cases": []}
    for name, argv, env_changes, seconds in cases(work):
        if not only or name in only:
            manifest["cases"].append(run_case(name, argv, env_changes, seconds, out))
    if only:
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        return 0
    manifest["cases"].append(run_case("dmesg-nvidia", ["bash", "-c",
        "dmesg -T 2>&1 | grep -iE 'nvrm|xid|nvidia' | tail -n 60"], {}, 20, out))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
