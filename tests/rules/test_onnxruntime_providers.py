"""ONNX Runtime's own execution-provider messages (knowledge/messages/onnxruntime.toml, ort_rust.toml) on
public pastes (tests/fixtures/pastes, SOURCES.md there): the C API's "CUDA execution provider is not
enabled in this build." feeds onnxruntime-without-cuda-provider with the binding's own fix; the provider
library that did not load for a missing CUDA/cuDNN dependency feeds cuda-runtime-library-missing."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_facts
from hpcdoctor.triage.messages import find_messages




@pytest.mark.parametrize("paste", [
    "ort-281-linux-cuda-provider-not-enabled.txt",
    "onnxruntime-libs-15-static-cpu-build-cuda-not-enabled.txt",
])
def test_ort_rust_with_a_cpu_build_gets_the_gpu_build_and_ort_dylib_path(paste):
    g = recorded_paste_facts(paste)
    (f,) = fired("onnxruntime-without-cuda-provider", g)
    assert f.severity == "error" and "built without the CUDA execution provider" in f.message
    assert "Rust (pykeio/ort)" in f.message and "ORT_DYLIB_PATH" in f.fix
    assert "pip install onnxruntime-gpu" not in f.fix
    assert not fired("cuda-runtime-library-missing", g)


def test_the_ort_463_ticket_without_backticks_is_read():
    text = ("Error: An error occurred when attempting to register CUDAExecutionProvider: CUDA execution provider "
            "is not enabled in this build.\nWarning: No execution providers registered successfully. Falling back to CPU.\n")
    ids = {s["id"] for s in find_messages(text)}
    assert {"onnxruntime:ep-not-enabled-in-build", "ort_rust:register-failed", "ort_rust:no-providers-registered"} <= ids
    (f,) = fired("onnxruntime-without-cuda-provider", told_facts(text))
    assert "ORT_DYLIB_PATH" in f.fix


def test_a_csharp_exception_gets_the_gpu_nuget_package():
    # the format string of provider_bridge_ort.cc as C#'s OnnxRuntimeException carries it (filled in: no
    # public paste copied here)
    text = "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:Fail] CUDA execution provider is not enabled in this build.\n"
    (f,) = fired("onnxruntime-without-cuda-provider", told_facts(text))
    assert "Microsoft.ML.OnnxRuntime.Gpu" in f.fix


def test_another_providers_build_or_the_rust_feature_line_is_not_the_cuda_one():
    for text in ("DML execution provider is not enabled in this build.\n",
                 "ROCM execution provider is not enabled in this build.\n",
                 # the program was built without ort's cuda Cargo feature: its build, not the library's
                 "`CUDAExecutionProvider` was not registered because its corresponding Cargo feature is not enabled.\n",
                 "No execution providers registered successfully. Falling back to CPU.\n"):
        assert find_messages(text), text
        assert not fired("onnxruntime-without-cuda-provider", told_facts(text)), text


@pytest.mark.parametrize("paste, words", [
    ("onnxruntime-21769-win-cuda-provider-error-126.txt", "cuDNN 9.x and CUDA 12.x"),
    ("vs-dpir-20-onnxruntime-cuda-provider-dll-not-loadable.txt", "Das angegebene Modul wurde nicht gefunden."),
])
def test_windows_error_126_on_the_cuda_provider_dll_is_a_missing_dependency(paste, words):
    g = recorded_paste_facts(paste)
    (f,) = fired("cuda-runtime-library-missing", g)
    assert f.severity == "error" and "ERROR_MOD_NOT_FOUND" in f.message and words in f.message
    assert f.fix.startswith("where cudart64_") and "CUDA-ExecutionProvider.html#requirements" in f.fix
    assert run_rule("onnxruntime-without-cuda-provider", g)[0] == []   # not judged without a Python listing, never fired


def test_windows_error_126_names_the_majors_only_where_onnxruntime_said_them():
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("onnxruntime-21769-win-cuda-provider-error-126.txt"))
    assert f.fix.startswith("where cudart64_12.dll cublasLt64_12.dll cudnn64_9.dll")
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("vs-dpir-20-onnxruntime-cuda-provider-dll-not-loadable.txt"))
    assert f.fix.startswith("where cudart64_*.dll cublasLt64_*.dll cudnn64_*.dll")


def test_linux_provider_load_failure_names_the_library_and_its_cuda():
    (f,) = fired("cuda-runtime-library-missing",
                 recorded_paste_facts("paddlenlp-8195-onnxruntime-cuda-provider-libcublaslt-11.txt"))
    assert "libcublasLt.so.11" in f.message and "built for CUDA 11.x" in f.message
    assert "libonnxruntime_providers_cuda.so" in f.fix


def test_failed_to_create_alone_is_read_but_fires_nothing():
    text = ("2022-03-19 20:14:30.0978594 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:535 "
            "onnxruntime::python::CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Please reference "
            "https://onnxruntime.ai/docs/reference/execution-providers/CUDA-ExecutionProvider.html#requirements to ensure "
            "all dependencies are met.\n")
    assert [s["id"] for s in find_messages(text)] == ["onnxruntime:failed-to-create-provider"]
    g = told_facts(text)
    assert not fired("cuda-runtime-library-missing", g)
    assert run_rule("onnxruntime-without-cuda-provider", g)[0] == []


def test_error_126_on_another_providers_dll_or_another_code_is_not_this_rule():
    for text in ('LoadLibrary failed with error 126 "" when trying to load "C:\\ort\\onnxruntime_providers_openvino.dll"\n',
                 'LoadLibrary failed with error 193 "" when trying to load "C:\\ort\\onnxruntime_providers_cuda.dll"\n'):
        assert not fired("cuda-runtime-library-missing", told_facts(text)), text
