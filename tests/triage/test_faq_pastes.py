"""Pastes that hold only a symptom in words (knowledge/messages/faq_*.toml) through the CLI: read
and answered, never refused, and never an error or a warning from the words alone."""

from __future__ import annotations

from conftest import NODES

PASTES = NODES.parent / "pastes"


def test_a_hang_told_in_words_is_read_not_refused(triage):
    run = triage(PASTES / "nccl-238-hang-socket-recv-nccl-242.txt")
    assert run["rc"] == 0, run["stderr"]
    read = run["doc"]["source"]["recognised"]
    assert any("faq_distributed distributed-hang" in line for line in read), read
    assert run["doc"]["findings"] == []


def test_low_gpu_util_in_words_is_answered_at_info_and_passes_fail_on_error(triage):
    run = triage(PASTES / "preview-5-low-fluctuating-gpu-util-data-loading.txt")
    assert run["rc"] == 0, run["stderr"]
    found = {f["symbol"]: f["severity"] for f in run["doc"]["findings"]}
    assert found == {"dataloader-workers": "info"}
    assert run["doc"]["summary"]["info"] == 1 and run["doc"]["summary"]["warning"] == 0


def test_info_findings_fail_only_a_run_that_asks_for_them(triage):
    run = triage(PASTES / "preview-5-low-fluctuating-gpu-util-data-loading.txt", "--fail-on", "info")
    assert run["rc"] == 1, run["stderr"]
    run = triage(PASTES / "preview-5-low-fluctuating-gpu-util-data-loading.txt", "--fail-on", "advice")
    assert run["rc"] == 0, run["stderr"]
