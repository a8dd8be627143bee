"""nvjitlink.toml and cudnn_frontend.toml read on lines users pasted in public threads, left alone
on other libraries' lines, and each family's enum held to the header it was read from."""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:   # Python 3.9 and 3.10: the tomli backport the package depends on
    import tomli as tomllib
from pathlib import Path

import pytest

from hpcdoctor.triage.messages import find_messages

MESSAGES = Path(__file__).resolve().parents[2] / "hpcdoctor" / "knowledge" / "messages"
OURS = ("nvjitlink", "cudnn_frontend")


def _read(text: str, family: str) -> list:
    return sorted({s["id"] for s in find_messages(text) if s["family"] == family})


REAL_PASTES = [
    pytest.param(
        # NVIDIA/numba-cuda#163 (pynvjitlink on an HPC cluster; ptxas's log line, then nvJitLink's own)
        "pynvjitlink.api.NvJitLinkError: NVJITLINK_ERROR_PTX_COMPILE error when calling nvJitLinkAddData\n"
        "ptxas application ptx input, line 9; fatal   : Unsupported .version 8.7; current version is '8.4'\n"
        "ERROR NVJITLINK_ERROR_PTX_COMPILE: JIT the PTX (<cudapy-ptx>)",
        "nvjitlink", ["nvjitlink:NVJITLINK_ERROR_PTX_COMPILE"], id="numba-cuda-163-pynvjitlink"),
    pytest.param(
        # NVIDIA/numba-cuda#725 (cuda.bindings' nvJitLinkError: the name without NVJITLINK_, then the number)
        "FAILED cudapy/test_array_reductions.py::TestArrayReductions::test_mean_basic - "
        "cuda.bindings.nvjitlink.nvJitLinkError: ERROR_PTX_COMPILE (4)\n"
        "Linker error log: ptxas fatal   : (C7907) Internal compiler error.\n"
        "ptxas fatal   : Ptx assembly aborted due to errors",
        "nvjitlink", ["nvjitlink:NVJITLINK_ERROR_PTX_COMPILE"], id="numba-cuda-725-cuda-bindings"),
    pytest.param(
        # numba/numba#10353 (a debugger's class name on one line, the text on the next)
        "发生异常: nvJitLinkError       (note: full exception trace is shown but execution is paused at: _run_module_as_main)\n"
        "ERROR_INTERNAL (6)\n"
        "Linker error log: ERROR 4 in nvvmAddNVVMContainerToProgram, may need newer version of nvJitLink library",
        "nvjitlink", ["nvjitlink:NVJITLINK_ERROR_INTERNAL", "nvjitlink:nvvm-input-needs-newer-nvjitlink"],
        id="numba-10353-outdated-nvjitlink"),
    pytest.param(
        # ostris/ai-toolkit#203 (torch 2.5's cuDNN attention; the user's paste has no final full stop)
        "RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support the graph",
        "cudnn_frontend", ["cudnn_frontend:no-execution-plans-support-graph"], id="ai-toolkit-203"),
    pytest.param(
        # YanWenKun/ComfyUI-Docker#140
        "`KSamplerAdvanced - cuDNN Frontend error: [cudnn_frontend] Error: No valid execution plans built.`",
        "cudnn_frontend", ["cudnn_frontend:no-valid-execution-plans-built"], id="comfyui-docker-140"),
    pytest.param(
        # NVIDIA/TransformerEngine#651 (cudnn-frontend 1.4 or older: the text before v1.5.0)
        "RuntimeErrorRuntimeError: RuntimeError/fsx/sbuasai/test_te/deps/TransformerEngine/transformer_engine/"
        "common/fused_attn/fused_attn_f16_arbitrary_seqlen.cu:227 in function operator(): cuDNN Error: "
        "[cudnn_frontend] Error: No execution plans built successfully.. For more information, enable cuDNN "
        "error logging by setting CUDNN_LOGERR_DBG=1 and CUDNN_LOGDEST_DBG=stderr in the environment.RuntimeError",
        "cudnn_frontend", ["cudnn_frontend:no-execution-plans-built-successfully"], id="transformerengine-651"),
    pytest.param(
        # microsoft/onnxruntime#26274 (ONNX Runtime prints error_code_t's number and name)
        "id, common::Status> = void] CUDNN_FE failure 8: HEURISTIC_QUERY_FAILED ; GPU=0 ; hostname=177c8d853272 ; "
        "file=/onnxruntime_src/onnxruntime/core/providers/cuda/nn/conv.cc ; line=238 ; "
        "expr=s_.cudnn_fe_graph->create_execution_plans({heur_mode}); ",
        "cudnn_frontend", ["cudnn_frontend:HEURISTIC_QUERY_FAILED"], id="onnxruntime-26274"),
    pytest.param(
        # Lightning-AI/lightning-thunder#625 (its title: HEURISTIC_QUERY_FAILED's own message)
        "cuDNN executor: No valid engine configs for MUL_Reduction_MUL_Matmul_MUL_ADD_SUB_EXP_Reshape_Matmul_"
        "Matmul_MUL_SUB_MUL_Reduction_MUL_Reshape_Matmul_Reshape_Matmul_",
        "cudnn_frontend", ["cudnn_frontend:no-valid-engine-configs"], id="lightning-thunder-625"),
]


@pytest.mark.parametrize("paste, family, expected", REAL_PASTES)
def test_a_real_paste_is_read_as_its_entry(paste, family, expected):
    assert _read(paste, family) == expected


def test_the_cuda_bindings_form_puts_the_prefix_back_and_keeps_the_number():
    # NVIDIA/numba-cuda#725: "ERROR_PTX_COMPILE (4)" is NVJITLINK_ERROR_PTX_COMPILE, code 4
    line = "cuda.bindings.nvjitlink.nvJitLinkError: ERROR_PTX_COMPILE (4)"
    got = [s for s in find_messages(line) if s["family"] == "nvjitlink"]
    assert [(s["id"], str(s.get("code"))) for s in got] == [("nvjitlink:NVJITLINK_ERROR_PTX_COMPILE", "4")]


OTHER_LIBRARIES = [
    # mortacious/cupy-knn#3 (NVRTC's status, nvrtc.toml's)
    ("cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_COMPILATION (6)", "nvrtc"),
    # deepseek-ai/DeepSeek-VL#30 (torch's cuDNN status, cudnn.toml's)
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "cudnn"),
    # microsoft/onnxruntime#1606 (ONNX Runtime's legacy cuDNN call, not the frontend's)
    ("2019-08-12 18:22:52.1338363 [E:onnxruntime:test, cuda_call.cc:93 onnxruntime::CudaCall] CUDNN failure 3: "
     "CUDNN_STATUS_BAD_PARAM ; GPU=0 ; hostname=WIN10-DEV ; expr=cudnnSetTensorNdDescriptor(tensor_, dataType, "
     "static_cast<int>(rank), dims.data(), strides.data());", "cudnn"),
    # NVIDIA/cuda-samples#168 (the linker, not nvJitLink's result)
    ("/usr/bin/ld: cannot find -lnvJitLink  ", None),
    # cuFFT's own code for a failure inside nvJitLink: cufft.toml's message in torch's "cuFFT error: "
    # format (pytorch/pytorch CuFFTUtils.h), filled in; no public paste recorded
    ("RuntimeError: cuFFT error: CUFFT_NVJITLINK_FAILURE", "cufft"),
]


@pytest.mark.parametrize("line, owner", OTHER_LIBRARIES)
def test_another_librarys_line_is_not_read_by_these_families(line, owner):
    found = find_messages(line)
    assert [s["id"] for s in found if s["family"] in OURS] == []
    if owner is not None:
        assert any(s["family"] == owner for s in found), found


# The enums as their headers list them, in order (value = position):
# nvJitLink.h of nvidia-nvjitlink==13.4.92 (lines 37-57); error_code_t of NVIDIA/cudnn-frontend @
# 3929da2ef4c1dba1bb8acb68727b9134f26f40c0 include/cudnn_frontend/graph_helpers.h (lines 36-53).
ENUMS = {
    "nvjitlink": [
        "NVJITLINK_SUCCESS", "NVJITLINK_ERROR_UNRECOGNIZED_OPTION", "NVJITLINK_ERROR_MISSING_ARCH",
        "NVJITLINK_ERROR_INVALID_INPUT", "NVJITLINK_ERROR_PTX_COMPILE", "NVJITLINK_ERROR_NVVM_COMPILE",
        "NVJITLINK_ERROR_INTERNAL", "NVJITLINK_ERROR_THREADPOOL", "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        "NVJITLINK_ERROR_FINALIZE", "NVJITLINK_ERROR_NULL_INPUT", "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
        "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE", "NVJITLINK_ERROR_ARCH_MISMATCH", "NVJITLINK_ERROR_OUTDATED_LIBRARY",
        "NVJITLINK_ERROR_MISSING_FATBIN", "NVJITLINK_ERROR_UNRECOGNIZED_ARCH", "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
        "NVJITLINK_ERROR_LTO_NOT_ENABLED",
    ],
    "cudnn_frontend": [
        "OK", "ATTRIBUTE_NOT_SET", "SHAPE_DEDUCTION_FAILED", "INVALID_TENSOR_NAME", "INVALID_VARIANT_PACK",
        "GRAPH_NOT_SUPPORTED", "GRAPH_EXECUTION_PLAN_CREATION_FAILED", "GRAPH_EXECUTION_FAILED",
        "HEURISTIC_QUERY_FAILED", "UNSUPPORTED_GRAPH_FORMAT", "CUDA_API_FAILED", "CUDNN_BACKEND_API_FAILED",
        "INVALID_CUDA_DEVICE", "HANDLE_ERROR", "INVALID_VALUE", "NVRTC_COMPILATION_FAILED",
    ],
}


@pytest.mark.parametrize("family", OURS)
def test_codes_are_unique_and_are_the_headers_enum(family):
    data = tomllib.loads((MESSAGES / f"{family}.toml").read_text(encoding="utf-8"))
    assert data["family"]["id"] == family
    coded = [(e["code"], e["key"]) for e in data["entry"] if "code" in e]
    codes = [c for c, _ in coded]
    assert len(codes) == len(set(codes)), sorted(codes)
    assert sorted(coded) == list(enumerate(ENUMS[family]))
    # every enum entry's message is its own name, and no entry feeds a rule yet
    for e in data["entry"]:
        if "code" in e:
            assert e["message"] == e["key"]
        assert e["rules"] == []
