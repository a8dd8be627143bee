"""torch-extension-build-lock-stale and jit-kernel-cache-stale (rules/jit_builds.py) on public pastes
(tests/fixtures/pastes, SOURCES.md there) and the emitters' own frames and formats (torch 2.13.0
cpp_extension.py and file_baton.py; pycuda compiler.py and cuda.hpp); silent on a real PyCUDA paste
whose LogicError has another cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts, run_rule, told_facts



def test_a_load_that_stops_is_the_usual_stale_lock_to_confirm():
    (f,) = fired("torch-extension-build-lock-stale", recorded_paste_facts("pytorch-59146-stale-torch-extensions-lock.txt"))
    assert f.severity == "info" and "(line 2:" in f.message and "lock file left" in f.message
    assert f.fix.startswith('find "${TORCH_EXTENSIONS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/torch_extensions}" -maxdepth 3 -name lock')
    assert "export TORCH_EXTENSIONS_DIR=/tmp/$USER/torch_extensions" in f.fix


def test_a_process_stopped_in_file_batons_wait_is_a_warning_naming_the_root():
    # torch 2.13.0: _get_build_directory's verbose line, then a Ctrl-C inside FileBaton.wait's time.sleep
    text = ("Using /home/alice/.cache/torch_extensions/py311_cu128 as PyTorch extensions root...\n"
            "^CTraceback (most recent call last):\n"
            '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/cpp_extension.py", line 2400, in _jit_compile\n'
            "    baton.wait()\n"
            '  File "/opt/conda/lib/python3.11/site-packages/torch/utils/file_baton.py", line 50, in wait\n'
            "    time.sleep(self.wait_seconds)\n"
            "KeyboardInterrupt\n")
    (f,) = fired("torch-extension-build-lock-stale", told_facts(text))
    assert f.severity == "warning" and "under /home/alice/.cache/torch_extensions/py311_cu128" in f.message


def test_the_extension_import_alone_or_a_hang_alone_says_nothing():
    # nothing pasted shows a lock, and a paste records no lock files: no finding (the node's check is skipped)
    for text in ("from torch.utils.cpp_extension import load\n", "The program hangs at load() of the dataset\n"):
        findings, _ = run_rule("torch-extension-build-lock-stale", told_facts(text))
        assert findings == []


def test_pycudas_module_load_failure_is_the_stale_cache_to_confirm():
    (f,) = fired("jit-kernel-cache-stale", recorded_paste_facts("pycuda-231-stale-compiler-cache-logicerror.txt"))
    assert f.severity == "warning" and "(initialization error) (line 21:" in f.message
    assert f.fix.startswith("PYCUDA_DISABLE_CACHE=1 python your_script.py")
    assert 'rm -rf "${PYCUDA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pycuda/compiler-cache-v1}"' in f.fix


def test_a_load_failure_without_source_modules_frame_is_not_the_cache():
    assert not fired("jit-kernel-cache-stale", told_facts("pycuda._driver.LogicError: cuModuleLoadDataEx failed: initialization error\n"))
    g = recorded_paste_facts("pycuda-137-cuinit-in-child-after-fork-healthy.txt")   # cuInit in a forked child
    assert not fired("jit-kernel-cache-stale", g) and run_rule("torch-extension-build-lock-stale", g)[0] == []
    assert not fired("jit-kernel-cache-stale", facts("h100-kvm-1gpu"))
    assert run_rule("torch-extension-build-lock-stale", facts("h100-kvm-1gpu"))[0] == []


# -- Megatron's fused kernels: cpp_extension.load(build_directory=megatron/fused_kernels/build) ----

P = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_p"


@pytest.mark.parametrize("text, line", [
    ((P / "megatron-lm-82-fused-kernel-build-stuck-stale-build.txt").read_text(), 5),
    ((PASTES / "megatron-lm-1050-stuck-compiling-fused-kernels.txt").read_text(), 1),
])
def test_a_run_stuck_compiling_megatrons_fused_kernels_is_a_hint_at_its_build_lock(text, line):
    (f,) = fired("torch-extension-build-lock-stale", told_facts(text))
    assert f.severity == "info" and f"(line {line}:" in f.message and "megatron/fused_kernels/build" in f.message
    assert f.fix.startswith("ls -l megatron/fused_kernels/build/lock") and "rm megatron/fused_kernels/build/lock" in f.fix


def test_a_fused_kernel_build_that_fails_is_not_a_hang():
    # Megatron-LM#319: the same build stopped by nvcc's refusal, an error and no hang
    findings, _ = run_rule("torch-extension-build-lock-stale",
                           told_facts((P / "megatron-lm-319-nvcc-refuses-nvhpc-host-compiler.txt").read_text()))
    assert findings == []


# -- the user or the program names the lock (set S's OpenEquivariance#207, nvdiffrast#190, pytorch#189245) --

def test_set_s_user_naming_the_stale_lock_and_filebaton_is_a_warning(tmp_path):
    from conftest import FIXTURES
    from rulekit import paste_facts
    text = (FIXTURES / "tickets_blind_s" / "openequivariance-207-stale-extension-lock-after-pids-limit.txt").read_text(encoding="utf-8")
    (f,) = fired("torch-extension-build-lock-stale", paste_facts(tmp_path, text, "oeq-207.txt"))
    assert f.severity == "warning" and "(line 1:" in f.message and "stale build lock" in f.message
    assert "-name lock -mmin +30 -print -delete" in f.fix


def test_pytorch_thread_naming_filebatons_stale_lock_is_a_warning():
    (f,) = fired("torch-extension-build-lock-stale", recorded_paste_facts("pytorch-189245-stale-filebaton-lock-deadlock.txt"))
    assert f.severity == "warning" and f.evidence["build"] == "prose:file-baton-wait-said"


def test_nvdiffrasts_lock_line_gives_the_exact_rm():
    (f,) = fired("torch-extension-build-lock-stale", recorded_paste_facts("nvdiffrast-190-lock-file-exists.txt"))
    assert f.severity == "warning" and f.evidence["lock"].endswith("/py38_cu118/nvdiffrast_plugin/lock")
    assert "rm /home/jovyan/.cache/torch_extensions/py38_cu118/nvdiffrast_plugin/lock" in f.fix


def test_faulthandlers_frame_without_a_comma_is_the_wait():
    (f,) = fired("torch-extension-build-lock-stale", recorded_paste_facts("openequivariance-156-faulthandler-file-baton-wait.txt"))
    assert f.severity == "warning" and "(line 2:" in f.message


def test_a_stale_git_lock_and_a_bare_import_hang_say_nothing(tmp_path):
    from conftest import FIXTURES
    from rulekit import paste_facts
    assert run_rule("torch-extension-build-lock-stale", recorded_paste_facts("crosslink-456-stale-git-index-lock.txt"))[0] == []
    # set S's nncf#1033: "it always hang at the last command" with no lock, FileBaton or extension named
    text = (FIXTURES / "tickets_blind_s" / "nncf-1033-stale-torch-extension-lock.txt").read_text(encoding="utf-8")
    assert run_rule("torch-extension-build-lock-stale", paste_facts(tmp_path, text, "nncf-1033.txt"))[0] == []
