"""mpi-init-outside-launcher (NET032) on Slurm's PMI-1 library reaching for an srun that is not there."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts


def test_flux_started_in_the_batch_script_without_srun():
    [hit] = fired("mpi-init-outside-launcher", recorded_paste_facts("flux-core-1195-flux-start-without-srun.txt"))
    assert "srun of its job step" in hit.message and "srun flux start" in hit.fix


def test_libpmi_under_srun_that_answers_is_silent():
    g = told_facts("srun: job 4242 queued and waiting for resources\nsrun: job 4242 has been allocated resources\n"
                   "hello from rank 0 of 2\n")
    assert not fired("mpi-init-outside-launcher", g)


def test_the_barrier_refused_is_the_same_missing_srun(tmp_path):
    # no public paste of this wording recorded: slurm_pmi.c's format filled in with ECONNREFUSED's text
    g = paste_facts(tmp_path, "error: slurm_get_kvs_comm_set: Connection refused\n")
    assert "slurm_mpi:libpmi-get-kvs-refused" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    [hit] = fired("mpi-init-outside-launcher", g)
    assert "line 1" in hit.message and "srun --mpi=pmi2 ./program" in hit.fix


def test_libpmi_timing_out_under_srun_is_not_a_missing_launcher(tmp_path):
    # another errno than a refusal: an srun that was there but did not answer in time (filled-in format)
    g = paste_facts(tmp_path, "error: slurm_send_kvs_comm_set: Socket timed out on send/recv operation\n")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert "slurm_mpi:libpmi-send-kvs-other-errno" in ids and "slurm_mpi:libpmi-send-kvs-failed" not in ids
    assert not fired("mpi-init-outside-launcher", g)


def test_srun_side_pmi_server_lines_are_read_and_fire_nothing(tmp_path):
    # pmi_server.c's formats filled in; no public paste recorded
    g = paste_facts(tmp_path, "srun: error: PMK_KVS_Barrier task count inconsistent (4 != 8)\n"
                              "srun: error: PMK_KVS_Barrier duplicate request from task 3\n")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"slurm_mpi:pmi-server-barrier-count-inconsistent", "slurm_mpi:pmi-server-barrier-duplicate"} <= ids
    assert not fired("mpi-init-outside-launcher", g)
