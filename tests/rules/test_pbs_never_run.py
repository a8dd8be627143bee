"""slurm-request-exceeds-node and slurm-gpu-request-rejected read through the OpenPBS / PBS Pro
scheduler's job comment (knowledge/messages/pbs_sched_comment.toml): "Can Never Run: ..." is a
request nothing in the complex can hold; the same reason after "Not Running:" is a busy cluster."""

from __future__ import annotations

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, told_facts, told_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_a_real_can_never_run_comment_fires_with_pbss_fix():
    (f,) = fired("slurm-request-exceeds-node", recorded_paste_facts("az-hop-133-pbs-can-never-run-slot-type.txt"))
    assert f.message.startswith("PBS will never run the job") and "slot_type (hb120rs_v2 != hc44rs)" in f.message
    assert "pbsnodes -av" in f.fix and "sinfo" not in f.fix


def test_a_never_run_comment_qstat_folded_onto_two_lines_still_fires():
    # az-hop#201: qstat -fx folds the long value, "(R: 88 A: 5" / "        0 T: 50)"; the reason
    # (ncpus) is on the first line, so the fold does not hide it
    (f,) = fired("slurm-request-exceeds-node", recorded_paste_facts("az-hop-201-pbs-can-never-run-ncpus-folded.txt"))
    assert f.message.startswith("PBS will never run the job") and "Insufficient amount of resource: ncpus" in f.message
    # quoted unfolded: qstat's prt_attr broke "A: 50" inside the number, with a tab and nothing else
    assert "ncpus (R: 88 A: 50 T: 50)" in f.message, f.message
    assert "pbsnodes -av" in f.fix
    assert not fired("slurm-gpu-request-rejected", recorded_paste_facts("az-hop-201-pbs-can-never-run-ncpus-folded.txt"))


def test_not_running_comments_of_a_busy_cluster_stay_silent():
    name = "argonne-user-guides-340-pbs-not-running-comments.txt"
    text = (PASTES / name).read_text(encoding="utf-8")
    assert not any(s["id"].startswith("pbs_sched_comment:") for s in find_messages(text))
    for symbol in ("slurm-request-exceeds-node", "slurm-gpu-request-rejected"):
        assert not fired(symbol, told_paste_facts(name))


@pytest.mark.parametrize("text, key", [
    # job_info.cpp's messages after NEVER_RUN_PREFIX, with check.cpp's detail (openpbs cd7ab5e), values filled in
    ("comment = Can Never Run: Insufficient amount of resource: ncpus (R: 64 A: 48 T: 48)\n",
     "pbs_sched_comment:never-run-insufficient-resource"),
    ("comment = Can Never Run: Insufficient amount of queue resource: ncpus (R: 256 A: 128 T: 128)\n",
     "pbs_sched_comment:never-run-insufficient-queue-resource"),
    ("comment = Can Never Run: Not enough total nodes available\n", "pbs_sched_comment:never-run-no-total-nodes"),
    ("comment = Can Never Run: can't fit in the largest placement set, and can't span psets\n",
     "pbs_sched_comment:never-run-cant-span-pset"),
])
def test_each_never_run_reason_of_a_request_too_large_fires(text, key):
    assert key in {s["id"] for s in find_messages(text)}
    (f,) = fired("slurm-request-exceeds-node", told_facts(text))
    assert f.message.startswith("PBS will never run the job")


def test_a_gpu_chunk_no_node_holds_is_the_gpu_rules():
    text = "comment = Can Never Run: Insufficient amount of resource: ngpus (R: 8 A: 4 T: 4)\n"
    (f,) = fired("slurm-gpu-request-rejected", told_facts(text))
    assert f.message.startswith("PBS will never run the job") and "ngpus" in f.fix
    assert not fired("slurm-request-exceeds-node", told_facts(text))
