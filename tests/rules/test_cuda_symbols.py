"""built-against-other-library-version on the dynamic loader's undefined CUDA runtime symbols and
missing CUDA version nodes (knowledge/messages/cuda_symbols.toml, knowledge/cuda_symbols.toml), on
public pastes (tests/fixtures/pastes, SOURCES.md there); torch's own libraries failing stay
torch-import-failed's."""

from __future__ import annotations

import pytest

from hpcdoctor.triage.messages import find_messages
from rulekit import facts, fired, recorded_paste_facts

SYMBOL = "built-against-other-library-version"


def pasted(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


@pytest.mark.parametrize("name, since, symbol", [
    ("d4lcn-31-cudaregisterfatbinaryend.txt", "10.1", "__cudaRegisterFatBinaryEnd"),
    ("faceboxes-12-cudapopcallconfiguration.txt", "9.2", "__cudaPopCallConfiguration"),
    ("yolo2-105-cudapopcallconfiguration-title.txt", "9.2", "__cudaPopCallConfiguration"),
])
def test_an_extension_built_by_a_newer_nvcc_than_the_runtime_it_loads(name, since, symbol):
    (f,) = fired(SYMBOL, recorded_paste_facts(name))
    assert f"built with CUDA {since} or later" in f.message and f"older libcudart that lacks {symbol}" in f.message
    assert f"CUDA {since} or newer runtime" in f.fix and "nvcc --version" in f.fix


def test_the_extensions_path_is_checked_with_ldd():
    (f,) = fired(SYMBOL, recorded_paste_facts("faceboxes-12-cudapopcallconfiguration.txt"))
    assert f.fix.startswith("ldd -r /home/nnir712/project/FaceBoxes.PyTorch-master/utils/nms/gpu_nms.cpython-36m-x86_64-linux-gnu.so")


def test_spaces_around_the_colon_as_a_user_retypes_it():
    # https://github.com/pmh47/dirt/issues/48 (tests/fixtures/tickets_blind_w/dirt-48-op-built-with-other-cuda.txt)
    (f,) = fired(SYMBOL, pasted("tensorflow.python.framework.errors_impl.NotFoundError : ~/dirt/dirt/librasterise.so : "
                                "undefined symbol : __cudaRegisterFatBinaryEnd\n"))
    assert "~/dirt/dirt/librasterise.so was built with CUDA 10.1 or later" in f.message


def test_a_version_node_of_another_cuda_major():
    # glibc's format (elf/dl-version.c) with the node of CUDA 11's libcudart (nvidia-cuda-runtime-cu11 11.8.89)
    text = ("ImportError: /usr/local/cuda/targets/x86_64-linux/lib/libcudart.so.11.0: version `libcudart.so.11.0' not found "
            "(required by /opt/conda/lib/python3.11/site-packages/cpuinfer_ext.cpython-311-x86_64-linux-gnu.so)\n")
    (f,) = fired(SYMBOL, pasted(text))
    assert "linked against CUDA 11's libcudart" in f.message and "another CUDA major's library" in f.message
    assert "CUDA 11.x runtime" in f.fix


def test_symbols_every_runtime_has_and_torchs_own_libraries_are_not_this_rule():
    # https://github.com/ruotianluo/pytorch-faster-rcnn/issues/50: no CUDA runtime loaded at all (a CPU-only torch)
    assert not fired(SYMBOL, pasted("pytorch-faster-rcnn/tools/../lib/nms/_ext/nms/_nms.so: undefined symbol: __cudaUnregisterFatBinary\n"))
    # torch's own undefined c10 symbol (loader.toml's example): torch-import-failed / the extension rules keep it
    assert not fired(SYMBOL, pasted("ImportError: /lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: "
                                    "undefined symbol: _ZN3c104cuda9SetDeviceEi\n"))
    # the deepspeed home ticket's torch-loaded cuBLAS (tests/fixtures/tickets/deepspeed-3386-ds-report-cublaslt-symbol.txt)
    assert not fired(SYMBOL, recorded_paste_facts_or_ticket("deepspeed-3386-ds-report-cublaslt-symbol.txt"))


def recorded_paste_facts_or_ticket(name: str):
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "tickets" / name).read_text(encoding="utf-8")
    return pasted(text)
