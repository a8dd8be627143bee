"""Healthy controls of sets AH and AI that were refused as unreadable (exit 2) though they hold an
emitter's own words: TensorFlow's "Loaded cuDNN version 8100" (pix2seq#9) and Megatron-LM's checkpoint
converter's "Unable to import Megatron ..." (Megatron-LLaMA#51). Each is now read, and nothing of
severity warning or error is said of these healthy tickets."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from


@pytest.mark.parametrize("rel, entry", [
    ("tickets_blind_ai/pix2seq-9-hang-loading-checkpoint-from-cloud-healthy.txt", "tensorflow:loaded-cudnn-version"),
    ("tickets_blind_ah/megatron-llama-51-megatron-path-misspelled-healthy.txt", "megatron:converter-cannot-import-megatron"),
])
def test_the_emitters_line_is_read_and_nothing_is_alarmed(rel, entry):
    got = check_from(FIXTURES / rel)
    assert got["rc"] == 0, got["stderr"]
    read = {s.get("id") for s in got["doc"]["facts"].get("ticket", {}).get("symptoms", [])}
    assert entry in read
    assert not [f for f in got["doc"]["findings"] if f["severity"] in ("error", "warning")]
