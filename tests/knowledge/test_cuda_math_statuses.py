"""cuSOLVER's, cuSPARSE's and cuRAND's status codes (knowledge/messages/cusolver.toml, cusparse.toml,
curand.toml) as public tickets print them: each line read as its own entry, through torch's, CuPy's,
CUDA.jl's, JAX's, hypre's, PETSc's and Caffe's wordings; every value of each enum an entry; and a CUDA
runtime error, or another library's status, never read as one of these families."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages
from rulekit import message_ids

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FAMILIES = ("cusolver", "cusparse", "curand")


def _ours(text: str) -> set:
    return {i for i in message_ids(text) if i.split(":")[0] in FAMILIES}


# (line verbatim from a public thread, the status it names); the thread is in the comment
PASTES = [
    # nerdyrodent/VQGAN-CLIP#143 (torch >= 1.10: the name)
    ("RuntimeError: cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnCreate(handle)`",
     "cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"),
    # jzhangbs/Vis-MVSNet#38 (older torch: the number)
    ("RuntimeError: cusolver error: 7, when calling `cusolverDnCreate(handle)`", "cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"),
    # patientx/ComfyUI-Zluda#280 (torch's message quoted in backticks, with its backend suggestion)
    ("`cusolver error: CUSOLVER_STATUS_INTERNAL_ERROR, when calling `cusolverDnSgesvdj(handle, jobz, econ, m, n, A, "
     "lda, S, U, ldu, V, ldv, work, lwork, info, params)`. If you keep seeing this error, you may use "
     "`torch.backends.cuda.preferred_linalg_library()` to try linear algebra operators with other supported backends.",
     "cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"),
    # cupy/cupy#1365
    ("cupy.cuda.cusolver.CUSOLVERError: CUSOLVER_STATUS_EXECUTION_FAILED", "cusolver:CUSOLVER_STATUS_EXECUTION_FAILED"),
    # JuliaGPU/CUDA.jl#1924
    ("    nested task error: CUSOLVERError: an internal operation failed (code 7, CUSOLVER_STATUS_INTERNAL_ERROR)",
     "cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"),
    # google-deepmind/alphafold#306 (jaxlib's own words, no name)
    ("I1213 13:02:06.025453 140646328219456 run_docker.py:222] RuntimeError: jaxlib/cusolver_kernels.cc:44: operation "
     "cusolverDnCreate(&handle) failed: cuSolver internal error", "cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"),
    # deepmodeling/abacus-develop#6751 (a code's own check)
    ("ERROR: CUSOLVER_STATUS_INTERNAL_ERROR /opt/apps/abacus/abacus-develop-LTSv3.10.1/source/module_hsolver/kernels/"
     "cuda/diag_cusolvermp.cu 207", "cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"),
    # pytorch/pytorch#104108 (torch.sparse: cusparseGetErrorString's text, no name)
    ("RuntimeError: CUDA error: insufficient resources when calling `cusparseSpGEMM_workEstimation( handle, opA, opB, "
     "&alpha, matA, matB, &beta, matC, computeType, CUSPARSE_SPGEMM_DEFAULT, spgemmDesc, &bufferSize1, dBuffer1)`",
     "cusparse:CUSPARSE_STATUS_INSUFFICIENT_RESOURCES"),
    # DongqiFu/SDG#1 (the same wording, the call wrapped over three lines by the reporter's terminal)
    ("**RuntimeError: CUDA error: kernel launch failure when calling `cusparse\nXcoo2csr(handle, coorowind, i_nnz, i_m, "
     "csrrowptr, CUSPARSE_INDEX_B\nASE_ZERO)`**", "cusparse:CUSPARSE_STATUS_EXECUTION_FAILED"),
    # NVIDIA-Genomics-Research/rapids-single-cell-examples#11 (CuPy)
    ("CuSparseError: CUSPARSE_STATUS_ALLOC_FAILED", "cusparse:CUSPARSE_STATUS_ALLOC_FAILED"),
    # JuliaGPU/CUDA.jl#2555
    ("ERROR: LoadError: CUSPARSEError: internal error (code 7, CUSPARSE_STATUS_INTERNAL_ERROR)",
     "cusparse:CUSPARSE_STATUS_INTERNAL_ERROR"),
    # SuperScientificSoftwareLaboratory/TileSpGEMM#3 (NVIDIA's samples' CHECK_CUSPARSE)
    ("CUSPARSE API failed at line 162 with error: initialization error (1)", "cusparse:CUSPARSE_STATUS_NOT_INITIALIZED"),
    # AlibabaResearch/flash-llm#11 (the same check around a cuSPARSELt call)
    ("CUSPARSE API failed at line 130 with error: internal error (7)", "cusparse:CUSPARSE_STATUS_INTERNAL_ERROR"),
    # hypre-space/hypre#589
    ("CUSPARSE ERROR (code = 7, internal error) at csr_spgemm_device_cusparse.c:115", "cusparse:CUSPARSE_STATUS_INTERNAL_ERROR"),
    # rbgirshick/fast-rcnn#163 (Caffe's CURAND_CHECK through glog)
    ("F0809 20:24:03.616431 11559 math_functions.cu:401] Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0)  "
     "CURAND_STATUS_LAUNCH_FAILURE", "curand:CURAND_STATUS_LAUNCH_FAILURE"),
    # JuliaGPU/CUDA.jl#255
    ("ERROR: CURANDError: initialization of CUDA failed (code 203, CURAND_STATUS_INITIALIZATION_FAILED)",
     "curand:CURAND_STATUS_INITIALIZATION_FAILED"),
]


@pytest.mark.parametrize("line, status", PASTES, ids=[p[1].split(":")[1] + f"-{i}" for i, p in enumerate(PASTES)])
def test_public_pastes_read_their_status_and_no_other(line, status):
    assert _ours(line) == {status}


def test_a_glog_check_cut_before_the_name_is_read_by_its_number():
    # the Caffe check's number alone: 201 is CURAND_STATUS_LAUNCH_FAILURE
    line = "F0809 20:24:03.616431 11559 math_functions.cu:401] Check failed: status == CURAND_STATUS_SUCCESS (201 vs. 0)"
    assert _ours(line) == {"curand:CURAND_STATUS_LAUNCH_FAILURE"}


def test_the_fast_rcnn_paste_is_curands_not_an_unlisted_glog_line():
    found = find_messages((FIXTURES / "pastes" / "fast-rcnn-163-glog-check-failed.txt").read_text())
    line1 = [s["id"] for s in found if s["line"] == 1]
    assert line1 == ["curand:CURAND_STATUS_LAUNCH_FAILURE"]


def test_success_on_the_right_of_a_check_is_never_read_as_the_status():
    # merzlab/QUICK#98: the code printed every status, then asserted
    text = ("CUSOLVER_STATUS_SUCCESS \nCUSOLVER_STATUS_SUCCESS \nCUSOLVER_STATUS_INTERNAL_ERROR \n"
            "quick.cuda: /server-home1/madu/Work/Qk/bugfix98/intel/src/cuda/cusolver/quick_cusolver.c:192: cuda_diag_: "
            "Assertion `CUSOLVER_STATUS_SUCCESS == cusolver_status' failed.\n")
    assert _ours(text) == {"cusolver:CUSOLVER_STATUS_INTERNAL_ERROR"}


def test_a_torch_text_the_library_never_returned_is_unlisted_not_a_neighbour():
    # torch built for CUDA < 10.1 printed its own texts ("an internal operation failed"), not cuSPARSE's
    line = "RuntimeError: CUDA error: an internal operation failed when calling `cusparseXcoo2csr(handle)`"
    assert _ours(line) == {"cusparse:unlisted"}


@pytest.mark.parametrize("line, reader", [
    ("RuntimeError: CUDA error: an illegal memory access was encountered", "cuda:"),
    ("RuntimeError: CUDA error: out of memory", "cuda:"),   # a cuSPARSE text too, but not after `cusparse...`
    ("RuntimeError: CUDA error: invalid argument", "cuda:"),
    ("RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasCreate(handle)`", "cublas:"),
    ("RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "cufft:"),
    ("Check failed: error == cudaSuccess (3 vs. 0) initialization error", "cuda:"),
    # hypre's CUDA check (mfem/mfem#2350), beside its CUSPARSE/CURAND ones: no family of these three
    ("CUDA ERROR (code = 1, invalid argument) at memory.c:557", None),
])
def test_other_cuda_errors_are_not_read_as_these_families(line, reader):
    assert _ours(line) == set()
    if reader:
        assert any(i.startswith(reader) for i in message_ids(line)), message_ids(line)


def _codes(fid):
    (fam,) = messages.families((fid,))
    return {e.key: e.get("code") for e in fam.entries}


def test_every_value_of_each_enum_is_an_entry():
    # cusolver_common.h (nvidia-cusolver-cu12 11.7.5.82; the CUDA 13 header has the same values)
    assert _codes("cusolver") == {
        "CUSOLVER_STATUS_SUCCESS": 0, "CUSOLVER_STATUS_NOT_INITIALIZED": 1, "CUSOLVER_STATUS_ALLOC_FAILED": 2,
        "CUSOLVER_STATUS_INVALID_VALUE": 3, "CUSOLVER_STATUS_ARCH_MISMATCH": 4, "CUSOLVER_STATUS_MAPPING_ERROR": 5,
        "CUSOLVER_STATUS_EXECUTION_FAILED": 6, "CUSOLVER_STATUS_INTERNAL_ERROR": 7,
        "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED": 8, "CUSOLVER_STATUS_NOT_SUPPORTED": 9,
        "CUSOLVER_STATUS_ZERO_PIVOT": 10, "CUSOLVER_STATUS_INVALID_LICENSE": 11,
        "CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED": 12, "CUSOLVER_STATUS_IRS_PARAMS_INVALID": 13,
        "CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC": 14, "CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE": 15,
        "CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER": 16, "CUSOLVER_STATUS_IRS_INTERNAL_ERROR": 20,
        "CUSOLVER_STATUS_IRS_NOT_SUPPORTED": 21, "CUSOLVER_STATUS_IRS_OUT_OF_RANGE": 22,
        "CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES": 23, "CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED": 25,
        "CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED": 26, "CUSOLVER_STATUS_IRS_MATRIX_SINGULAR": 30,
        "CUSOLVER_STATUS_INVALID_WORKSPACE": 31}
    # cusparse.h (nvidia-cusparse-cu12 12.5.10.65)
    assert _codes("cusparse") == {
        "CUSPARSE_STATUS_SUCCESS": 0, "CUSPARSE_STATUS_NOT_INITIALIZED": 1, "CUSPARSE_STATUS_ALLOC_FAILED": 2,
        "CUSPARSE_STATUS_INVALID_VALUE": 3, "CUSPARSE_STATUS_ARCH_MISMATCH": 4, "CUSPARSE_STATUS_MAPPING_ERROR": 5,
        "CUSPARSE_STATUS_EXECUTION_FAILED": 6, "CUSPARSE_STATUS_INTERNAL_ERROR": 7,
        "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED": 8, "CUSPARSE_STATUS_ZERO_PIVOT": 9,
        "CUSPARSE_STATUS_NOT_SUPPORTED": 10, "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES": 11}
    # curand.h (nvidia-curand-cu12 10.3.10.19)
    assert _codes("curand") == {
        "CURAND_STATUS_SUCCESS": 0, "CURAND_STATUS_VERSION_MISMATCH": 100, "CURAND_STATUS_NOT_INITIALIZED": 101,
        "CURAND_STATUS_ALLOCATION_FAILED": 102, "CURAND_STATUS_TYPE_ERROR": 103, "CURAND_STATUS_OUT_OF_RANGE": 104,
        "CURAND_STATUS_LENGTH_NOT_MULTIPLE": 105, "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED": 106,
        "CURAND_STATUS_LAUNCH_FAILURE": 201, "CURAND_STATUS_PREEXISTING_FAILURE": 202,
        "CURAND_STATUS_INITIALIZATION_FAILED": 203, "CURAND_STATUS_ARCH_MISMATCH": 204,
        "CURAND_STATUS_INTERNAL_ERROR": 999}


def test_cusparse_messages_are_the_librarys_own_texts():
    # cusparseGetErrorString of libcusparse.so.12 (nvidia-cusparse-cu12 12.5.10.65), value by value
    (fam,) = messages.families(("cusparse",))
    assert [e.get("message") for e in sorted(fam.entries, key=lambda e: e.get("code"))] == [
        "success", "initialization error", "out of memory", "invalid value", "architecture mismatch",
        "texture memory mapping error", "kernel launch failure", "internal error", "matrix type not supported",
        "zero pivot", "operation not supported", "insufficient resources"]


def test_torchs_cusparse_line_is_not_also_read_as_a_cuda_runtime_error():
    # pytorch/pytorch#104108: "initialization error" and "insufficient resources" are cuSPARSE's texts
    # after torch's "CUDA error: " (TORCH_CUDASPARSE_CHECK), not cudaGetErrorString's
    line = PASTES[[p[1] for p in PASTES].index("cusparse:CUSPARSE_STATUS_INSUFFICIENT_RESOURCES")][0]
    assert not [i for i in message_ids(line) if i.startswith("cuda:")], message_ids(line)
    init = "RuntimeError: CUDA error: initialization error when calling `cusparseCreate(handle)`"
    assert message_ids(init) & {"cusparse:CUSPARSE_STATUS_NOT_INITIALIZED"} and not [i for i in message_ids(init) if i.startswith("cuda:")]
