"""Environment, placement and aarch64 rules."""

from __future__ import annotations

from pathlib import Path

from rulekit import cpuinfo_facts, facts, fired, with_env

H100 = "h100-kvm-1gpu"


JOB = {"SLURM_JOB_ID": "9", "SLURM_NTASKS_PER_NODE": "4", "SLURM_CPUS_PER_TASK": "4", "SLURM_NTASKS": "4"}


def test_nccl_async_old_name():
    (f,) = fired("nccl-async-error-handling", with_env(H100, {"NCCL_ASYNC_ERROR_HANDLING": "1"}))
    assert f.env == {"TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}
    assert "still reads it" in f.message  # deprecated, not ignored: see the next test
    assert not fired("nccl-async-error-handling", with_env(H100, {"NCCL_ASYNC_ERROR_HANDLING": "1",
                                                             "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1"}))
    assert not fired("nccl-async-error-handling", with_env(H100, {"NCCL_ASYNC_ERROR_HANDLING": "1"}, **{"torch.version": "2.0.1"}))


def test_torch_still_reads_the_deprecated_async_name_as_its_fallback():
    """ENV001's premise, held against the headers torch ships (the CPU build CI installs): the old
    name is the second of the setting's names, which c10d reads newest first, falling back to it."""
    import re
    import subprocess

    from conftest import torch_python
    inc = subprocess.run([torch_python(), "-c", "import os, torch; print(os.path.dirname(torch.__file__))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    hpp = Path(inc, "include", "torch", "csrc", "distributed", "c10d", "ProcessGroupNCCL.hpp").read_text()
    names = re.search(r"TORCH_NCCL_ASYNC_ERROR_HANDLING\s*=\s*\{([^}]*)\}", hpp)
    assert names and re.findall(r'"(\w+)"', names.group(1)) == ["TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"]


def test_nccl_debug():
    assert fired("nccl-debug-left-on", with_env(H100, {"NCCL_DEBUG": "INFO"}))
    assert not fired("nccl-debug-left-on", with_env(H100, {"NCCL_DEBUG": "WARN"}))


def test_env_on_parallel_fs():
    lustre = {"mount_point": "/project", "fstype": "lustre", "network": True}
    (f,) = fired("python-env-on-parallel-fs", facts(H100, **{"torch.site_fs": lustre}))
    assert "lustre" in f.message
    assert not fired("python-env-on-parallel-fs", facts(H100, **{"torch.site_fs": lustre, "scheduler.in_container": True}))


def test_login_node():
    assert fired("login-node", facts("cpu-kvm-2core"))
    assert not fired("login-node", facts(H100))  # has a GPU
    assert not fired("login-node", with_env("cpu-kvm-2core", {"SLURM_JOB_ID": "1"}))


def test_cpu_oversubscribed_with_shared_cpuset():
    (f,) = fired("cpu-oversubscribed", with_env(H100, {"OMP_NUM_THREADS": "8", "LOCAL_WORLD_SIZE": "4"}))
    assert "32 threads on 16" in f.message
    assert not fired("cpu-oversubscribed", with_env(H100, {"OMP_NUM_THREADS": "4", "LOCAL_WORLD_SIZE": "4"}))


def test_omp_binding():
    (f,) = fired("omp-binding-unset", with_env(H100, {**JOB, "OMP_NUM_THREADS": "4"}))
    assert f.env == {"OMP_PLACES": "cores", "OMP_PROC_BIND": "close"}
    assert not fired("omp-binding-unset", with_env(H100, {**JOB, "OMP_NUM_THREADS": "4", "OMP_PLACES": "cores"}))
    assert not fired("omp-binding-unset", with_env(H100, {**JOB, "OMP_NUM_THREADS": "4", "SLURM_CPU_BIND_TYPE": "cores"}))


def test_stale_affinity():
    g = with_env(H100, {"GOMP_CPU_AFFINITY": "0-63"}, **{"affinity.allowed_cpus": list(range(8))})
    (f,) = fired("stale-affinity-vars", g)
    assert "unset GOMP_CPU_AFFINITY" in f.fix
    g = with_env(H100, {"KMP_AFFINITY": "granularity=fine,proclist=[16,17],explicit"}, **{"affinity.allowed_cpus": list(range(8))})
    assert fired("stale-affinity-vars", g)
    assert not fired("stale-affinity-vars", with_env(H100, {"GOMP_CPU_AFFINITY": "0-7"}, **{"affinity.allowed_cpus": list(range(8))}))


def test_gpu_numa_mismatch():
    g = with_env(H100, {"CUDA_VISIBLE_DEVICES": "0"}, **{"affinity.allowed_cpus": [16, 17], "gpus.0.numa_node": 0})
    (f,) = fired("gpu-numa-mismatch", g)
    assert "--gpu-bind=closest" in f.fix and "numactl --cpunodebind=0" in f.fix
    assert not fired("gpu-numa-mismatch", with_env(H100, {"CUDA_VISIBLE_DEVICES": "0"}))


def test_dataloader_workers():
    (f,) = fired("dataloader-workers", with_env(H100, JOB))
    assert "num_workers=3" in f.fix
    (f,) = fired("dataloader-workers", with_env(H100, dict(JOB, SLURM_CPUS_PER_TASK="1")))
    assert f.severity == "warning"
    assert not fired("dataloader-workers", facts(H100))  # not in a job


def test_shm_too_small():
    (f,) = fired("shm-too-small", facts(H100, **{"memory.shm_size_bytes": 64 * 2**20, "torch.installed": True}))
    assert "64 MiB" in f.message
    assert not fired("shm-too-small", facts(H100, **{"memory.shm_size_bytes": 64 * 2**30, "torch.installed": True}))


def _grace(tmp_path, **torch):
    g = cpuinfo_facts("linux-ubuntu22.04-neoverse_v2", tmp_path)
    g["facts"]["env"] = {"vars": {}}
    g["facts"]["torch"] = dict({"installed": True, "version": "2.11.0", "mkldnn": True}, **torch)
    return g


def test_arm_onednn_cache(tmp_path):
    (f,) = fired("arm-onednn-cache", _grace(tmp_path))
    assert f.env == {"LRU_CACHE_CAPACITY": "1024"}
    g = _grace(tmp_path / "x")
    g["facts"]["env"]["vars"]["LRU_CACHE_CAPACITY"] = "1024"
    assert not fired("arm-onednn-cache", g)


def test_torch_without_acl(tmp_path):
    assert fired("torch-without-acl", _grace(tmp_path, acl=False))
    assert not fired("torch-without-acl", _grace(tmp_path / "y", acl=True))


def test_python_slow_from_a_parallel_file_system_in_the_users_words_is_a_hint():
    # ipython/ipython#8991 (tests/fixtures/pastes, SOURCES.md there): read from the paste, no torch facts needed
    from rulekit import recorded_paste_facts

    (f,) = fired("python-env-on-parallel-fs", recorded_paste_facts("ipython-8991-startup-stat-storm-on-lustre.txt"))
    assert f.severity == "info" and "launching ipython on a lustre-based file system is slow" in f.message
    assert f.fix.startswith("strace -c -f -e trace=%file")
    # a real healthy paste (no words about starting slowly, no torch facts) gives no finding: it is skipped
    from rulekit import run_rule
    findings, _skipped = run_rule("python-env-on-parallel-fs", recorded_paste_facts("nccl-258-cuda-gdb-p2p-warnings-healthy.txt"))
    assert findings == []
