"""intel-gpu-runtime-missing on real pastes of Level Zero's loader and sample, and SYCL's runtime
(tests/fixtures/pastes, SOURCES.md there), and on a recorded node's facts with an Intel GPU."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

SYM_INTEL = "intel-gpu-runtime-missing"

_INTEL = {"address": "0000:03:00.0", "class_id": "0380", "vendor_id": "8086", "device_id": "0bd5",
          "vendor": "Intel", "name": None, "modules": None, "driver": "i915", "bound": True}


@pytest.mark.parametrize("paste, words", [
    ("level-zero-65-intel-gpu-runtime-not-installed.txt", "no Level Zero driver reported a GPU"),
    ("level-zero-196-zello-driver-not-initialized.txt", "Level Zero found no driver it could initialise"),
    ("compute-runtime-832-libze-intel-gpu-missing.txt", "the Level Zero loader could not load Intel's GPU driver"),
])
def test_level_zero_finds_no_gpu_driver(paste, words):
    (f,) = fired("intel-gpu-runtime-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and words in f.message and "libze_intel_gpu.so.1" in f.message
    assert "ldconfig -p | grep -E 'libze_intel_gpu|libze_loader'" in f.fix and "--device /dev/dri" in f.fix


def test_the_loader_trace_is_not_also_a_generic_missing_library():
    assert not fired("shared-library-not-found", recorded_paste_facts("compute-runtime-832-libze-intel-gpu-missing.txt"))


def test_sycl_without_a_device_is_a_warning():
    text = ("RuntimeError: No device of requested type available. Please check "
            "https://software.intel.com/content/www/us/en/develop/articles/intel-oneapi-dpcpp-system-requirements.html "
            "-1 (PI_ERROR_DEVICE_NOT_FOUND)\n")
    (f,) = fired("intel-gpu-runtime-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "warning" and "ONEAPI_DEVICE_SELECTOR" in f.fix


def test_another_ze_result_is_read_but_not_this_rule():
    text = "zeDriverGet Failed with return code: ZE_RESULT_ERROR_DEVICE_LOST\n"
    assert [s["id"] for s in find_messages(text)] == ["level_zero:ZE_RESULT_ERROR_DEVICE_LOST"]
    assert not fired("intel-gpu-runtime-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))


def _node(env, drivers):
    return facts("h100-kvm-1gpu", **{"pci.gpus": [_INTEL], "env.vars": env,
                                     "vendor_loaders.level_zero": {"loader": "/usr/lib/x86_64-linux-gnu/libze_loader.so.1",
                                                                   "gpu_drivers": drivers, "alt_drivers": None}})


def test_live_an_intel_gpu_job_without_the_driver():
    (f,) = fired("intel-gpu-runtime-missing", _node({"ONEAPI_DEVICE_SELECTOR": "level_zero:gpu"}, []))
    assert f.severity == "warning" and "0000:03:00.0" in f.message and "ONEAPI_DEVICE_SELECTOR" in f.message


def test_live_silent_with_the_driver_or_without_intent():
    assert not fired("intel-gpu-runtime-missing", _node({"ONEAPI_DEVICE_SELECTOR": "level_zero:gpu"},
                                                        ["/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1"]))
    assert not fired("intel-gpu-runtime-missing", _node({}, []))   # an iGPU nobody computes on
    assert not fired("intel-gpu-runtime-missing", facts("h100-kvm-1gpu"))   # no Intel GPU


def test_a_sycl_ls_listing_without_any_gpu_is_a_warning_that_reads_the_groups():
    # intel/compute-runtime#477 (set U): 2021 layout, OpenCL CPU and FPGA emulation only; id shows render
    (f,) = fired(SYM_INTEL, recorded_paste_facts("../tickets_blind_u/compute-runtime-477-level-zero-gpu-package-missing.txt"))
    assert f.severity == "warning" and "lists no GPU device at all" in f.message
    assert "render and video groups" in f.message and "intel-level-zero-gpu level-zero" in f.fix
    # mudler/LocalAI#1660: the 2023 layout
    (f,) = fired(SYM_INTEL, recorded_paste_facts("localai-1660-sycl-ls-fpga-emulator-and-cpu-only.txt"))
    assert f.severity == "warning" and "opencl:acc" in f.message and "opencl:cpu" in f.message


def test_a_gpu_through_opencl_only_lacks_the_level_zero_driver():
    (f,) = fired(SYM_INTEL, recorded_paste_facts("compute-runtime-764-sycl-ls-opencl-gpu-only.txt"))
    assert f.severity == "warning" and "OpenCL only" in f.message and "libze1" in f.fix


def test_silent_on_a_listing_with_level_zero_gpus_or_another_vendors_gpu():
    assert not fired(SYM_INTEL, recorded_paste_facts("llama-cpp-sycl-doc-sycl-ls-level-zero-gpus-healthy.txt"))
    assert not fired(SYM_INTEL, recorded_paste_facts("llama-cpp-sycl-doc-sycl-ls-cuda-gpu-healthy.txt"))


# torch-without-xpu: the traceback torch 2.13.0+cpu prints for torch.zeros(1, device="xpu"), as run on
# this project's machine (tests/payload/test_torch_refusals_read.py runs it live); variants edited
_XPU_TRACEBACK = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
                  '  File "/work/main/.venv/lib/python3.11/site-packages/torch/xpu/__init__.py", line 358, in _lazy_init\n'
                  '    raise AssertionError("Torch not compiled with XPU enabled")\n'
                  'AssertionError: Torch not compiled with XPU enabled\n')


def test_a_torch_without_xpu_asked_for_the_intel_gpu_is_named_with_the_xpu_index():
    (f,) = fired("torch-without-xpu", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(_XPU_TRACEBACK)}))
    assert f.severity == "warning" and "torch._C._has_xpu" in f.fix
    assert "--index-url https://download.pytorch.org/whl/xpu" in f.fix


def test_torchs_cuda_refusal_is_not_the_xpu_one():
    text = _XPU_TRACEBACK.replace("XPU", "CUDA").replace("xpu", "cuda")
    assert not fired("torch-without-xpu", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
