"""torch-build-broken: a CUDA build of torch whose imported cuDNN module is absent (torch 2.13's
torch/backends/cudnn/__init__.py sets _cudnn = None when torch._C has none, and version() is then None)."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts, run_rule

DEEP = {"torch.depth": "deep", "torch.source": "payload (deep)"}


def test_an_imported_cuda_build_without_cudnn():
    (f,) = fired("torch-build-broken", facts("h100-kvm-1gpu", **DEEP, **{"torch.cudnn": None}))
    assert "compiled without cuDNN" in f.message and f.severity == "warning"
    assert "torch.backends.cudnn.version()" in f.fix and "--index-url https://download.pytorch.org/whl/cu128" in f.fix


def test_a_build_with_cudnn_a_failed_probe_or_a_report_that_did_not_import_torch_is_silent():
    assert not fired("torch-build-broken", facts("h100-kvm-1gpu", **DEEP))   # cuDNN 9.19.0
    assert not fired("torch-build-broken", facts("h100-kvm-1gpu", **DEEP, **{"torch.cudnn": None,
                                                                        "torch.errors": {"cudnn": "RuntimeError: x"}}))
    assert not fired("torch-build-broken", facts("h100-kvm-1gpu", **{"torch.cudnn": None}))   # collect_env: not imported here
    assert not fired("torch-build-broken", facts("h100-kvm-1gpu", **DEEP, **{"torch.cudnn": None, "torch.build": "rocm"}))


def test_a_bare_segfault_in_a_paste_is_not_judged():
    findings, skipped = run_rule("torch-build-broken", recorded_paste_facts("probabilistic-unet-pytorch-2-segfault-torch-built-without-cudnn.txt"))
    assert not findings and skipped   # no torch was imported: what it was compiled with is unknown
