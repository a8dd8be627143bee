"""cuda-runtime-library-missing on a link that finds no CUDA/cuDNN/NCCL link library (GNU ld, gold, lld,
ld64) and on Torch7 cudnn.torch's "libcudnn (R<n>) not found in library path" (tests/fixtures/pastes,
SOURCES.md there; format strings filled in where the test says so)."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def pasted_text(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


def test_conda_ld_in_backticks_of_prose_is_the_link_library_missing():
    # https://github.com/ivan-chai/torch-linear-assignment/issues/2: the line inside backticks of a sentence
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts("torch-linear-assignment-2-conda-ld-cannot-find-lcudart.txt"))
    assert "libcudart.so" in f.message and "conda environment" in f.message and f.evidence["ticket.line"] == 9
    assert "conda install -c nvidia cuda-cudart-dev" in f.fix
    assert not fired("library-devel-headers-missing", recorded_paste_facts("torch-linear-assignment-2-conda-ld-cannot-find-lcudart.txt"))


@pytest.mark.parametrize("line, lib, package", [
    # GNU ld 2.38+'s format (ldfile.c "%P: cannot find %s: %E"), gold's ("<program>: error: cannot find -l%s"),
    # lld's and ld64's, each with a library filled in: no public paste used for these
    ("/usr/bin/ld: cannot find -lcublasLt: No such file or directory", "libcublasLt.so", None),
    ("/usr/bin/ld.gold: error: cannot find -lnccl", "libnccl.so", None),
    ("ld.lld: error: unable to find library -lcudnn", "libcudnn.so", None),
    ("ld: library not found for -lcudart", "libcudart.so", None),
    ("/opt/conda/envs/b/bin/x86_64-conda-linux-gnu-ld: cannot find -lcusparse: No such file or directory", "libcusparse.so", "libcusparse-dev"),
])
def test_each_linkers_words_for_a_cuda_link_library(line, lib, package):
    (f,) = fired("cuda-runtime-library-missing", pasted_text(line + "\n"))
    assert f"no {lib}" in f.message
    if package:
        assert f"conda install -c nvidia {package}" in f.fix
    else:
        assert "export LIBRARY_PATH=" in f.fix and "conda install" not in f.fix


def test_another_library_and_prose_are_not_this_rule():
    assert not fired("cuda-runtime-library-missing", pasted_text("/usr/bin/ld: cannot find -lgsl: No such file or directory\n"))
    # -lcuda is the driver's (triton-libcuda-not-found's), and a sentence about ld is no linker's line
    assert not fired("cuda-runtime-library-missing", pasted_text("/usr/bin/ld: cannot find -lcuda\n"))
    assert not fired("cuda-runtime-library-missing", pasted_text("I think gold ld: cannot find -lcudartx is odd\n"))
    assert not fired("cuda-runtime-library-missing", pasted_text("the build says cannot find -lcudart\n"))


@pytest.mark.parametrize("name, so", [("neural-style-224-libcudnn-r4-not-found.txt", "libcudnn.4.dylib"),
                                      ("itorch-160-libcudnn-r5-not-found-in-jupyter.txt", "libcudnn.so.5")])
def test_cudnn_torch_not_found_keys_its_release_from_the_text(name, so):
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts(name))
    assert f"found no {so}" in f.message
    assert "kernel.json" in f.fix
    assert ("CUDNN_PATH=" in f.fix) == so.endswith(".5")   # R4 never read CUDNN_PATH; master's R5 does
    assert not fired("cudnn-version-mismatch", recorded_paste_facts(name))


def test_r6_prints_its_backslash_and_r1_names_the_bare_library():
    # soumith/cudnn.torch ffi.lua @ R6 b76500ec and R3 677739cf: the messages as Lua's error() prints them (no public paste)
    (f,) = fired("cuda-runtime-library-missing", pasted_text(
        "/home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1628: 'libcudnn (R6\\) not found in library path.\n"))
    assert "libcudnn.so.6" in f.message and "CUDNN_PATH=/usr/local/cuda/lib64/libcudnn.so.6" in f.fix
    (g,) = fired("cuda-runtime-library-missing", pasted_text(
        "/home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:577: 'libcudnn.so not found in library path.\n"))
    assert "found no libcudnn.so " in g.message


def test_cudnn_torchs_driver_check_is_driver_too_old():
    # soumith/cudnn.torch ffi.lua @ master 008c49de: error('Insufficient GPU driver version.') (no public paste)
    (f,) = fired("driver-too-old", pasted_text("/home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1629: Insufficient GPU driver version.\n"))
    assert "Insufficient GPU driver version" in f.message


@pytest.mark.parametrize("name, libs", [
    ("darknet-7535-ld-cannot-find-lcudart-lcublas-lcurand.txt", "libcudart.so, libcublas.so, libcurand.so"),
    ("pytorch-13175-caffe2-ld-cannot-find-lcudart-lnvrtc.txt", "libcudart.so, libnvrtc.so"),
])
def test_every_cuda_library_a_system_link_names_is_read(name, libs):
    (f,) = fired("cuda-runtime-library-missing", recorded_paste_facts(name))
    assert f"found no {libs} " in f.message
    assert 'export LIBRARY_PATH="${CUDA_HOME:-/usr/local/cuda}/lib64' in f.fix and "conda install" not in f.fix
