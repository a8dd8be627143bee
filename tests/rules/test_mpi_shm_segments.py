"""stale-shm-segments (rules/shm_segments.py) on the MPI transports' own words: PSM2's fault
handler and ls -l /dev/shm rows of Open MPI's vader segments (set T; tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts

T = "../tickets_blind_t/"


@pytest.mark.parametrize("paste", [T + "rcps-buildscripts-337-stale-vader-segments-dev-shm.txt",
                                   "intel-caffe-224-psm2-intra-node-shm.txt"])
def test_psm2s_own_advice_to_delete_stale_segments(paste):
    (f,) = fired("stale-shm-segments", recorded_paste_facts(paste))
    assert f.severity == "warning" and "PSM2" in f.message and "Unable to allocate shared memory" in f.message
    assert "-name 'vader_segment.*' -o -name 'psm2_shm.*'" in f.fix and "! -exec fuser -s {}" in f.fix


def test_vader_segments_listed_in_dev_shm_are_counted_with_their_owner():
    (f,) = fired("stale-shm-segments", recorded_paste_facts(T + "ompi-6322-vader-segments-left-after-abort.txt"))
    assert "2 MPI segment(s) of Open MPI's vader BTL" in f.message and "owner leofang" in f.message


def test_silent_on_other_words_about_shared_memory():
    # nccl's /dev/shm too small (tests/fixtures/tickets): shm-too-small's, no segment left by a run
    from rulekit import run_rule, told_facts
    gathered = told_facts("NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No space "
                          "left on device (28)\n")
    findings, _skipped = run_rule("stale-shm-segments", gathered)
    assert findings == []
