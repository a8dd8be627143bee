"""torch-import-failed reading the dynamic loader's errors (knowledge/messages/loader.toml): a
symbol version libstdc++ lacks, an NCCL symbol the loaded libnccl lacks. The pastes are real
tickets of blind set D (tests/fixtures/tickets_blind_d/, scored before these entries existed)
and of set C, read in-process."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts, run_rule


def _ticket(tmp_path, corpus: str, name: str, cut: str = ""):
    text = (FIXTURES / corpus / f"{name}.txt").read_text(encoding="utf-8")
    if cut:
        assert cut in text
        text = text.replace(cut, "")
    return paste_facts(tmp_path, text, name + ".txt")


def test_a_glibcxx_version_required_by_torchs_library_names_the_libstdcxx_to_check(tmp_path):
    (f,) = fired("torch-import-failed", _ticket(tmp_path, "tickets_blind_d", "pytorch-157709-glibcxx-system-libstdcxx-conda"))
    assert "GLIBCXX_3.4.30" in f.message and "libtorch_python.so" in f.message
    assert f.fix.startswith("strings /lib/x86_64-linux-gnu/libstdc++.so.6 | grep -c '^GLIBCXX_3.4.30$'")


def test_a_glibcxx_version_without_required_by_is_torchs_when_the_user_says_import_torch(tmp_path):
    name = "trixie-97-glibcxx-not-found-import-torch"
    (f,) = fired("torch-import-failed", _ticket(tmp_path, "tickets_blind_d", name))
    assert "GLIBCXX_3.4.29" in f.message and f.severity in (None, "error")
    # Without the sentence naming `import torch`, nothing ties the loader's words to torch.
    cut = "I can install pytorch-2.0.1, but when I run `import torch` in python, I got this exception:"
    findings, _skipped = run_rule("torch-import-failed", _ticket(tmp_path, "tickets_blind_d", name, cut))
    assert not findings


def test_a_version_required_by_another_library_is_not_torchs(tmp_path):
    text = ("when I import torch after cv2:\nImportError: /usr/lib/x86_64-linux-gnu/libstdc++.so.6: version "
            "`GLIBCXX_3.4.30' not found (required by /opt/venv/lib/python3.10/site-packages/cv2/cv2.abi3.so)\n")
    findings, _skipped = run_rule("torch-import-failed", paste_facts(tmp_path, text))
    assert not findings


def test_an_undefined_nccl_symbol_said_with_import_torch_is_an_error_with_the_nccl_packages_to_check(tmp_path):
    (f,) = fired("torch-import-failed", _ticket(tmp_path, "tickets_blind_d", "pytorch-186591-nccl-comm-resume-cu12-cu13-title"))
    assert "ncclCommResume" in f.message and f.severity in (None, "error") and "nvidia-nccl" in f.fix


def test_an_undefined_nccl_symbol_alone_is_a_warning(tmp_path):
    (f,) = fired("torch-import-failed", _ticket(tmp_path, "tickets_blind_d", "codejudge-2-nccl-comm-register-cu11-cu12-mix"))
    assert "ncclCommRegister" in f.message and f.severity == "warning"


def test_an_extension_built_against_another_torch_stays_the_extensions_finding(tmp_path):
    g = _ticket(tmp_path, "tickets_blind_c", "neurips-llm-12-flash-attn-undefined-symbol")
    findings, _skipped = run_rule("torch-import-failed", g)
    assert not findings
    assert fired("torch-extension-version-mismatch", g)


def test_an_executable_stack_refused_to_torchs_library_is_answered_by_glibcs_tunable(tmp_path):
    # conda-forge/pytorch-cpu-feedstock#350, the reporter's command and the error it printed.
    text = ("python -c 'import torch'\n"
            "ImportError: libtorch_cpu.so: cannot enable executable stack as shared object requires: Invalid argument\n")
    (f,) = fired("torch-import-failed", paste_facts(tmp_path, text))
    assert "libtorch_cpu.so asks for an executable stack" in f.message
    assert f.fix.startswith("GLIBC_TUNABLES=glibc.rtld.execstack=2 python3 -c 'import torch'")
    assert "/torch/lib/libtorch_cpu.so" in f.fix and "patchelf --clear-execstack" in f.fix


def test_an_undefined_nccl_symbol_in_torchs_own_library_gets_the_nccl_fix(tmp_path):
    # THU-MIG/yolov10#306, the title as the reporter wrote it.
    text = ("ImportError: /root/.local/conda/envs/yolov10/lib/python3.9/site-packages/torch/lib/libtorch_cuda.so: "
            "undefined symbol: ncclCommRegister\n")
    (f,) = fired("torch-import-failed", paste_facts(tmp_path, text))
    assert "lacks ncclCommRegister" in f.message and f.severity in (None, "error") and "nvidia-nccl" in f.fix


def test_libgomp_out_of_static_tls_under_torchs_import_is_left_to_static_tls_exhausted(tmp_path):
    # NVIDIA-AI-IOT/jetcard#34: the reporter's words and the error, importing torch in JupyterLab.
    # glibc's fact has its own rule, which says torch's import is where it struck (test_static_tls_exhausted.py).
    text = ("But as soon as I try to import torch or torchvision in a Jupyter Notebook I get the following error:\n"
            "`OSError: /usr/lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block`\n")
    facts = paste_facts(tmp_path, text)
    assert fired("static-tls-exhausted", facts) and not run_rule("torch-import-failed", facts)[0]
