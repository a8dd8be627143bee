"""amdgpu-job-timeout-too-short on public pastes (tests/fixtures/pastes, SOURCES.md there) and on a
node's kernel log: amdgpu's ring timeout answered with lockup_timeout, silent where a GPU VM page
fault says the job faulted."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_the_kernels_ring_timeout_is_a_warning_with_the_lockup_timeout_fix():
    (f,) = fired("amdgpu-job-timeout-too-short", recorded_paste_facts("llama-cpp-21724-vulkan-gfx-ring-timeout-apu.txt"))
    assert f.severity == "warning" and "reset the gfx_0.0.0 ring as hung" in f.message
    assert f.fix.startswith("cat /sys/module/amdgpu/parameters/lockup_timeout") and "lockup_timeout=60000" in f.fix


def test_a_users_retelling_is_info():
    (f,) = fired("amdgpu-job-timeout-too-short", recorded_paste_facts("hierarchos-native-1-amdgpu-job-timeout-kills-compute.txt"))
    assert f.severity == "info"


def test_a_timeout_beside_a_page_fault_is_the_jobs_fault():
    assert not fired("amdgpu-job-timeout-too-short", recorded_paste_facts("rocm-5997-comp-ring-timeout-with-page-fault.txt"))


def test_read_from_the_nodes_kernel_log():
    lines = find_messages("[  812.000001] amdgpu 0000:c2:00.0: ring gfx_0.0.0 timeout, signaled seq=166926, emitted seq=166928\n",
                          families=("amdgpu_job",))
    g = facts("h100-kvm-1gpu", **{"kernel_log.messages": [dict(m, source="dmesg") for m in lines]})
    (f,) = fired("amdgpu-job-timeout-too-short", g)
    assert f.evidence.get("kernel_log.line") is not None


@pytest.mark.parametrize("paste", ["llama-cpp-21883-peer-mapping-exhausted-ten-gpus.txt", "gcc-12-mpi-h-missing.txt"])
def test_silent_without_a_ring_timeout(paste):
    assert not fired("amdgpu-job-timeout-too-short", recorded_paste_facts(paste))


def test_the_nodes_lockup_timeout_is_named_where_known():
    lines = find_messages("amdgpu 0000:c2:00.0: ring gfx_0.0.0 timeout, signaled seq=166926, emitted seq=166928\n",
                          families=("amdgpu_job",))
    g = facts("h100-kvm-1gpu", **{"kernel_log.messages": [dict(m, source="dmesg") for m in lines],
                                  "amd.lockup_timeout": "0"})
    (f,) = fired("amdgpu-job-timeout-too-short", g)
    assert "this node's amdgpu.lockup_timeout is '0' (the kernel's default)" in f.message


def test_the_check_reads_the_module_parameter(tmp_path):
    import shutil

    from rulekit import NODES
    from hpcdoctor import pipeline
    from hpcdoctor.runner import Options
    from hpcdoctor.sysroot import ReplaySysRoot

    root = tmp_path / "node"
    shutil.copytree(NODES / "cpu-kvm-2core", root)
    d = root / "fs" / "sys" / "module" / "amdgpu" / "parameters"
    d.mkdir(parents=True)
    (d / "lockup_timeout").write_text("10000,60000\n")
    g = pipeline.gather(ReplaySysRoot(root), Options())
    assert g["facts"]["amd"]["lockup_timeout"] == "10000,60000"
