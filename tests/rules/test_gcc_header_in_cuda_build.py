"""nvcc-host-gcc-unsupported for gcc 12's own header failing inside a CUDA build, on set AI's real ticket
(athenapk#17: a Kokkos CUDA build at /opt/cuda with gcc 12.2.1, fixed by g++ 11): the version check
was bypassed, so the header error is what shows the pair."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts

NAME = "athenapk-17-cuda-build-with-gcc12-headers"


def _text() -> str:
    return (FIXTURES / "tickets_blind_ai" / f"{NAME}.txt").read_text(encoding="utf-8")


def test_the_header_error_names_gcc_12_and_the_first_cuda_that_accepts_it(tmp_path):
    (f,) = fired("nvcc-host-gcc-unsupported", paste_facts(tmp_path, _text(), NAME + ".txt"))
    assert "gcc 12's own C++ header failed inside the CUDA build (line 14" in f.message
    assert "CUDA 12.0 is the first to accept gcc 12" in f.message
    assert "-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-11" in f.fix and "NVCC_WRAPPER_DEFAULT_COMPILER" in f.fix


def test_the_same_error_in_gcc_11s_header_is_not_this_pair(tmp_path):
    # every CUDA of the table accepts gcc 11: the same words from its header are another fault
    text = _text().replace("c++/12.2.1/", "c++/11/")
    assert not fired("nvcc-host-gcc-unsupported", paste_facts(tmp_path, text, "gcc11.txt"))
