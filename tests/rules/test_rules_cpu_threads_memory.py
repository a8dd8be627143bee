"""Each rule fires on a case built from recorded facts and stays silent on its healthy twin."""

from __future__ import annotations

from rulekit import cpuinfo_facts, facts, fired, run_rule, with_env

SLURM_JOB = {"SLURM_JOB_ID": "42", "SLURM_CPUS_PER_TASK": "4", "SLURM_NTASKS": "4", "SLURM_NTASKS_PER_NODE": "4"}


# cpu-bf16-fpmath ---------------------------------------------------------------------------------

def test_bf16_fpmath_fires_on_amx_cpu_node():
    (f,) = fired("cpu-bf16-fpmath", facts("cpu-kvm-2core"))
    assert "DNNL_DEFAULT_FPMATH_MODE" in f.fix and f.env == {"DNNL_DEFAULT_FPMATH_MODE": "BF16"}
    assert "amx_bf16" in f.message and f.severity == "advice"


def test_bf16_fpmath_silent_when_set():
    assert not fired("cpu-bf16-fpmath", with_env("cpu-kvm-2core", {"DNNL_DEFAULT_FPMATH_MODE": "BF16"}))


def test_bf16_fpmath_fires_on_grace(tmp_path):
    g = cpuinfo_facts("linux-ubuntu22.04-neoverse_v2", tmp_path)
    g["facts"]["env"] = {"vars": {}}
    (f,) = fired("cpu-bf16-fpmath", g)
    assert "svebf16" in f.message


def test_bf16_fpmath_never_on_a64fx_or_graviton2(tmp_path):
    for name in ("linux-rocky8-a64fx", "linux-amazon-neoverse_n1", "linux-rhel7-skylake_avx512"):
        g = cpuinfo_facts(name, tmp_path)
        g["facts"]["env"] = {"vars": {}}
        assert not fired("cpu-bf16-fpmath", g), name


def test_bf16_fpmath_skipped_without_environment(tmp_path):
    findings, skipped = run_rule("cpu-bf16-fpmath", cpuinfo_facts("linux-ubuntu22.04-neoverse_v2", tmp_path))
    assert not findings and "env.vars" in skipped[0]["reason"]


# omp-threads-unset / omp-threads-mismatch ----------------------------------------------------------

def test_omp_unset_fires_in_job_with_several_ranks():
    (f,) = fired("omp-threads-unset", with_env("h100-kvm-1gpu", SLURM_JOB))
    assert f.fix == "export OMP_NUM_THREADS=$SLURM_CPUS_PER_TASK OMP_PLACES=cores OMP_PROC_BIND=close"
    assert f.severity == "warning"


def test_omp_unset_silent_outside_a_job_and_when_set():
    assert not fired("omp-threads-unset", facts("h100-kvm-1gpu"))
    assert not fired("omp-threads-unset", with_env("h100-kvm-1gpu", {**SLURM_JOB, "OMP_NUM_THREADS": "4"}))


def test_omp_unset_under_torchrun_uses_allowed_cpus_share():
    (f,) = fired("omp-threads-unset", with_env("h100-kvm-1gpu", {"LOCAL_WORLD_SIZE": "8", "LOCAL_RANK": "0"}))
    assert f.fix == "export OMP_NUM_THREADS=2"  # 16 allowed CPUs / 8 local ranks


def test_omp_mismatch_oversubscribed():
    (f,) = fired("omp-threads-mismatch", with_env("h100-kvm-1gpu", {**SLURM_JOB, "OMP_NUM_THREADS": "16"}))
    assert f.severity == "warning" and "oversubscribe" in f.message


def test_omp_mismatch_idle_cores_is_advice():
    (f,) = fired("omp-threads-mismatch", with_env("h100-kvm-1gpu", {**SLURM_JOB, "OMP_NUM_THREADS": "2"}))
    assert f.severity == "advice" and "idle" in f.message


def test_omp_mismatch_against_allowed_cpus_outside_slurm():
    (f,) = fired("omp-threads-mismatch", with_env("h100-kvm-1gpu", {"OMP_NUM_THREADS": "64"}))
    assert "16 CPU(s)" in f.message
    assert not fired("omp-threads-mismatch", with_env("h100-kvm-1gpu", {"OMP_NUM_THREADS": "16"}))


def test_omp_mismatch_garbage_value():
    (f,) = fired("omp-threads-mismatch", with_env("h100-kvm-1gpu", {"OMP_NUM_THREADS": "all"}))
    assert "not a positive thread count" in f.message


def test_omp_mismatch_silent_when_matching():
    assert not fired("omp-threads-mismatch", with_env("h100-kvm-1gpu", {**SLURM_JOB, "OMP_NUM_THREADS": "4"}))


# thp-disabled / numa-balancing-on --------------------------------------------------------------------

def test_thp_disabled():
    (f,) = fired("thp-disabled", facts("h100-kvm-1gpu", **{"memory.thp_enabled": "never"}))
    assert "madvise" in f.fix
    assert not fired("thp-disabled", facts("h100-kvm-1gpu"))


def test_numa_balancing_only_on_multi_node_hosts():
    two = facts("h100-kvm-1gpu", **{"numa.count": 2, "numa.balancing": True})
    (f,) = fired("numa-balancing-on", two)
    assert "--mem-bind=local" in f.fix
    assert not fired("numa-balancing-on", facts("h100-kvm-1gpu", **{"numa.balancing": True}))
    assert not fired("numa-balancing-on", facts("h100-kvm-1gpu", **{"numa.count": 8, "numa.balancing": False}))
