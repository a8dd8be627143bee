"""torch-alloc-conf-invalid (rules/torch_allocator.py) on torch's own refusals: the H100 recording of torch
2.11 (fixtures/emitters_gpu), a Windows user's torch 2.0 traceback (pytorch#101158,
tests/fixtures/pastes/SOURCES.md), silence on an OOM whose advice names PYTORCH_CUDA_ALLOC_CONF, and
the live reading of the job's variable against the parser's keys."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, with_env
from rules.torch_allocator import config_keys, nearest_key



def test_misspelt_key_recorded_on_an_h100_names_the_key_torch_knows():
    (f,) = fired("torch-alloc-conf-invalid", recorded_paste_facts("../emitters_gpu/h100-torch-alloc-conf-bad.txt"))
    assert f.severity == "error" and "Unrecognized key 'expandable_segment'" in f.message
    assert "nearest key torch knows is 'expandable_segments'" in f.message
    assert 'export PYTORCH_CUDA_ALLOC_CONF="${PYTORCH_CUDA_ALLOC_CONF//expandable_segment/expandable_segments}"' in f.fix
    assert f.evidence["message"] == "torch_allocator:unrecognized-key"


def test_older_wording_from_a_public_ticket():
    (f,) = fired("torch-alloc-conf-invalid", recorded_paste_facts("pytorch-101158-unrecognized-cachingallocator-option.txt"))
    assert f.severity == "error" and "Unrecognized CachingAllocator option: C" in f.message
    assert "nearest key" not in f.message and "unset PYTORCH_ALLOC_CONF" in f.fix
    assert "${" not in f.fix  # no key to correct it to: no substitution offered


def test_silent_on_an_oom_whose_advice_names_the_variable():
    # torch's OOM text ends with "... PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True": advice, not a refusal
    findings, _ = run_rule("torch-alloc-conf-invalid", recorded_paste_facts("../emitters_gpu/h100-torch-oom.txt"))
    assert findings == []


def test_lexer_reads_keys_as_torch_does():
    assert config_keys("expandable_segments:True, roundup_power2_divisions:[256:1,512:2,>:4],max_split_size_mb:128") == [
        "expandable_segments", "roundup_power2_divisions", "max_split_size_mb"]
    assert config_keys("malloc_fraction=0.5") == ["malloc_fraction=0.5"]
    assert nearest_key("garbage_collect_threshold") == "garbage_collection_threshold"
    assert nearest_key("C") is None


def test_live_unknown_key_in_the_job_environment_is_an_error():
    (f,) = fired("torch-alloc-conf-invalid", with_env("h100-kvm-1gpu", {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segment:True"}))
    assert f.severity == "error" and "did you mean 'expandable_segments'" in f.message
    assert f.evidence["unknown_keys"] == ["expandable_segment"]


@pytest.mark.parametrize("value", ["expandable_segments:True", "backend:cudaMallocAsync",
                                   "max_split_size_mb:128,garbage_collection_threshold:0.6"])
def test_live_valid_settings_are_silent(value):
    assert not fired("torch-alloc-conf-invalid", with_env("h100-kvm-1gpu", {"PYTORCH_ALLOC_CONF": value}))


def test_live_without_an_environment_is_skipped_not_passed():
    findings, skipped = run_rule("torch-alloc-conf-invalid", recorded_paste_facts("../emitters_gpu/h100-torch-healthy.txt"))
    assert findings == [] and skipped and "env.vars" in skipped[0]["reason"]


def test_live_expandable_segments_on_a_torch_before_2_1_is_an_error():
    (f,) = fired("torch-alloc-conf-invalid", with_env("h100-kvm-1gpu", {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
                                  **{"torch.version": "2.0.1+cu118"}))
    assert f.severity == "error" and "from 2.1 on" in f.message and "2.0.1+cu118" in f.message
    findings, _ = run_rule("torch-alloc-conf-invalid", with_env("h100-kvm-1gpu", {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
                                             **{"torch.version": "2.1.0+cu121"}))
    assert findings == []


def test_live_key_an_older_parser_read_is_a_warning_not_an_error():
    # The settings a public script builds for torch 2.0 (max_split_size_mb, roundup_power2_divisions,
    # roundup_bypass_threshold_mb, garbage_collection_threshold): the third was read by the 2.0-era
    # parser and is unknown to today's, and the release that dropped it is not tabled.
    value = "max_split_size_mb:32,roundup_power2_divisions:4,roundup_bypass_threshold_mb:64,garbage_collection_threshold:0.8"
    (f,) = fired("torch-alloc-conf-invalid", with_env("h100-kvm-1gpu", {"PYTORCH_CUDA_ALLOC_CONF": value},
                                                      **{"torch.version": "2.0.1+cu118"}))
    assert f.severity == "warning" and f.evidence["retired_keys"] == ["roundup_bypass_threshold_mb"]
    assert "2.0.1+cu118" in f.message
    # A misspelling beside it is still the error it was.
    (g,) = fired("torch-alloc-conf-invalid", with_env("h100-kvm-1gpu", {"PYTORCH_CUDA_ALLOC_CONF": value + ",expandable_segment:True"}))
    assert g.severity == "error" and g.evidence["unknown_keys"] == ["expandable_segment"]
