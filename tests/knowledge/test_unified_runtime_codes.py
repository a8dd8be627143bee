"""unified_runtime.toml: oneAPI Unified Runtime's ur_result_t codes, as SYCL (DPC++) and PyTorch's XPU
backend print them, read from lines users pasted in public threads and from Intel's own sample docs."""

from __future__ import annotations

import sys

import pytest

from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

CATALOGUE = messages.MESSAGES_DIR / "unified_runtime.toml"


def _ur(text: str):
    return [s for s in find_messages(text) if s["family"] == "unified_runtime"]


@pytest.mark.parametrize("line, key, returned", [
    # oneapi-src/oneAPI-samples @ 07e17f836b2935b1c0c4177df4997d05f8240237
    # Tools/ApplicationDebugger/guided_matrix_mult_BadBuffers/README.md (the sample's crash on an Intel GPU)
    ("   what():  Native API failed. Native API returns: 20 (UR_RESULT_ERROR_DEVICE_LOST)",
     "UR_RESULT_ERROR_DEVICE_LOST", "20"),
    # intel/intel-extension-for-pytorch#838 (a PyTorch XPU run under torchrun)
    ("[0] [rank0]: RuntimeError: UR backend failed. UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
     "UR_RESULT_ERROR_OUT_OF_RESOURCES", "40"),
    # intel/llm-scaler#304 (vLLM on XPU, a worker's log line)
    ("(Worker_TP0 pid=1400) ERROR 03-02 02:46:13 [multiproc_executor.py:815] RuntimeError: UR backend failed. "
     "UR backend returns:40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)",
     "UR_RESULT_ERROR_OUT_OF_RESOURCES", "40"),
    # ggml-org/llama.cpp#25286 (the user's paste puts the name in square brackets)
    ("level_zero backend failed with error: 39 [UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY]",
     "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "39"),
    # code index file id 57045582463 (an sglang XPU run's notes, quoting the failure)
    ("RuntimeError: Native API failed. Native API returns: 39 (UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)",
     "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", "39"),
    # code index file id 67556814940 (HeCBench SYCL runs' notes, adv-sycl)
    ('- **Result**: FAIL - Runtime error: "Native API failed. Native API returns: 29 (UR_RESULT_ERROR_INVALID_KERNEL_NAME)"',
     "UR_RESULT_ERROR_INVALID_KERNEL_NAME", "29"),
])
def test_a_pasted_sycl_error_is_read_as_its_ur_code(line, key, returned):
    got = _ur(line)
    assert [s["id"] for s in got] == [f"unified_runtime:{key}"], got
    assert got[0]["returned"] == returned
    assert got[0]["rules"] == []


def test_the_name_alone_is_read_where_no_sycl_wording_surrounds_it():
    # intel/compute-runtime#944, its title
    got = _ur("[GSD-13006] UR_RESULT_ERROR_DEVICE_LOST and OUT_OF_DEVICE_MEMORY on dual Intel Arc B70 Pro "
              "(Battlemage) with Level Zero 1.15.38308")
    assert [s["id"] for s in got] == ["unified_runtime:UR_RESULT_ERROR_DEVICE_LOST"]
    assert "returned" not in got[0]
    assert got[0]["cause"] == "hardware"


@pytest.mark.parametrize("line", [
    # intel/compute-runtime#984, its title: Level Zero's own code, level_zero.toml's
    "[GSD-13338] Arc Pro B65 Battlemage: zeMemAllocDevice returns ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY "
    "for 20 GiB allocation despite 31 GiB free VRAM; same model works with Vulkan",
    # vladmandic/sdnext#1526: the same SYCL wording before UR, with a PI code
    "23:58:13-803766 ERROR    Exception: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5",
])
def test_a_line_naming_no_ur_code_is_not_read_as_unified_runtime(line):
    assert _ur(line) == []


def test_the_level_zero_line_stays_level_zeros():
    # intel/compute-runtime#984, its title
    line = ("[GSD-13338] Arc Pro B65 Battlemage: zeMemAllocDevice returns ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY "
            "for 20 GiB allocation despite 31 GiB free VRAM; same model works with Vulkan")
    assert [s["id"] for s in find_messages(line) if s["family"] in ("level_zero", "unified_runtime")] == [
        "level_zero:ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"]


def test_a_name_the_header_no_longer_has_is_quoted_as_unlisted():
    # renamed FUNCTION_ADDRESS_NOT_AVAILABLE in 2023 (oneapi-src/unified-runtime a43376601)
    got = _ur("Native API failed. Native API returns: 59 (UR_RESULT_ERROR_INVALID_FUNCTION_NAME)")
    assert [s["id"] for s in got] == ["unified_runtime:unlisted"]


def test_every_code_is_unique_and_every_key_is_its_message():
    with open(CATALOGUE, "rb") as fh:
        entries = tomllib.load(fh)["entry"]
    codes = [e["code"] for e in entries]
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)
    assert all(e["key"].startswith("UR_RESULT_") and e["message"] == e["key"] for e in entries)
    assert all(e["rules"] == [] for e in entries)


def test_the_header_values_are_the_ones_sycl_prints():
    fam = messages.families(("unified_runtime",))[0]
    # the numbers after "Native API returns:" in the pastes above, and the header's table ends
    assert fam.by_code[20].key == "UR_RESULT_ERROR_DEVICE_LOST"
    assert fam.by_code[39].key == "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"
    assert fam.by_code[40].key == "UR_RESULT_ERROR_OUT_OF_RESOURCES"
    assert fam.by_code[29].key == "UR_RESULT_ERROR_INVALID_KERNEL_NAME"
    assert fam.by_code[0x1000].key == "UR_RESULT_ERROR_INVALID_COMMAND_BUFFER_EXP"
    assert fam.by_code[0x7FFFFFFE].key == "UR_RESULT_ERROR_UNKNOWN"
    assert len(fam.entries) == 83
