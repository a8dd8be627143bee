"""xla-libdevice-not-found on public pastes of XLA's own messages (jaxlib and TensorFlow) and a
user's words (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts



@pytest.mark.parametrize("paste, severity, said", [
    ("tensorflow-60790-libdevice-required.txt", "error", "(it looked for ./libdevice.10.bc)"),
    ("jax-4452-libdevice-not-found.txt", "warning", "kernels that need a math routine will fail"),
    ("jax-22590-libdevice-not-detected-said.txt", "info", "the user says libdevice is not found"),
])
def test_xla_without_libdevice(paste, severity, said):
    (f,) = fired("xla-libdevice-not-found", recorded_paste_facts(paste))
    assert f.severity == severity and said in f.message
    assert 'export XLA_FLAGS="--xla_gpu_cuda_data_dir=${CUDA_HOME:-$CUDA_PATH} $XLA_FLAGS"' in f.fix
    assert "nvvm/libdevice/libdevice.10.bc" in f.fix


def test_jaxlibs_internal_error_alone_is_an_error():
    (f,) = fired("xla-libdevice-not-found", told_facts("RuntimeError: Internal: libdevice not found at ./libdevice.10.bc\n"))
    assert f.severity == "error" and "the compile failed" in f.message


def test_silent_where_libdevice_is_found_or_not_in_question():
    # XLA naming the libdevice it links: found, no failure (the wheel's "Linking with libdevice from: ")
    assert not fired("xla-libdevice-not-found", told_facts("I0101 xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc] "
                                                      "Linking with libdevice from: /usr/local/cuda/nvvm/libdevice/libdevice.10.bc\n"))
    assert not fired("xla-libdevice-not-found", recorded_paste_facts("pytorch-9124-pip-untrusted-http-index.txt"))
