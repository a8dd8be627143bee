"""Error numbers and constants users retype (issue: "no refusal of a paste that holds any recognised
line"): a cudaError_t number beside the word CUDA in a sentence or a title, glog's CHECK_EQ against
cudaSuccess, and go-nvml's Return names (ERROR_LIBRARY_NOT_FOUND for NVML_ERROR_LIBRARY_NOT_FOUND).
Each on the unsealed set's paste and a second thread's, and silent on real lines that hold a number
beside "cuda" that is no CUDA error code."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, PASTES
from hpcdoctor.triage.messages import find_messages


def _read(name, families=("cuda", "nvml")):
    return find_messages((PASTES / name).read_text(encoding="utf-8"), families)


def test_a_retold_error_35_is_decoded_and_answered_as_a_warning_that_says_so():
    (s,) = [s for s in _read("ubuntu-for-robotics-3-error-35-libcuda1-missing.txt") if s["family"] == "cuda"]
    assert (s["id"], s["code"], s["retold"]) == ("cuda:cudaErrorInsufficientDriver", 35, True)
    assert "error 35: cuda driver" in s["text"]
    (f,) = fired("driver-too-old", recorded_paste_facts("ubuntu-for-robotics-3-error-35-libcuda1-missing.txt"))
    assert f.severity == "warning" and "the user retyped in a sentence" in f.message


def test_a_second_thread_naming_error_35_after_the_cuda_call():
    (s,) = [s for s in _read("digits-252-cudaruntimegetversion-error-35.txt") if s["family"] == "cuda"]
    assert s["id"] == "cuda:cudaErrorInsufficientDriver" and s["line"] == 1 and s["retold"]
    (f,) = fired("driver-too-old", recorded_paste_facts("digits-252-cudaruntimegetversion-error-35.txt"))
    assert f.severity == "warning"


def test_caffes_check_eq_against_cudasuccess_is_the_programs_own_line():
    got = [s for s in _read("rstarcnn-6-caffe-check-cudasuccess-35.txt") if s["family"] == "cuda"]
    assert [(s["id"], s.get("retold", False)) for s in got] == [("cuda:cudaErrorInsufficientDriver", False)]
    (f,) = fired("driver-too-old", recorded_paste_facts("rstarcnn-6-caffe-check-cudasuccess-35.txt"))
    assert f.severity == "error"


def test_numbers_beside_cuda_that_are_no_error_code_are_not_read():
    # TensorRT's own "Error Code 4" inside deserializeCudaEngine; nvidia-smi's "CUDA Version: 11.0" beside
    # a cu102 wheel and driver 450.51.05; "cuda:0" devices; make's "[target] Error 1/2/127" under cuda
    # paths (exit statuses); a title's "Error 127 ... /usr/local/cuda-11.5"
    for name in ("tensorrt-2195-engine-built-with-other-trt-version.txt", "pytorch-85332-cu102-on-driver-450-fits.txt",
                 "cor-gs-23-no-cuda-gpus-set-device-healthy.txt", "dasharo-issues-436-p2p-copy-zeroed-iommu.txt",
                 "gpu-burn-8-make-error-127-nvcc-path.txt", "opencv-23374-make-cuda-object-error-1.txt"):
        assert not [s for s in _read(name) if s.get("retold")], name
    # the make line alone, and a number the table lacks (127): no reading at all, not an unlisted CUDA error
    assert not _read("opencv-23374-make-cuda-object-error-1.txt", ("cuda",))
    assert not _read("gpu-burn-8-make-error-127-nvcc-path.txt", ("cuda",))


def test_go_nvml_return_names_are_nvml_constants():
    (s,) = [s for s in _read("k8s-device-plugin-856-needs-sys-admin.txt") if s["family"] == "nvml"]
    assert s["id"] == "nvml:NVML_ERROR_LIBRARY_NOT_FOUND" and s["line"] == 1
    (s,) = [s for s in _read("dra-driver-nvidia-gpu-1272-nvml-error-library-not-found.txt") if s["family"] == "nvml"]
    assert s["id"] == "nvml:NVML_ERROR_LIBRARY_NOT_FOUND" and s["line"] == 4
    (f,) = fired("gpu-driver-unusable", recorded_paste_facts("dra-driver-nvidia-gpu-1272-nvml-error-library-not-found.txt"))
    assert "no NVIDIA driver libraries" in f.message
    # the device plugin's crash is not the toolkit missing (the reporter's cause: the SYS_ADMIN capability)
    assert not fired("nvidia-container-toolkit-missing", recorded_paste_facts("k8s-device-plugin-856-needs-sys-admin.txt"))


def test_a_go_name_outside_an_nvml_line_is_not_read():
    # Vulkan's ERROR_DEVICE_LOST in an AMD GPU's title: the same spelling, another API, no NVML on the line
    assert not _read("hierarchos-native-1-amdgpu-job-timeout-kills-compute.txt", ("nvml",))
