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
