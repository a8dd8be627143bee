"""CPU precision and math-library settings."""

from __future__ import annotations

from hpcdoctor.engine import Hit, rule


@rule("CPU001", "cpu-bf16-fpmath", "advice", "fp32 math on a bf16-capable CPU without oneDNN fast math",
      impact=6)
def cpu_bf16_fpmath(f):
    """
    What it detects:
        A CPU node whose CPU computes in bf16 natively (x86 avx512_bf16 or amx_bf16; Arm bf16 or
        svebf16) while DNNL_DEFAULT_FPMATH_MODE is unset, so oneDNN runs fp32 matmuls and
        convolutions in full fp32.

    Why it matters:
        With the fpmath mode set to BF16, oneDNN (PyTorch's CPU backend, with the Arm Compute
        Library on aarch64) may compute fp32 operations with bf16 inputs and fp32 accumulation.
        The Isambard guide reports up to 2x for fp32 inference on Grace; AMX doubles that again
        on Sapphire Rapids. The trade-off is precision: inputs are rounded to bf16's 8-bit
        mantissa, which inference nearly always tolerates and training should verify.
        CPUs without bf16 (A64FX, Graviton2, Zen 3 and older) gain nothing, so it never fires there.

    How to fix:
        export DNNL_DEFAULT_FPMATH_MODE=BF16 in the job script (and LRU_CACHE_CAPACITY=1024 on
        aarch64). Compare accuracy on a validation set before adopting it for training.

    References:
        - 000_6e25303b50457a54.txt (section 3.1: DNNL_DEFAULT_FPMATH_MODE=BF16, "up to 2x")
        - https://oneapi-src.github.io/oneDNN/dev_guide_attributes_fpmath_mode.html
    """
    caps = f["cpu.capabilities"]
    if not caps.get("bf16") or f.gpus():
        return
    env = f["env.vars"]
    if env.get("DNNL_DEFAULT_FPMATH_MODE") or env.get("ONEDNN_DEFAULT_FPMATH_MODE"):
        return
    native_flags = ("amx_bf16", "avx512_bf16") if f.get("cpu.arch") == "x86_64" else ("svebf16", "bf16")
    native = [c for c in native_flags if caps.get(c)]
    cpu_bench = f.get("bench.cpu") or {}
    fp32 = (cpu_bench.get("fp32") or {}).get("gflops")
    fast = (cpu_bench.get("fp32_bf16_fastmath") or {}).get("gflops")
    gain = (f"measured here: {fp32:.0f} -> {fast:.0f} GFLOP/s ({fast / fp32:.1f}x)"
            if isinstance(fp32, (int, float)) and isinstance(fast, (int, float)) and fp32 > 0
            else "up to 2x for fp32 inference")
    yield Hit(
        message=(f"this {f.get('cpu.model_name') or 'CPU'} computes bf16 natively ({', '.join(native)}) "
                 f"but DNNL_DEFAULT_FPMATH_MODE is unset, so fp32 matmuls run at fp32 speed; "
                 f"BF16 fast math gives {gain}, at bf16 input precision"),
        fix="export DNNL_DEFAULT_FPMATH_MODE=BF16   # verify accuracy before using it for training",
        evidence={"cpu.capabilities": {c: True for c in native}, "env.DNNL_DEFAULT_FPMATH_MODE": None},
        env={"DNNL_DEFAULT_FPMATH_MODE": "BF16"},
    )


def _is_arm_torch(f):
    return f.get("cpu.arch") == "aarch64" and f.get("torch.installed") is True


@rule("CPU002", "arm-onednn-cache", "advice", "oneDNN primitive cache left at its default on aarch64", impact=4)
def arm_onednn_cache(f):
    """
    What it detects:
        An aarch64 node whose torch uses oneDNN (with the Arm Compute Library) while
        LRU_CACHE_CAPACITY is unset.

    Why it matters:
        With ACL, oneDNN builds a primitive per input shape; with varying shapes (NLP, dynamic
        batches) a small cache means primitives are rebuilt again and again. The Isambard guide sets
        the capacity to 1024 together with the BF16 fast-math mode.

    How to fix:
        export LRU_CACHE_CAPACITY=1024

    References:
        - 000_6e25303b50457a54.txt (section 3.1: export LRU_CACHE_CAPACITY=1024)
    """
    if not _is_arm_torch(f):
        return
    if f.get("torch.mkldnn") is False:
        return
    if f["env.vars"].get("LRU_CACHE_CAPACITY") is None:
        yield Hit(message="LRU_CACHE_CAPACITY is unset: oneDNN/ACL primitives are rebuilt for new shapes",
                  fix="export LRU_CACHE_CAPACITY=1024", evidence={"env.LRU_CACHE_CAPACITY": None},
                  env={"LRU_CACHE_CAPACITY": "1024"})


@rule("CPU003", "torch-without-acl", "warning", "aarch64 torch built without the Arm Compute Library", impact=7)
def torch_without_acl(f):
    """
    What it detects:
        A torch on aarch64 whose oneDNN backend was built without the Arm Compute Library (ACL),
        as some source builds and older wheels were.

    Why it matters:
        Without ACL, oneDNN falls back to reference kernels on Arm: convolutions and matmuls run
        several times slower, and the BF16 fast-math mode has no kernels to use.

    How to fix:
        Install the official aarch64 wheel (pip install torch), which is built with
        USE_MKLDNN_ACL, or a site module built with ACL.

    References:
        - 000_6e25303b50457a54.txt (section 3.1: oneDNN and ARM Compute Library integration)
        - https://github.com/pytorch/pytorch/issues/96983
    """
    if not _is_arm_torch(f):
        return
    acl = f["torch.acl"]
    if acl is False:
        yield Hit(message=f"torch {f.get('torch.version')} on aarch64 has no Arm Compute Library backend",
                  fix="pip install --force-reinstall torch   # the official aarch64 wheel is built with ACL",
                  evidence={"torch.acl": False, "torch.version": f.get("torch.version")})
