"""OpenCL's error codes (knowledge/messages/opencl.toml) on real public pastes (tests/fixtures/pastes,
SOURCES.md there): every code of the Khronos headers is catalogued, read by its name, by its name
without CL_ (pyopencl), as pyopencl's old lower-case words and as a number beside an OpenCL word;
CL_OUT_OF_HOST_MEMORY feeds host-memory-insufficient and CL_PLATFORM_NOT_FOUND_KHR
opencl-icd-missing; a negative number without an OpenCL word is not OpenCL's."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, run_rule, told_facts
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages


def _opencl(text: str) -> list:
    return [(s["line"], s["id"]) for s in find_messages(text) if s["family"] == "opencl"]


def test_every_error_code_of_the_headers_is_an_entry():
    fam = messages.families(("opencl",))[0]
    codes = {e.key: e.get("code") for e in fam.entries if e.key.startswith("CL_")}
    # CL/cl.h: 0, -1..-19, -30..-72; the extension headers' -1000 and below (cl_gl.h, cl_d3d10/11.h,
    # cl_dx9_media_sharing.h, cl_egl.h, cl_ext.h, cl_va_api_media_sharing_intel.h); cl.xml's two pipe codes
    assert set(range(-19, 1)) | set(range(-72, -29)) <= set(codes.values())
    assert len(codes) == 108
    assert codes["CL_MAX_SIZE_RESTRICTION_EXCEEDED"] == -72 and codes["CL_INVALID_SEMAPHORE_KHR"] == -1142
    assert codes["CL_PLATFORM_NOT_FOUND_KHR"] == -1001 and codes["CL_INVALID_GL_SHAREGROUP_REFERENCE_KHR"] == -1000
    # KHR's and Intel's DX9 sharing share -1010: the number reads as KHR's
    assert fam.by_code[-1010].key == "CL_INVALID_DX9_MEDIA_ADAPTER_KHR"
    assert fam.by_key["CL_OUT_OF_HOST_MEMORY"].get("rules") == ["host-memory-insufficient"]


def test_vina_gpus_out_of_host_memory_is_the_hosts_memory():
    g = recorded_paste_facts("vina-gpu-21-49-cl-out-of-host-memory-large-box.txt")
    (f,) = fired("host-memory-insufficient", g)
    # the OpenCL implementation's words do not say which limit refused it: a warning, with what tells
    assert f.severity == "warning" and "line 1" in f.message and "Err-6:CL_OUT_OF_HOST_MEMORY" in f.message
    assert "free -g" in f.fix and "ulimit -v" in f.fix


def test_pyopencls_platform_not_found_is_its_entry_and_the_icd_rule():
    text = (PASTES / "btcrecover-540-pyopencl-platform-not-found.txt").read_text(encoding="utf-8")
    assert _opencl(text) == [(11, "opencl:CL_PLATFORM_NOT_FOUND_KHR")]
    (f,) = fired("opencl-icd-missing", told_facts(text))
    assert f.severity == "error" and "(line 11:" in f.message
    # pyopencl up to 2015.1: the same name as lower-case words
    words = (PASTES / "pyfai-323-pyopencl-platform-not-found-khr-words.txt").read_text(encoding="utf-8")
    assert _opencl(words) == [(3, "opencl:CL_PLATFORM_NOT_FOUND_KHR")]


def test_a_number_beside_an_opencl_call_is_read_as_its_code():
    text = (PASTES / "r-opencl-9-clbuildprogram-failed-with-11.txt").read_text(encoding="utf-8")
    (s,) = [s for s in find_messages(text) if s["family"] == "opencl"]
    assert (s["id"], s["line"], s["code"]) == ("opencl:CL_BUILD_PROGRAM_FAILURE", 6, -11)


@pytest.mark.parametrize("line, key", [
    # the emitters' own lines, from public tickets (each entry's or form's example_source)
    ("ERROR: OpenCL error: clBuildProgram (-11)", "CL_BUILD_PROGRAM_FAILURE"),                    # scopehal-apps#384
    ("ERROR: clBuildProgram(0x1229890,-cl-std=CL2.0) failed(-11) for com.amd.loomsl.calc_lens_distortionwarp_map",
     "CL_BUILD_PROGRAM_FAILURE"),                                                                 # amdovx-modules#19
    ("BUG:? clEnqueueNDRangeKernel failed with error code -5 (Out of resources)", "CL_OUT_OF_RESOURCES"),  # hastl#4
    ("clGetPlatformIDs returns status code -1001. Grepping through the opencl headers returned nothing",
     "CL_PLATFORM_NOT_FOUND_KHR"),                                                                # OpenCLCapsViewer#7
    ("OpenCL error: -5 -> CL_OUT_OF_RESOURCES", "CL_OUT_OF_RESOURCES"),                           # clearvolume#61
    ("OpenCL OpFuse erro:Build program failed, err:-11 !", "CL_BUILD_PROGRAM_FAILURE"),           # MNN#2523
    ("[20:22:33] Error -11: Building Program (clBuildProgram)", "CL_BUILD_PROGRAM_FAILURE"),       # sgminer#137
    ("clEnqueueReadBuffer failed: OUT_OF_RESOURCES", "CL_OUT_OF_RESOURCES"),                      # opencl_brute#4
    ("RuntimeError: clBuildProgram failed: invalid build options - ", "CL_INVALID_BUILD_OPTIONS"),  # pyopencl#45
    ("clBuildProgram(): CL_OUT_OF_HOST_MEMORY", "CL_OUT_OF_HOST_MEMORY"),                         # hashcat#3051
])
def test_the_forms_programs_print(line, key):
    assert _opencl(line) == [(1, f"opencl:{key}")]


@pytest.mark.parametrize("text", [
    # a negative number with no OpenCL word: the kernel's EIO from XFS (a real paste), a temperature
    (PASTES / "alba-469-xfs-log-force-error-5.txt").read_text(encoding="utf-8"),
    "error -5\n",
    "the job failed with exit code -5\n",
    # OpenCL's names that are not errors, a program's source, hashcat's warning that names the code
    "Device Type  CL_DEVICE_TYPE_GPU\nclGetDeviceIDs(CL_DEVICE_TYPE_GPU) returned CL_SUCCESS\n",
    "    case CL_OUT_OF_RESOURCES: return \"CL_OUT_OF_RESOURCES\";\n",
    "             This may cause \"CL_OUT_OF_RESOURCES\" or related errors.\n",
    # clinfo's build status is not an error code; "Allocation failed: ENOMEM" is not an OpenCL call's
    "[Error] [OpenCLDepthPacketProcessorImpl] Build Status: -2\n",
    "Allocation failed: ENOMEM\n",
])
def test_a_number_or_a_name_that_is_not_an_opencl_error_is_not_read(text):
    assert _opencl(text) == []


def test_an_unknown_code_beside_opencl_is_read_as_unlisted_and_feeds_nothing():
    # NVIDIA's driver returns -9999, which no Khronos header defines (gromacs-py#22)
    (s,) = [s for s in find_messages("Unknown OpenCL error: -9999\n") if s["family"] == "opencl"]
    assert s["id"] == "opencl:unlisted"
    g = told_facts("Unknown OpenCL error: -9999\n")
    assert run_rule("host-memory-insufficient", g)[0] == [] and not fired("opencl-icd-missing", g)


def test_other_codes_feed_no_rule():
    g = told_facts("OpenCL error CL_OUT_OF_RESOURCES (-5) during call: clEnqueueNDRangeKernel('gemm', dims=2, "
                   "globalsize=16x16x1, localsize=16x16x1) sync=false\n")
    assert run_rule("host-memory-insufficient", g)[0] == [] and not fired("opencl-icd-missing", g)
