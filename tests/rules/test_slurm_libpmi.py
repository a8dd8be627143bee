"""mpi-init-outside-launcher (NET032) on Slurm's PMI-1 library reaching for an srun that is not there."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts


def test_flux_started_in_the_batch_script_without_srun():
    [hit] = fired("mpi-init-outside-launcher", recorded_paste_facts("flux-core-1195-flux-start-without-srun.txt"))
    assert "srun of its job step" in hit.message and "srun flux start" in hit.fix


def test_libpmi_under_srun_that_answers_is_silent():
    g = told_facts("srun: job 4242 queued and waiting for resources\nsrun: job 4242 has been allocated resources\n"
                   "hello from rank 0 of 2\n")
    assert not fired("mpi-init-outside-launcher", g)
