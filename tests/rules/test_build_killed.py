"""host-memory-oom-killed on a source build whose compiler was killed: GCC's, nvcc's and clang's own
words for a child that died of SIGKILL, on verbatim public pastes and on this project's recordings of
g++ and nvcc killed on purpose (tests/fixtures/pastes, SOURCES.md there). Only SIGKILL is memory."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, paste_facts, recorded_paste_facts, set_path
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, prog, line", [
    ("gcc-12.2-cc1plus-sigkill.txt", "cc1plus", 1),                           # recorded: g++ 12.2, kill -9
    ("strfry-41-gxx-killed-signal-make-j4.txt", "cc1plus", 1),                # the title: make -j4, 4 GB host
    ("pytorch-20134-gcc7-killed-program-cc1plus-max-jobs.txt", "cc1plus", 8),  # GCC 7's older form
    ("apex-1356-nvcc-cicc-killed-signal-9.txt", "cicc", 5),                   # pip build of apex
    ("pointcept-12-nvcc-cicc-killed-error-compiling-objects.txt", "cicc", 3),  # a torch cpp_extension
    ("nvcc-13.0-cicc-shell-sigkill.txt", '"$CICC_PATH/cicc"', 1),             # recorded: nvcc 13.0
    ("evm-for-ccf-15-clang-unable-to-execute-killed.txt", None, 9),          # clang++-8 under ninja
    ("mlpack-2213-kernel-oom-killed-cc1plus.txt", "cc1plus", 3),              # the kernel's line names cc1plus
])
def test_a_compiler_killed_by_sigkill_is_a_build_out_of_memory(paste, prog, line):
    (f,) = fired("host-memory-oom-killed", recorded_paste_facts(paste))
    assert f.severity == "warning"
    assert "compiler job of a source build was killed by SIGKILL" in f.message
    assert f"line {line}:" in f.message
    if prog:
        assert f"({prog}, line" in f.message
    # no node facts in a paste: the README's example count, and torch's knob by name
    assert f.fix.startswith("export MAX_JOBS=4") and "ninja -j MAX_JOBS" in f.fix
    assert f.evidence["message"].startswith(("build:", "oom:kernel-oom-killed-process"))


def test_a_pip_build_of_flash_attn_names_the_package_and_its_prebuilt_wheels(tmp_path):
    # the recorded g++ kill followed by pip's line naming the package (pip.toml's example, pip's format)
    text = (PASTES / "gcc-12.2-cc1plus-sigkill.txt").read_text() + "ERROR: Failed building wheel for flash-attn\n"
    g = paste_facts(tmp_path, text)
    assert {"build:gcc-killed-signal", "pip:failed-building-wheel"} <= {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    (f,) = fired("host-memory-oom-killed", g)
    assert f.fix.startswith("MAX_JOBS=4 pip install flash-attn --no-build-isolation")
    assert "https://github.com/Dao-AILab/flash-attention/releases" in f.fix


@pytest.mark.parametrize("mem_gb, cpus, jobs", [(64, 128, 2), (512, 16, 16), (16, 8, 1)])
def test_the_job_count_follows_the_nodes_memory_and_cpus(mem_gb, cpus, jobs):
    g = recorded_paste_facts("apex-1356-nvcc-cicc-killed-signal-9.txt")
    for path, value in (("memory.total_bytes", mem_gb * 2**30), ("cpu.logical_cpus", cpus)):
        set_path(g["facts"], path, value)
        g["unknown"].pop(path, None)
    (f,) = fired("host-memory-oom-killed", g)
    assert f.fix.startswith(f"export MAX_JOBS={jobs}   # one job per 24 GB of this node's {mem_gb} GB")


@pytest.mark.parametrize("paste, read", [
    ("gcc-12.2-cc1plus-sigterm.txt", "build:gcc-other-fatal-signal"),          # recorded: kill -TERM
    ("llvm-85969-clang-unable-to-execute-segfault.txt", "build:clang-command-failed-other"),
    ("m3dm-16-ninja-build-stopped-no-kill.txt", "build:ninja-build-stopped"),  # the generic lines alone
])
def test_other_signals_and_generic_build_failures_are_read_but_not_fired(paste, read):
    g = recorded_paste_facts(paste)
    assert read in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("host-memory-oom-killed", g)


def test_nvcc_tools_dying_of_another_signal_are_not_memory():
    # hostile-input style: nvcc's format with its own name for SIGSEGV (no public paste at hand)
    found = find_messages("nvcc error   : 'ptxas' died due to signal 11 (Invalid memory reference)\n")
    assert [s["id"] for s in found] == ["build:nvcc-tool-died-other-signal"]
    assert not [s for s in found if "host-memory-oom-killed" in (s.get("rules") or [])]


def test_torchs_generic_extension_error_is_read():
    g = recorded_paste_facts("pointcept-12-nvcc-cicc-killed-error-compiling-objects.txt")
    assert "build:torch-error-compiling-objects" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}


def test_the_kernel_killing_another_process_keeps_the_memory_limit_fix():
    # oom.toml's own example: python killed, no compiler: the job's memory, not a build's job count
    found = find_messages("[12345.678901] Out of memory: Killed process 19597 (python) total-vm:28642156kB, "
                          "anon-rss:15283420kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:31000kB oom_score_adj:0\n")
    g = recorded_paste_facts("m3dm-16-ninja-build-stopped-no-kill.txt")
    g["facts"]["ticket"]["symptoms"] = found
    (f,) = fired("host-memory-oom-killed", g)
    assert "MAX_JOBS" not in f.fix and "source build" not in f.message


def test_another_package_pip_names_is_rebuilt_as_the_user_did_not_installed_by_name(tmp_path):
    # PyPI's "apex" is not NVIDIA's: a package pip names is rerun as built, never installed by that name
    text = (PASTES / "apex-1356-nvcc-cicc-killed-signal-9.txt").read_text() + "ERROR: Failed building wheel for apex\n"
    (f,) = fired("host-memory-oom-killed", paste_facts(tmp_path, text))
    assert f.fix.startswith("export MAX_JOBS=4") and "rerun the build of apex" in f.fix
    assert "pip install apex" not in f.fix and "releases" not in f.fix
