"""cudnn-version-mismatch on public pastes of Torch7's cudnn.torch version check (tests/fixtures/pastes,
SOURCES.md there) and torch 2.13's format string for a cuDNN too new for the GPU."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("name, found", [("cudnn-torch-359-bindings-r5-cudnn-6.txt", "6020"),
                                         ("torch7-1106-bindings-r5-cudnn-7.txt", "7004")])
def test_the_bindings_refuse_another_cudnn_major(name, found):
    (f,) = fired("cudnn-version-mismatch", recorded_paste_facts(name))
    assert f"loaded is version {found}" in f.message and "5.x" in f.message
    # the branch of the loaded cuDNN's major (an NVIDIA maintainer in #359: R6 for cuDNN 6)
    assert f"git clone -b R{found[0]} https://github.com/soumith/cudnn.torch" in f.fix


def test_a_release_branchs_minimum_is_the_same_refusal():
    # soumith/cudnn.torch ffi.lua @ R5 97520f7c: the format string, a cuDNN 4 (4007) filled in (no public paste)
    text = ("/home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1607: These bindings are for version 5005 or above, "
            "while the loaded CuDNN is version: 4007  \nAre you using an older version of CuDNN?\n")
    (f,) = fired("cudnn-version-mismatch", pasted_text(text))
    assert "version 5005 or above" in f.message and "loaded is version 4007" in f.message
    assert "git clone -b R4 " in f.fix and "libcudnn.so.5" in f.fix


def test_torchs_cudnn_too_new_for_the_gpu():
    # torch 2.13.0 torch/backends/cudnn/__init__.py's message, as it raises it
    text = ("RuntimeError: cuDNN version 91100 is not compatible with devices with SM < 7.5. Please install a version "
            "of PyTorch with a compatible cuDNN version. https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix\n")
    (f,) = fired("cudnn-version-mismatch", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "cuDNN 91100" in f.message and "below 7.5" in f.message


def test_a_status_that_names_no_version_and_the_frameworks_own_checks_are_not_this_rule():
    assert not fired("cudnn-version-mismatch", recorded_paste_facts("neuraltalk2-122-cudnn-not-initialized-old-cudnn.txt"))
    assert not fired("cudnn-version-mismatch", pasted_text("2023-06-19 W tensorflow/core/framework/op_kernel.cc:1830] "
                                                            "OP_REQUIRES failed at conv_ops.cc:1068 : UNIMPLEMENTED: DNN library is not found.\n"))


def pasted_text(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


def test_xlas_loaded_runtime_cudnn_is_this_rule():
    # https://github.com/conda-forge/jaxlib-feedstock/issues/329 (cuDNN's version is this rule's in every framework)
    (f,) = fired("cudnn-version-mismatch", recorded_paste_facts("jaxlib-feedstock-329-cudnn-9-10-under-9-13.txt"))
    assert "cuDNN 9.10.1 loaded, built against 9.13.1" in f.message


# https://github.com/apapiu/guided-diffusion-keras/issues/8 (tests/fixtures/tickets_blind_w): the reporter's fix
# was pointing TensorFlow at the cuDNN it supports
GUIDED = ("# DNN library is not found\n\nNode: 'residual_unet/conv2d/Conv2D'\nDNN library is not found.\n\n"
          "python version 3.8\ntensorflow: 2.8.0\ncuDNN: 8.1.1\ncuda: 11.2\n")


def test_dnn_library_not_found_with_a_fitting_cudnn_named_is_another_libcudnn_loaded():
    (f,) = fired("cudnn-version-mismatch", pasted_text(GUIDED))
    assert f.severity == "warning"
    assert "TensorFlow 2.8.0 was built and tested with cuDNN 8.1 and CUDA 11.2" in f.message
    assert "loads another libcudnn" in f.message and "ldconfig -p | grep libcudnn" in f.fix


def test_dnn_library_not_found_with_an_older_cudnn_named():
    (f,) = fired("cudnn-version-mismatch", pasted_text(GUIDED.replace("2.8.0", "2.12.0")))
    assert f.severity == "error" and "cuDNN 8.6" in f.message and "an older minor" in f.message
