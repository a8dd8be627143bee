"""TensorRT's three rules on public pastes (tests/fixtures/pastes, SOURCES.md there) and on the
runtime's own strings (libnvinfer_lean.so.11, TensorRT 11.4.0.106) with values filled in."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, said, install", [
    ("focoos-143-ort-tensorrt-libnvinfer-10-missing.txt", "libnvinfer cannot be loaded", 'pip install "tensorrt-cu12==10.*"'),
    ("deface-53-ort-tensorrt-libnvinfer-8-not-linked.txt", "libnvinfer cannot be loaded", 'pip install "tensorrt==8.*"'),
    ("frigate-24397-tensorrt-libs-missing-from-image.txt", "has no TensorRT package", 'pip install "tensorrt-cu12"'),
])
def test_tensorrt_missing_where_the_program_asks_for_it(paste, said, install):
    (f,) = fired("tensorrt-libraries-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and said in f.message
    assert install in f.fix and "tensorrt_libs" in f.fix and "LD_LIBRARY_PATH" in f.fix


def test_onnxruntimes_fallback_is_said_only_where_onnxruntime_spoke():
    (f,) = fired("tensorrt-libraries-missing", recorded_paste_facts("deface-53-ort-tensorrt-libnvinfer-8-not-linked.txt"))
    assert "onnxruntime then falls back" in f.message
    (f,) = fired("tensorrt-libraries-missing", recorded_paste_facts("frigate-24397-tensorrt-libs-missing-from-image.txt"))
    assert "onnxruntime then falls back" not in f.message


def test_a_cuda_library_missing_under_the_tensorrt_provider_is_not_tensorrts():
    # onnxruntime's provider failing on libcublas: CUDA's library, not TensorRT's (the loader's own text after "with error:")
    text = ("/onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1209 onnxruntime::Provider& "
            "onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library "
            "libonnxruntime_providers_tensorrt.so with error: libcublas.so.11: cannot open shared object file: No such file or directory\n")
    assert "tensorrt:ort-tensorrt-provider-load-failed" in {s["id"] for s in find_messages(text)}
    assert not fired("tensorrt-libraries-missing", told_facts(text))


def test_tensorflows_optional_probe_is_left_alone():
    assert not fired("tensorrt-libraries-missing", recorded_paste_facts("lora-easy-training-50-tf-libnvinfer-probe.txt"))


@pytest.mark.parametrize("paste, said", [
    ("insightface-rest-84-trt-plan-library-version.txt", "this runtime is TensorRT 8.2.3, the plan says 8.2.1"),
    ("tensorrt-2195-engine-built-with-other-trt-version.txt", "the runtime's serialization version is 0, the plan's 96"),
])
def test_a_plan_of_another_tensorrt_version(paste, said):
    (f,) = fired("tensorrt-engine-version-mismatch", recorded_paste_facts(paste))
    assert f.severity == "error" and said in f.message
    assert "trtexec --getPlanVersionOnly --loadEngine=model.engine" in f.fix and "--versionCompatible" in f.fix
    assert not fired("tensorrt-engine-built-for-other-gpu", recorded_paste_facts(paste))


def test_tensorrt_10s_serialization_words_are_the_same_diagnosis():
    # libnvinfer_lean.so.11's strings, the version numbers filled in
    text = ("Trying to load an engine created with incompatible serialization version (239 vs 240). Check that the engine was "
            "not created using safety runtime, same OS was used and version compatibility parameters were set accordingly "
            "and that it is a TRT engine file.\n")
    (f,) = fired("tensorrt-engine-version-mismatch", told_facts(text))
    assert "another TensorRT version" in f.message


@pytest.mark.parametrize("paste, said", [
    ("tensorrt-564-engine-built-on-other-gpu.txt", "this GPU is compute 6.1, the plan was built for compute 7.5"),
    ("tensorrt-2177-incompatible-device-compute-8.6.txt", "this GPU is compute 6.1, the plan was built for compute 8.6"),
    ("onnxruntime-15250-incompatible-device-retyped.txt", "this GPU is compute 7.5, the plan was built for compute 6.1"),
])
def test_a_plan_built_on_another_gpu(paste, said):
    (f,) = fired("tensorrt-engine-built-for-other-gpu", recorded_paste_facts(paste))
    assert f.severity == "error" and said in f.message
    assert "nvidia-smi --query-gpu=index,name,compute_cap --format=csv" in f.fix and "--hardwareCompatibilityLevel=ampere+" in f.fix
    assert not fired("tensorrt-engine-version-mismatch", recorded_paste_facts(paste))


def test_another_model_of_the_same_capability_is_a_warning():
    text = ("[TRT] [W] Using an engine plan file across different models of devices is not supported and is likely to affect "
            "performance or even cause errors or deadlock.\n")
    (f,) = fired("tensorrt-engine-built-for-other-gpu", told_facts(text))
    assert f.severity == "warning" and "another GPU model" in f.message


def test_silent_without_tensorrts_words():
    for paste in ("lora-easy-training-50-tf-libnvinfer-probe.txt", "pytorch-9124-pip-untrusted-http-index.txt"):
        assert not fired("tensorrt-engine-version-mismatch", recorded_paste_facts(paste))
        assert not fired("tensorrt-engine-built-for-other-gpu", recorded_paste_facts(paste))
