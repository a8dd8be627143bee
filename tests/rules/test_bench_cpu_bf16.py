"""cpu-bf16-emulated (CPU004) on real /proc/cpuinfo captures, and cpu-bf16-fpmath (CPU001) never
advising bf16 fast math on a CPU without bf16."""

from __future__ import annotations

import pytest

from rulekit import cpuinfo_facts, fired, set_path

# Real captures (tests/fixtures/cpuinfo): no native bf16 / native bf16.
WITHOUT_BF16 = ["linux-ubuntu20.04-zen3", "linux-centos7-cascadelake", "linux-rhel7-skylake_avx512",
                "linux-rocky8-a64fx", "linux-amazon-neoverse_n1"]
WITH_BF16 = ["linux-unknown-sapphirerapids", "linux-rocky8.5-zen4", "linux-ubuntu22.04-neoverse_v2"]


def _with(g, **changes):
    for path, value in changes.items():
        set_path(g["facts"], path, value)
    return g


def _cpu_bench(fp32, bf16):
    return {"cpu": {"threads": 2, "n": 1024, "fp32": {"gflops": fp32, "n": 1024},
                    "bf16": {"gflops": bf16, "n": 256, "reduced_from": 1024}}, "gpus": []}


@pytest.mark.parametrize("name", WITHOUT_BF16)
def test_fires_from_the_bench_figures_on_cpus_without_bf16(name, tmp_path):
    g = _with(cpuinfo_facts(name, tmp_path), bench=_cpu_bench(125.0, 0.9))
    (f,) = fired("cpu-bf16-emulated", g)
    assert "0.9 GFLOP/s against 125.0 for fp32 (139x slower)" in f.message
    assert "keep fp32" in f.fix


@pytest.mark.parametrize("name", WITHOUT_BF16)
def test_fires_from_the_flags_when_the_job_asks_for_bf16(name, tmp_path):
    g = _with(cpuinfo_facts(name, tmp_path), **{"env.vars": {"ACCELERATE_MIXED_PRECISION": "bf16"}})
    (f,) = fired("cpu-bf16-emulated", g)
    assert "ACCELERATE_MIXED_PRECISION=bf16" in f.message and "no native bf16" in f.message
    assert f.fix.startswith("export ACCELERATE_MIXED_PRECISION=no")


@pytest.mark.parametrize("name", WITHOUT_BF16)
def test_silent_when_nothing_would_use_bf16(name, tmp_path):
    g = cpuinfo_facts(name, tmp_path)
    assert not fired("cpu-bf16-emulated", g)
    # a fast-math hint is not bf16 compute: oneDNN keeps fp32 where the ISA has no bf16
    assert not fired("cpu-bf16-emulated", _with(g, **{"env.vars": {"ONEDNN_DEFAULT_FPMATH_MODE": "BF16"}}))


@pytest.mark.parametrize("name", WITH_BF16)
def test_silent_on_cpus_with_native_bf16(name, tmp_path):
    g = _with(cpuinfo_facts(name, tmp_path), **{"env.vars": {"ACCELERATE_MIXED_PRECISION": "bf16"}})
    assert not fired("cpu-bf16-emulated", g)
    # bf16 measured faster than fp32, as native bf16 does
    assert not fired("cpu-bf16-emulated", _with(g, bench=_cpu_bench(125.0, 300.0)))


def test_silent_when_the_bench_measured_bf16_fast_on_an_unknown_cpu(tmp_path):
    g = _with(cpuinfo_facts("linux-ubuntu20.04-zen3", tmp_path), bench=_cpu_bench(125.0, 130.0))
    assert not fired("cpu-bf16-emulated", g)


@pytest.mark.parametrize("name", WITHOUT_BF16)
def test_fast_math_advice_never_on_cpus_without_bf16(name, tmp_path):
    g = _with(cpuinfo_facts(name, tmp_path), **{"env.vars": {}, "bench": {
        "cpu": {"fp32": {"gflops": 125.0}, "fp32_bf16_fastmath": {"gflops": 126.0}}}})
    assert not fired("cpu-bf16-fpmath", g)


@pytest.mark.parametrize("name", WITH_BF16)
def test_fast_math_advice_on_cpus_with_bf16(name, tmp_path):
    assert fired("cpu-bf16-fpmath", _with(cpuinfo_facts(name, tmp_path), **{"env.vars": {}}))


def test_fires_when_bf16_was_too_slow_to_fit_the_budget(tmp_path):
    bench = _cpu_bench(125.0, 0.0)
    bench["cpu"]["bf16"] = {"skipped": "GEMM n=1024 would take about 9.5 s, 2.0 s left", "probe_gflops": 0.9}
    (f,) = fired("cpu-bf16-emulated", _with(cpuinfo_facts("linux-amazon-neoverse_n1", tmp_path), bench=bench))
    assert "0.9 GFLOP/s against 125.0" in f.message


@pytest.mark.parametrize("name", WITH_BF16)
def test_fast_math_advice_silent_where_measured_without_gain(name, tmp_path):
    g = _with(cpuinfo_facts(name, tmp_path), **{"env.vars": {}, "bench": {
        "cpu": {"fp32": {"gflops": 67.0}, "fp32_bf16_fastmath": {"gflops": 55.0}}}})
    assert not fired("cpu-bf16-fpmath", g)
    g["facts"]["bench"]["cpu"]["fp32_bf16_fastmath"]["gflops"] = 130.0
    (f,) = fired("cpu-bf16-fpmath", g)
    assert "67 -> 130 GFLOP/s (1.9x)" in f.message
