"""onednn.toml (oneDNN's own messages: dnnl_status_t, dnnl::error's texts, ONEDNN_VERBOSE's header)
read on lines users pasted in public threads, each quoted verbatim with where it came from."""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:   # Python 3.9 and 3.10: the tomli backport the package depends on
    import tomli as tomllib
from pathlib import Path

import pytest

from hpcdoctor.triage.messages import find_messages

CATALOGUE = Path(__file__).resolve().parents[2] / "hpcdoctor" / "knowledge" / "messages" / "onednn.toml"


def _onednn(text: str):
    return [s for s in find_messages(text) if s["family"] == "onednn"]


def _ids(text: str):
    return [s["id"] for s in _onednn(text)]


# (paste, the entry it is read as, the named groups it must capture)
PASTES = [
    # intel/torch-xpu-ops#1898: oneDNN v3.7+'s wording, "for the <kind> primitive" with the verbose hint
    ("RuntimeError: could not create a primitive descriptor for the deconvolution forward propagation primitive. "
     "Run workload with environment variable ONEDNN_VERBOSE=all to get additional diagnostic information.",
     "onednn:primitive-descriptor-not-created", {"primitive": "deconvolution forward propagation"}),
    # netease-youdao/EmotiVoice#58 (title): v3.0-v3.6's "for a <kind> primitive"
    ("RuntimeError: could not create a primitive descriptor for a matmul primitive",
     "onednn:primitive-descriptor-not-created", {"primitive": "matmul"}),
    # intel/intel-extension-for-pytorch#375 (title): v2.7's bare wording, in the user's quotes
    ('mkl_sgemm_prepack throws an "RuntimeError: could not create a primitive descriptor" error',
     "onednn:primitive-descriptor-not-created", {}),
    # pytorch/pytorch#60075: the primitive's own creation failed (Markdown's closing backtick kept)
    ("RuntimeError: could not create a primitive`", "onednn:primitive-not-created", {}),
    # PaddlePaddle/PaddleOCR#14103 (title)
    ("RuntimeError: could not execute a primitive", "onednn:primitive-not-executed", {}),
    # code index file id 33935775758: oneDNN v1.x-v2.x's op descriptor, under torch.compile
    ("# RuntimeError: could not create a descriptor for a dilated convolution forward propagation primitive",
     "onednn:op-descriptor-not-created", {"primitive": "dilated convolution forward propagation"}),
    # uxlfoundation/oneDNN#1500: ONEDNN_VERBOSE's header, and benchdnn's failed call by status name
    ("onednn_verbose,info,cpu,isa:Intel AVX2", "onednn:verbose-cpu-isa", {"isa": "Intel AVX2"}),
    ("onednn_verbose,info,cpu,runtime:OpenMP,nthr:44", "onednn:verbose-cpu-runtime", {"runtime": "OpenMP", "nthr": "44"}),
    ("onednn_verbose,info,gpu,runtime:none", "onednn:verbose-gpu-runtime", {"runtime": "none"}),
    ("onednn_verbose,info,oneDNN v2.7.1 (commit 9e9b859fddc6f813f9b9cac093d7d131c84054ab)",
     "onednn:verbose-version", {"version": "2.7.1", "commit": "9e9b859fddc6f813f9b9cac093d7d131c84054ab"}),
    ("error [int create_primitive(benchdnn_dnnl_wrapper_t<dnnl_primitive*>&, dnnl_engine_t, const func_t&, const prb_t*, "
     "res_t*, dir_t, const_dnnl_primitive_desc_t, bool) [with func_t = dnnl_status_t(init_pd_args_t<conv::prb_t>&); "
     "prb_t = conv::prb_t; dnnl_engine_t = dnnl_engine*; const_dnnl_primitive_desc_t = const dnnl_primitive_desc*]:540]: "
     "'dnnl_primitive_create(&prim, pdw)' -> runtime_error(5)",
     "onednn:dnnl_runtime_error", {"code": "5"}),
    # uxlfoundation/oneDNN#832: DNNL v1.6's prefix; the ISA name holds commas
    ("dnnl_verbose,info,cpu,isa:Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions",
     "onednn:verbose-cpu-isa", {"prefix": "dnnl", "isa": "Intel AVX-512 with AVX512BW, AVX512VL, and AVX512DQ extensions"}),
    # code index file id 19815737639: a Sapphire Rapids header (TensorFlow's oneDNN v2.6)
    ("onednn_verbose,info,cpu,isa:Intel AVX-512 with Intel DL Boost and bfloat16 support and Intel AMX with bfloat16 "
     "and 8-bit integer support", "onednn:verbose-cpu-isa",
     {"isa": "Intel AVX-512 with Intel DL Boost and bfloat16 support and Intel AMX with bfloat16 and 8-bit integer support"}),
    # code index file id 71287989193: oneDNN v3.13's "v1," marker (OpenVINO's CPU plugin)
    ("onednn_verbose,v1,info,cpu,isa:Intel AVX-512 with Intel DL Boost and bfloat16 support",
     "onednn:verbose-cpu-isa", {"isa": "Intel AVX-512 with Intel DL Boost and bfloat16 support"}),
    # code index file id 49473115093: an Arm (Graviton) build
    ("onednn_verbose,info,cpu,isa:AArch64 SVE (256 bits)", "onednn:verbose-cpu-isa", {"isa": "AArch64 SVE (256 bits)"}),
    # intel/ipex-llm#11305: the GPU runtime and a Level Zero device
    ("onednn_verbose,info,gpu,runtime:DPC++", "onednn:verbose-gpu-runtime", {"runtime": "DPC++"}),
    ("onednn_verbose,info,gpu,engine,1,backend:Level Zero,name:Intel(R) Arc(TM) A770 Graphics,driver_version:1.3.29283,"
     "binary_kernels:enabled", "onednn:verbose-engine",
     {"index": "1", "backend": "Level Zero", "name": "Intel(R) Arc(TM) A770 Graphics", "driver_version": "1.3.29283"}),
]


@pytest.mark.parametrize("paste, sid, groups", PASTES, ids=[p[1] + "-" + str(i) for i, p in enumerate(PASTES)])
def test_a_real_paste_is_read_as_its_entry(paste, sid, groups):
    got = _onednn(paste + "\n")
    assert [s["id"] for s in got] == [sid], got
    for name, value in groups.items():
        assert str(got[0].get(name)) == value, (name, got[0])


def test_the_examples_error_handler_gives_the_status_and_the_text():
    # uxlfoundation/oneDNN#1927: oneDNN v2.5's example, its handle_example_errors output
    paste = ("oneDNN error caught: \n"
             "        Status: unimplemented\n"
             "        Message: could not create a primitive descriptor iterator\n"
             "Example failed on GPU.\n")
    got = {s["id"]: s for s in _onednn(paste)}
    assert set(got) == {"onednn:dnnl_unimplemented", "onednn:primitive-descriptor-not-created"}
    assert got["onednn:dnnl_unimplemented"]["code"] == 3
    assert got["onednn:primitive-descriptor-not-created"].get("iterator") == "iterator"


def test_a_header_of_several_lines_is_read_line_by_line():
    # intel/ipex-llm#11305: the verbose header before a GPU failure, two Level Zero devices
    paste = """onednn_verbose,info,oneDNN v3.3.0 (commit 887fb044ccd6308ed1780a3863c2c6f5772c94b3)
onednn_verbose,info,cpu,runtime:threadpool,nthr:12
onednn_verbose,info,cpu,isa:Intel AVX2 with Intel DL Boost
onednn_verbose,info,gpu,runtime:DPC++
onednn_verbose,info,gpu,engine,0,backend:Level Zero,name:Intel(R) UHD Graphics 770,driver_version:1.3.29283,binary_kernels:enabled
onednn_verbose,info,gpu,engine,1,backend:Level Zero,name:Intel(R) Arc(TM) A770 Graphics,driver_version:1.3.29283,binary_kernels:enabled
onednn_verbose,info,graph,backend,0:dnnl_backend
onednn_verbose,info,experimental features are enabled
"""
    got = _onednn(paste)
    assert [s["id"] for s in got] == ["onednn:verbose-version", "onednn:verbose-cpu-runtime", "onednn:verbose-cpu-isa",
                                      "onednn:verbose-gpu-runtime", "onednn:verbose-engine", "onednn:verbose-engine"]
    assert [s.get("name") for s in got if s["id"] == "onednn:verbose-engine"] == [
        "Intel(R) UHD Graphics 770", "Intel(R) Arc(TM) A770 Graphics"]
    assert got[2]["isa"] == "Intel AVX2 with Intel DL Boost"
    assert got[1]["runtime"] == "threadpool" and got[1]["nthr"] == "12"


def test_a_wrapped_table_cell_is_read_with_its_primitive():
    # intel/torch-xpu-ops#2297: the message in a table cell whose wrapping left runs of spaces
    paste = ("test_schema_correctness_nn_functional_conv_transpose2d_xpu_bfloat16 | failed | RuntimeError:   could not "
             "create a primitive descriptor for the deconvolution forward   propagation primitive. Run workload with "
             "environment variable   ONEDNN_VERBOSE=all to get additional diagnostic information.\n")
    got = _onednn(paste)
    assert [s["id"] for s in got] == ["onednn:primitive-descriptor-not-created"]
    assert " ".join(got[0]["primitive"].split()) == "deconvolution forward propagation"


@pytest.mark.parametrize("line", [
    # code index file id 59317224364: another program's own "could not create an engine"
    "stream_verify: could not create an engine",
    # code index file id 55090861602: torch.__config__.show() names oneDNN, it is not the verbose header
    "  - Intel(R) MKL-DNN v3.1.1 (Git Hash 64f6bcbcbab628e96f33a62c3e975f8535a7bde4)",
    # tensorflow/tensorflow#110956: TensorFlow's notice about oneDNN is TensorFlow's line
    "2026-02-24 16:46:52.066807: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on. You may see "
    "slightly different numerical results due to floating-point round-off errors from different computation orders. "
    "To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.",
    # uxlfoundation/oneDNN#1500: a primitive-creation verbose line and the API's identifiers are no status
    "onednn_verbose,info,prim_template:operation,engine,primitive,implementation,prop_kind,memory_descriptors,"
    "attributes,auxiliary,problem_desc,exec_time",
])
def test_a_line_that_is_not_onednns_message_is_not_read_as_onednn(line):
    assert _ids(line + "\n") == []


def test_the_tensorflow_notice_stays_tensorflows():
    line = ("2026-02-24 16:46:52.066807: I tensorflow/core/util/port.cc:153] oneDNN custom operations are on. You may "
            "see slightly different numerical results due to floating-point round-off errors from different computation "
            "orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`.\n")
    assert "tensorflow:onednn-custom-operations-on" in {s["id"] for s in find_messages(line)}


def test_every_status_code_is_unique_and_matches_the_header():
    data = tomllib.loads(CATALOGUE.read_text(encoding="utf-8"))
    codes = {e["key"]: e["code"] for e in data["entry"] if "code" in e}
    assert len(set(codes.values())) == len(codes), codes
    # dnnl_status_t as include/oneapi/dnnl/dnnl_common_types.h @ 3f27bec2 defines it
    assert codes == {"dnnl_success": 0, "dnnl_out_of_memory": 1, "dnnl_invalid_arguments": 2, "dnnl_unimplemented": 3,
                     "dnnl_last_impl_reached": 4, "dnnl_runtime_error": 5, "dnnl_not_required": 6,
                     "dnnl_invalid_graph": 7, "dnnl_invalid_graph_op": 8, "dnnl_invalid_shape": 9,
                     "dnnl_invalid_data_type": 10}
    assert all(e.get("rules") == [] for e in data["entry"])
