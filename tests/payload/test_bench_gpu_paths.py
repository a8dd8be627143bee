"""The payload's GPU paths (GEMM per dtype, copies, the per-GPU lock) driven through a stand-in for
torch's CUDA API: no GPU exists here or in CI, and these paths must still keep their budget, time
with CUDA events, and give a figure or a reason for every dtype. The stand-in's "GPU" does its work
as a sleep, so the figures are not the point; the shape and the budget are."""

from __future__ import annotations

import time
import types

import pytest

from hpcdoctor.payload import bench_lock, bench_probe


class FakeEvent:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1000.0  # milliseconds, as CUDA events report


class FakeTensor:
    def __init__(self, torch, n):
        self.torch, self.n = torch, n

    def to(self, *_):
        return self

    def t(self):
        return self

    def random_(self):
        return self

    def fill_(self, value):
        return self

    def pin_memory(self):
        return self

    def copy_(self, src, non_blocking=False):
        time.sleep(self.torch.call_s)
        return self


def fake_torch(call_s=0.001, cc=(9, 0), oom_above=None):
    torch = types.SimpleNamespace()
    torch.call_s = call_s
    torch.float32, torch.bfloat16, torch.float16, torch.uint8, torch.float8_e4m3fn = "f32", "bf16", "f16", "u8", "f8"
    torch.version = types.SimpleNamespace(hip=None)
    torch.device = lambda kind, index=None: (kind, index)
    torch.backends = types.SimpleNamespace(cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))

    def make(*shape, device=None, dtype=None):
        if oom_above and shape and shape[0] > oom_above:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return FakeTensor(torch, shape[0] if shape else 0)

    torch.randn = torch.empty = make
    torch.empty_like = lambda t: FakeTensor(torch, t.n)
    torch.tensor = lambda *a, **k: FakeTensor(torch, 1)

    def matmul(a, b, out=None):
        time.sleep(torch.call_s * (a.n / 4096.0) ** 3)
        return out

    torch.matmul = matmul
    torch._scaled_mm = lambda a, b, **k: matmul(a, b)
    torch.cuda = types.SimpleNamespace(
        Event=FakeEvent, synchronize=lambda: None, empty_cache=lambda: None, set_device=lambda d: None,
        get_device_capability=lambda d=None: cc)
    return torch


def test_gemm_every_dtype_has_a_figure_or_a_reason():
    torch = fake_torch(cc=(8, 0))
    for dtype in bench_probe.GPU_DTYPES:
        out = bench_probe.gpu_gemm(torch, 0, dtype, [4096, 8192], "full", 0.25, "gpu0.gemm." + dtype)
        if dtype == "fp8":
            assert out == {"skipped": "fp8 needs compute capability 8.9 or newer (CUDA)"}
        else:
            assert out["tflops"] > 0 and out["n"] in (4096, 8192) and out["calls"] >= bench_probe.MIN_SAMPLES
    assert torch.backends.cuda.matmul.allow_tf32 is False  # restored after the TF32 case


def test_gemm_that_cannot_fit_says_how_long_it_would_take():
    # One n=8192 call takes 1.6x the whole share: the case cannot fit (the ratio is the point, not
    # the scale; 1.0 s and 1.6 s before, a quarter of that now).
    share, call = 0.25, 0.4
    torch = fake_torch(call_s=call / 8)
    t0 = time.monotonic()
    out = bench_probe.gpu_gemm(torch, 0, "bf16", [8192], "quick", share, "gpu0.gemm.bf16")
    assert time.monotonic() - t0 < share + 2 * call + 0.5  # the failing case's own first calls, no more
    assert "would take about" in out["skipped"] and "s left" in out["skipped"]


def test_gemm_out_of_memory_at_the_large_size_keeps_the_small_one():
    torch = fake_torch(oom_above=8192)
    out = bench_probe.gpu_gemm(torch, 0, "bf16", [4096, 8192, 16384], "full", 1.5, "gpu0.gemm.bf16")
    assert out["tflops"] > 0 and out["notes"] == ["n=16384: out of memory"]


def test_copies_within_their_share():
    torch = fake_torch(call_s=0.002)
    t0 = time.monotonic()
    out = bench_probe.gpu_copies(torch, 0, 1 << 30, 1.5, "gpu0.memory")
    assert time.monotonic() - t0 < 1.5 + 0.3
    for key in ("d2d_gbs", "h2d_pinned_gbs", "d2h_pinned_gbs", "h2d_pageable_gbs", "d2h_pageable_gbs"):
        assert isinstance(out[key], float) or out[key].get("skipped"), key


@pytest.mark.parametrize("cc, dtype, reason", [((7, 0), "tf32", "no TF32"), ((7, 5), "bf16", "no bf16 tensor cores"),
                                               ((8, 6), "fp8", "fp8 needs")])
def test_dtypes_a_gpu_lacks_are_skipped_with_the_reason(cc, dtype, reason):
    out = bench_probe.gpu_gemm(fake_torch(cc=cc), 0, dtype, [4096], "quick", 1.0, "x")
    assert out["skipped"].startswith(reason)


def test_gpu_measurements_run_only_under_the_gpus_lock(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HPCDOCTOR_LOCK_DIR", str(tmp_path))
    torch = fake_torch()
    torch.cuda.get_device_name = lambda i: "NVIDIA H100 80GB HBM3"
    torch.cuda.get_device_properties = lambda i: types.SimpleNamespace(uuid="GPU-1234")
    held = bench_lock.GpuLock("GPU-1234", wait=1)  # another rank is benchmarking this GPU
    locks = {}
    out = bench_lock.gpu_lock(torch, 0, 0.8, locks)
    assert "another benchmark holds" in out["skipped"]
    assert "another benchmark holds" in bench_lock.locked(locks, 0, lambda: {"tflops": 1.0})["skipped"]
    held.release()
    locks.clear()
    assert bench_lock.gpu_lock(torch, 0, 0.8, locks) == {"waited_s": 0.0} or locks[0].waited < 0.5
    assert bench_lock.locked(locks, 0, lambda: {"tflops": 1.0}, release=True) == {"tflops": 1.0}
    assert locks[0] == "released"
    assert '"at": ["gpus", 0, "name"], "value": "NVIDIA H100 80GB HBM3"' in capsys.readouterr().out
