"""Flux's broker bootstrapping through PMI (flux_pmi.toml): its failed PMI calls and "bootstrap failed"
are read; only Slurm's libpmi refused by no srun step (slurm_mpi.toml) is blamed on a missing srun."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts


def _ids(g):
    return {s["id"] for s in g["facts"]["ticket"]["symptoms"]}


def test_flux_start_in_a_batch_script_reads_every_line_and_blames_the_missing_srun():
    g = recorded_paste_facts("flux-core-1195-flux-start-without-srun.txt")
    assert {"slurm_mpi:libpmi-send-kvs-failed", "flux_pmi:PMI_FAIL", "flux_pmi:bootstrap-failed"} <= _ids(g)
    assert fired("mpi-init-outside-launcher", g)


@pytest.mark.parametrize("paste, read", [
    # flux's own client search picking Slurm's libpmi2 in its test suite (a flux-core bug, fixed in #5058)
    ("flux-core-5057-libpmi2-init-pmi-error-14.txt", "flux_pmi:unknown"),
    # a tbon.interface-hint that matches no address, under flux's own launcher
    ("flux-core-6278-bootstrap-failed-interface-hint.txt", "flux_pmi:bootstrap-failed"),
])
def test_flux_bootstrap_failures_of_other_causes_are_read_not_blamed_on_a_missing_srun(paste, read):
    g = recorded_paste_facts(paste)
    assert read in _ids(g)
    assert not fired("mpi-init-outside-launcher", g)


def test_the_pmi_debug_trace_is_read_as_the_client_search(tmp_path):
    # lines of the FLUX_PMI_DEBUG trace as flux-framework/flux-core#4873 (a comment by grondo) and
    # flux-coral2#493 show them
    g = paste_facts(tmp_path, "boot_pmi: single: get key=flux.instance-level: key not found\n"
                              "bootstrap: simple: PMI_FD not found in environ\n")
    assert {"flux_pmi:trace-flux-key-not-found", "flux_pmi:trace-simple-no-pmi-fd"} <= _ids(g)
    assert not fired("mpi-init-outside-launcher", g)
