"""framework-missing-arch's reading of each library's own refusal of the GPU's generation
(rules/_arch_refusals.py, knowledge/messages/frameworks.toml): flash-attn's bare checks, vLLM's
FlashAttention-2 fallback with LMCache's assertion; set U's pastes and public threads
(tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts

U = "../tickets_blind_u/"
SYM = "framework-missing-arch"


def test_flash_attn_1s_bare_check_names_the_generations_it_admits():
    (f,) = fired(SYM, recorded_paste_facts(U + "cmt-9-flash-attention-unsupported-on-v100.txt"))
    assert f.severity == "error" and "Turing (7.5)" in f.message and "Ampere/Ada (8.x)" in f.message
    assert "Volta (7.0)" in f.message and 'attn_implementation="sdpa"' in f.fix


def test_the_1_0_check_with_hopper_on_a_v100():
    # QwenLM/Qwen#103: "Expected is_sm90 || is_sm8x || is_sm75" on a V100
    (f,) = fired(SYM, recorded_paste_facts("qwen-103-flash-attn-sm90-sm8x-sm75-v100.txt"))
    assert f.severity == "error" and "Hopper (9.0)" in f.message and "7.5 at the lowest" in f.message


def test_lmcache_needing_the_backend_vllm_fell_back_from_is_an_error():
    (f,) = fired(SYM, recorded_paste_facts(U + "lmcache-412-flashattention-unsupported-on-t4.txt"))
    assert f.severity == "error" and "LMCache needs vLLM's FlashAttention backend" in f.message
    assert "Volta or Turing" in f.message and "8.0" in f.message and "compute_cap" in f.fix


def test_an_a100_only_check_that_torchs_own_sdpa_also_tripped_is_only_a_warning():
    # pytorch/pytorch#98140: torch 2.1.dev's SDPA on an RTX 3090, a dispatch bug, not an old GPU
    (f,) = fired(SYM, recorded_paste_facts("pytorch-98140-is-sm80-sm90-on-rtx-3090-4090.txt"))
    assert f.severity == "warning" and "pytorch/pytorch#94883" in f.message
    assert "enable_flash_sdp(False)" in f.fix


# Programs' own refusals of the GPU by its capability (knowledge/messages/tgi.toml, pgstrom.toml) and
# glog's CHECK_EQ(error, cudaSuccess) from Caffe's CUDA_CHECK (cuda.toml, glog-check-cudasuccess).

def test_tgis_refusal_beside_an_nvidia_smi_table_is_the_frameworks_not_torchs():
    # bigcode-project/starcoder#79 (set AE): the refusal in the title, V100s in the table; no failure shown
    (f,) = fired("framework-missing-arch", recorded_paste_facts("starcoder-79-v100-capability-70-not-supported.txt"))
    assert f.severity == "warning" and "text-generation-inference (TGI)" in f.message
    assert "compute capability 7.0" in f.message and "7.5 or newer" in f.message and "compute_cap" in f.fix


def test_tgis_refusal_then_the_model_failing_to_load_is_an_error():
    # huggingface/text-generation-inference#686: the refusal, then "Error when initializing model"
    (f,) = fired("framework-missing-arch", recorded_paste_facts("tgi-686-v100-capability-70-not-supported.txt"))
    assert f.severity == "error" and f.evidence["framework.min_cc"] == "7.5"


def test_tgis_flash_attention_v2_fallback_alone_is_no_refusal(tmp_path):
    # TGI#1161's title (a T4): flash-attn 2 refused, TGI falls back to flash-attn 1 and runs
    paste = tmp_path / "tgi-1161.txt"
    paste.write_text("2023-10-17T07:47:06.229031Z WARN text_generation_launcher: Unable to use Flash Attention V2: "
                     "GPU with CUDA capability 7 5 is not supported for Flash Attention V2\n")
    assert not fired("framework-missing-arch", recorded_paste_facts(str(paste)))


def test_pg_stroms_not_supported_device_names_its_minimum():
    # heterodb/pg-strom#262 (set AE): a Quadro K600 (3.0) under PG-Strom 1.x, which needs 3.5
    (f,) = fired("framework-missing-arch", recorded_paste_facts("pg-strom-262-quadro-k600-not-supported.txt"))
    assert f.severity == "error" and "PG-Strom 1.x refused Quadro K600 (compute capability 3.0)" in f.message
    assert f.evidence["framework.min_cc"] == "3.5"


def test_caffes_glog_check_with_the_pre_10_1_number_is_read_by_its_message():
    # CMU-Perceptual-Computing-Lab/openpose#1708 (set AE): "(48 vs. 0)" on an RTX 3090
    (f,) = fired("framework-missing-arch", recorded_paste_facts("openpose-1708-rtx3090-no-kernel-image.txt"))
    assert f.severity == "error" and "48, is that error's number before CUDA 10.1" in f.message
    assert "CUDA 11.1 or newer" in f.message and "cuobjdump" in f.fix


def test_caffes_glog_check_on_a_gpu_cuda_10_builds_for_names_no_toolkit():
    # BVLC/caffe#6690: CUDA 10.0 on a GTX 1070 Ti (6.1): 10.0 builds sm_61, so no newer CUDA is named
    (f,) = fired("framework-missing-arch", recorded_paste_facts("caffe-6690-gtx1070ti-48-no-kernel-image.txt"))
    assert "CUDA 10.0 or older runtime" in f.message and "rebuild with CUDA" not in f.message


def test_the_glog_number_alone_is_read_as_the_current_numbering():
    from hpcdoctor.triage.messages import find_messages
    got = find_messages("F0101 00:00:00.000000  1000 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)",
                        families=["cuda"])
    assert [s["id"] for s in got] == ["cuda:cudaErrorMemoryAllocation"]
    got = find_messages("Check failed: error == cudaSuccess (48 vs. 0)  no kernel image is available for execution on the device",
                        families=["cuda"])
    assert [s["id"] for s in got] == ["cuda:cudaErrorNoKernelImageForDevice"]
