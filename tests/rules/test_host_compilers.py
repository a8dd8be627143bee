"""nvcc-host-gcc-unsupported on real pastes of crt/host_config.h's #error lines and nvcc's own
refusal (tests/fixtures/pastes, SOURCES.md there), and the table of limits read from NVIDIA's wheels."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts, run_rule
from hpcdoctor import knowledge
from hpcdoctor.triage.messages import find_messages

TICKETS = Path(__file__).resolve().parent.parent / "fixtures"


@pytest.mark.parametrize("paste, words", [
    ("fcos-37-gcc-too-new-for-cuda-9.txt", "the CUDA 9.0 toolkit's nvcc accepts gcc 6 at the newest"),
    ("colmap-1765-older-cuda-picked-rejects-gcc-9.txt", "the nvcc that ran accepts gcc 8 at the newest"),
    ("caffe2-442-cuda-8-gcc-5.txt", "the CUDA 8.0 toolkit's nvcc accepts gcc 5 at the newest"),
    ("cccl-10-gcc-10-cuda-image-nvcc.txt", "accepts gcc 9 at the newest"),
])
def test_gcc_newer_than_the_release_accepts(paste, words):
    (f,) = fired("nvcc-host-gcc-unsupported", recorded_paste_facts(paste))
    assert words in f.message and "the host gcc is newer" in f.message
    limit = int(words.split("gcc ")[1].split()[0])
    assert f"nvcc -ccbin /usr/bin/g++-{limit} " in f.fix and f"-DCMAKE_CUDA_HOST_COMPILER=/usr/bin/g++-{limit}" in f.fix
    assert f.fix.startswith("nvcc --version; which -a nvcc")   # an older CUDA first on PATH (colmap#1765)
    assert f.fix.splitlines()[-1].startswith("# last resort") and "-allow-unsupported-compiler" in f.fix.splitlines()[-1]


def test_clang_newer_than_the_release_accepts():
    (f,) = fired("nvcc-host-gcc-unsupported", recorded_paste_facts("espresso-4574-nvcc-11-4-clang-14.txt"))
    assert "accepts clang below 13" in f.message and "CUDA 11.7 and newer accept clang 13" in f.message
    assert "nvcc -ccbin /usr/bin/clang++-12" in f.fix


def test_nvcc_own_refusal_of_the_host_compiler():
    (f,) = fired("nvcc-host-gcc-unsupported", recorded_paste_facts("ethminer-900-nvcc-apple-clang-version.txt"))
    assert "refuses the host compiler" in f.message and "Apple clang" in f.message


def test_the_table_names_the_first_release_for_a_newer_gcc():
    # gcc 13 is first accepted by CUDA 12.4 (12.3's host_config.h: later than 12)
    text = ("/usr/include/crt/host_config.h:132:2: error: #error -- unsupported GNU version! gcc versions later than 12 "
            "are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version check; "
            "however, using an unsupported host compiler may cause compilation failure or incorrect run time execution. "
            "Use at your own risk.\n")
    (f,) = fired("nvcc-host-gcc-unsupported", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "CUDA 12.4 is the first release to accept gcc 13" in f.message


def test_every_release_row_has_its_wheel():
    rows = knowledge.load("cuda_host_compilers")["release"]
    assert [r["cuda"] for r in rows][:2] == ["11.7", "11.8"] and rows[-1]["cuda"] == "13.5"
    gcc = [r["gcc_max"] for r in rows]
    assert gcc == sorted(gcc) and all("wheel" in r["source"] for r in rows)


@pytest.mark.parametrize("ticket", [
    "tickets_blind_a/switch-cuda-4-nvcc-113-nvidia-smi-122-healthy.txt",
    "tickets_blind_f/gpu-burn-2-makefile-hardcodes-nvcc-healthy.txt",
    "tickets/deepspeed-6762-ds-report-env-healthy.txt",
])
def test_silent_on_healthy_nvcc_pastes(ticket):
    text = (TICKETS / ticket).read_text()
    assert not fired("nvcc-host-gcc-unsupported", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


# -- live: nvcc and gcc on PATH ------------------------------------------------------------------

COMPILERS = TICKETS / "public" / "compilers"


def test_the_version_banners_parse():
    from hpcdoctor.parse.compilers import parse_gcc_version, parse_nvcc_version

    assert parse_nvcc_version((COMPILERS / "nvcc-13.5.37-version.txt").read_text()) == {"release": "13.5", "version": "13.5.37"}
    assert parse_nvcc_version((COMPILERS / "nvcc-13.0.88-version.txt").read_text()) == {"release": "13.0", "version": "13.0.88"}
    assert parse_gcc_version((COMPILERS / "gcc-12.2-debian12-version.txt").read_text()) == {"version": "12.2.0", "major": 12}
    assert parse_nvcc_version("") is None and parse_gcc_version("Apple clang version 15.0.0\n") is None


def _live(release, gcc_major, **extra):
    hc = {"nvcc_path": "/usr/local/cuda/bin/nvcc", "nvcc": {"release": release, "version": f"{release}.1"},
          "gcc": {"version": f"{gcc_major}.1.0", "major": gcc_major}, "ccbin": None, "nvcc_flags": None, **extra}
    return facts("h100-kvm-1gpu", **{"host_compilers": hc})


def test_live_a_gcc_newer_than_the_nvcc_on_path_accepts():
    (f,) = fired("nvcc-host-gcc-unsupported", _live("12.3", 13))
    assert f.severity == "warning" and "CUDA 12.3, which accepts gcc 12 at the newest" in f.message
    assert "CUDA 12.4 is the first release to accept gcc 13" in f.message and "NVCC_CCBIN=/usr/bin/g++-12" in f.fix


def test_live_silent_where_the_pair_is_accepted_or_another_compiler_is_named():
    assert not fired("nvcc-host-gcc-unsupported", _live("12.4", 13))
    assert not fired("nvcc-host-gcc-unsupported", _live("12.3", 13, ccbin="/usr/bin/g++-12"))
    assert not fired("nvcc-host-gcc-unsupported", _live("12.3", 13, nvcc_flags="-ccbin=/usr/bin/g++-12"))
    assert not fired("nvcc-host-gcc-unsupported", _live("10.2", 9))   # a release the table does not hold


def test_cmake_names_the_cuda_it_chose():
    # CMake's own status line (CMakeDetermineCompilerId.cmake's format) above the header's error
    text = ("-- The CUDA compiler identification is NVIDIA 10.2.89\n"
            + (TICKETS / "tickets_blind_l" / "colmap-1765-older-cuda-picked-rejects-gcc-9.txt").read_text())
    (f,) = fired("nvcc-host-gcc-unsupported", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "the nvcc CMake chose (CUDA 10.2.89, line 1" in f.message and "accepts gcc 8 at the newest" in f.message


# -- nvcc's own refusal of an NVHPC host compiler (nvcc 13.0.88's strings; printed by 11.8 and 12.4) --

def test_nvhpc_compiler_other_than_nvcpp_names_cc():
    (f,) = fired("nvcc-host-gcc-unsupported", recorded_paste_facts("llm-awq-220-nvcc-refuses-nvhpc-cc.txt"))
    assert f.severity == "error" and "the CUDA 11.8 toolkit's nvcc" in f.message and "other than nvc++" in f.message
    assert "export CC=gcc CXX=g++" in f.fix and "CUDA 11.8 accepts gcc 11 at the newest" in f.fix
    assert "export CC=nvc++" in f.fix and "-allow-unsupported-compiler" not in f.fix   # no version check to skip


def test_nvhpc_refusal_retold_in_a_title_with_typographic_quotes():
    text = (TICKETS / "tickets_blind_p" / "megatron-lm-319-nvcc-refuses-nvhpc-host-compiler.txt").read_text()
    (f,) = fired("nvcc-host-gcc-unsupported", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "other than nvc++" in f.message and "line 1" in f.message and "export CC=gcc" in f.fix


def test_silent_on_a_missing_host_compiler():
    # nvcc's "Failed to preprocess host compiler properties": the -ccbin directory is gone, nothing refused
    assert not fired("nvcc-host-gcc-unsupported", recorded_paste_facts("compiler-explorer-8042-nvcc-ccbin-missing-gcc.txt"))


# torch's cpp_extension refuses a compiler older than its table's floor before nvcc runs (torch.toml
# cpp-extension-host-compiler-too-old). No public paste of these words was found: the entry's example,
# torch 2.13.0's f-string (torch/utils/cpp_extension.py lines 669-673) filled in.
def test_torchs_own_floor_on_the_host_compiler_stops_the_build(tmp_path):
    text = ("RuntimeError: The current installed version of g++ (4.8.5) is less than the minimum required version by "
            "CUDA 11.8 (6.0.0). Please make sure to use an adequate version of g++ (>=6.0.0, <12.0).\n")
    (hit,) = fired("nvcc-host-gcc-unsupported", paste_facts(tmp_path, text))
    assert hit.message.startswith("torch's cpp_extension compiler check") and "6.0.0 at the oldest" in hit.message
    assert "export CC=gcc CXX=g++" in hit.fix and "-ccbin" not in hit.fix


# https://github.com/Hanqer/deep-hough-transform/issues/43 (description): the warning, verbatim
def test_torchs_maximum_is_a_warning_it_does_not_stop_on(tmp_path):
    text = ("The current installed version of g++ (9.3.0) is greater than the maximum required version by CUDA 10.2 "
            "(8.0.0). Please make sure to use an adequate version of g++ (>=5.0.0, <=8.0.0).\n")
    findings, _ = run_rule("nvcc-host-gcc-unsupported", paste_facts(tmp_path, text))
    assert findings == []   # not fired("nvcc-host-gcc-unsupported" on torch's warning alone
