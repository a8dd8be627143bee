"""file-size-limit-exceeded (SYS055) on a real job log, and on the emitters' own formats."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_a_jobs_log_ending_in_sigxfsz_names_the_file_size_limit():
    [hit] = fired("file-size-limit-exceeded", recorded_paste_facts("eutelescope-326-filesize-limit-exceeded-sge.txt"))
    assert hit.severity == "error" and "file-size limit" in hit.message
    assert "ulimit -Sf" in hit.fix and "h_fsize" in hit.fix


def test_bash_and_slurm_forms(tmp_path):
    # bash's own format (jobs.c notify_of_job_status) and scontrol's ExitCode, values filled in by hand.
    g = paste_facts(tmp_path, "./run.sh: line 12: 48213 File size limit exceeded (core dumped) ./writer out.dat\n")
    assert fired("file-size-limit-exceeded", g)[0].severity == "error"
    g = paste_facts(tmp_path, "   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n   ExitCode=0:25\n")
    [hit] = fired("file-size-limit-exceeded", g)
    assert "PropagateResourceLimits" in hit.fix


def test_the_words_in_a_sentence_are_not_the_signal():
    g = told_facts("We set a quota so that a file size limit exceeded error is shown to users who upload too much.\n")
    assert not fired("file-size-limit-exceeded", g)
