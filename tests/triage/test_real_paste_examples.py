"""Real public pastes that replaced catalogue examples once filled in from the emitters' format
strings (nextflow_locks.toml, easybuild.toml, mpich.toml): each is read as its entry, and where the
entry feeds no rule and the thread confirms a cause that is the user's input or an upstream change
(not the node), no rule answers with an error or a warning."""

from __future__ import annotations

import pytest

from hpcdoctor import engine
from hpcdoctor.facts import FactView
from rulekit import _rules, recorded_paste_facts


def _symptoms(facts: dict) -> set:
    return {s["id"] for s in (facts["facts"].get("ticket") or {}).get("symptoms", [])}


def _faults(facts: dict) -> list:
    findings, _skipped = engine.evaluate(list(_rules().values()), FactView(facts["facts"], facts["unknown"], None))
    return [f.symbol for f in findings if f.severity in ("error", "warning")]


@pytest.mark.parametrize("paste, entry", [
    # the maintainer: each run in a job array needs its own launch directory
    ("nextflow-1300-sge-array-session-lock.txt", "nextflow_locks:session-lock-held"),
    # a re-released CRAN tarball; fixed by the easyconfig's new checksum
    ("easybuild-easyconfigs-15124-r-extension-checksum.txt", "easybuild:extension-checksum-failed"),
    # the user: the dependency's easyconfig was not on the robot path
    ("easybuild-835-missing-dependencies-robot-path.txt", "easybuild:missing-dependencies"),
    # an easyblock fix the site had not applied
    ("easybuild-easyconfigs-16864-libxml2-sanity-check.txt", "easybuild:sanity-check-failed"),
    # the maintainer: MPC moved its download location
    ("easybuild-409-mpc-source-download-failed.txt", "easybuild:source-not-found-download-failed"),
    # a tag above Intel MPI's MPI_TAG_UB; fixed in the program by a smaller tag (MAPL#267)
    ("mapl-295-intel-mpi-invalid-tag-above-tag-ub.txt", "mpich:MPI_ERR_TAG"),
    # aliased send and receive buffers (MPICH's own stack says so); fixed in the program
    ("entity-60-mpich-allgather-aliased-buffers.txt", "mpich:MPI_ERR_BUFFER"),
    # the maintainer: a Mac's hostname in PMI_PORT is not a network address
    ("mpich-6621-macos-hostname-pmi-port-unresolvable.txt", "mpich:simple-pmi-host-entry"),
    # a bug in the program's finish_sources, confirmed by its maintainer
    ("stella-52-mpi-win-free-invalid-win.txt", "mpich:MPI_ERR_WIN"),
])
def test_read_and_answered_without_a_fault(paste, entry):
    facts = recorded_paste_facts(paste)
    assert entry in _symptoms(facts)
    assert _faults(facts) == []


def test_a_failed_download_is_not_a_download_that_was_disabled():
    read = _symptoms(recorded_paste_facts("easybuild-409-mpc-source-download-failed.txt"))
    assert "easybuild:source-not-found-download-disabled" not in read


def test_mpich_singletons_under_srun_are_read_with_their_closed_pmi_descriptor():
    read = _symptoms(recorded_paste_facts("mpich-6924-srun-mpich-singleton-no-mpiexec.txt"))
    assert {"mpich:simple-pmi-singinit-no-mpiexec", "mpich:simple-pmi-write-failed"} <= read


def test_a_pmi_port_host_that_does_not_resolve_is_read_at_each_layer():
    read = _symptoms(recorded_paste_facts("mpich-6621-macos-hostname-pmi-port-unresolvable.txt"))
    assert {"mpich:simple-pmi-host-entry", "mpich:simple-pmi-unable-to-connect", "mpich:pmi-init-failed"} <= read


def test_a_fatal_error_class_without_a_stack_is_read_before_a_long_paragraph():
    # pmodels/mpich#1112: the heading alone in a code block, then a wrapped paragraph; read on its
    # own line (the window once ran the message past its bound and the paste was refused)
    facts = recorded_paste_facts("mpich-1112-irecv-no-mem-class-misused.txt")
    assert "mpich:MPI_ERR_NO_MEM" in _symptoms(facts)
