"""NET046 mpi-known-issue (rules/cray_mpi.py, knowledge/mpi_known_issues.toml): a message a centre
documents as a known bug of its MPI stack names the issue, its source and the documented workaround.
Real pastes (fixtures/pastes, SOURCES.md) for OLCFDEV-1655 (two) and OLCFDEV-1597; LUMI's PMI
ERROR line has no public paste, so its test fills in the LUMI page's own text and says so."""

from __future__ import annotations

from conftest import FIXTURES
from rulekit import fired, paste_facts

PASTES = FIXTURES / "pastes"


def _facts(tmp_path, name, extra=""):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8") + extra, name)


def test_warpx_lumi_pmi_allgather_at_mpi_init_is_olcfdev_1655(tmp_path):
    (hit,) = fired("mpi-known-issue", _facts(tmp_path, "warpx-4236-pmi-allgather-failed-mpi-init-known-issue.txt"))
    assert hit.severity == "error"
    assert "OLCFDEV-1655" in hit.message and "docs.olcf.ornl.gov" in hit.message
    assert "hipInit(0) before MPI_Init" in hit.fix


def test_pelelmex_frontier_pmpi_init_pmi_allgather_is_olcfdev_1655(tmp_path):
    (hit,) = fired("mpi-known-issue", _facts(tmp_path, "pelelmex-574-pmi-allgather-failed-mpi-init-frontier.txt"))
    assert "OLCFDEV-1655" in hit.message


def test_frontier_undeliverable_is_olcfdev_1597_with_its_environment_workaround(tmp_path):
    (hit,) = fired("mpi-known-issue", _facts(tmp_path, "warpx-4234-ofi-poll-failed-undeliverable-frontier.txt"))
    assert "OLCFDEV-1597" in hit.message
    assert hit.fix.startswith("export MPICH_SMP_SINGLE_COPY_MODE=NONE")


def test_undeliverable_on_another_system_is_not_olcfs_issue(tmp_path):
    text = (PASTES / "warpx-4234-ofi-poll-failed-undeliverable-frontier.txt").read_text(encoding="utf-8")
    facts = paste_facts(tmp_path, text.replace("[frontier01982]", "[nid001234]"), "ticket.txt")
    assert not fired("mpi-known-issue", facts)          # OLCFDEV-1597 is Frontier's
    assert fired("slingshot-hw-tag-matching-fails", facts)  # the general reading stays


def test_lumi_pmi_error_line_names_lumis_workaround(tmp_path):
    # LUMI's known-issue page's own text (lumi-userguide docs/helpdesk/issues.md); no public paste found
    facts = paste_facts(tmp_path, "srun: error: task 0 failed\n[unset]:_pmi_set_af_in_use:PMI ERROR\n", "ticket.txt")
    (hit,) = fired("mpi-known-issue", facts)
    assert "LUMI" in hit.message and hit.fix.startswith('export PMI_SHARED_SECRET=""')


def test_a_fixed_rocm_release_named_in_the_paste_says_outside_instead(tmp_path):
    # the warpx paste with a module line naming ROCm 5.7.1 added (a release OLCF lists as fixed): filled in
    facts = _facts(tmp_path, "warpx-4236-pmi-allgather-failed-mpi-init-known-issue.txt", "\nmodule load rocm-5.7.1\n")
    (hit,) = fired("mpi-known-issue", facts)
    assert hit.severity == "info" and "outside" in hit.message and "5.7.1" in hit.message
    affected = _facts(tmp_path, "warpx-4236-pmi-allgather-failed-mpi-init-known-issue.txt", "\nmodule load rocm-6.2.4\n")
    assert fired("mpi-known-issue", affected)[0].severity == "error"


def test_other_mpi_init_failures_are_not_known_issues(tmp_path):
    for name in ("mpich-6687-pmi2-nonexist-key-harmless-healthy.txt", "radical-pilot-766-cray-pmi-bind-failed-under-aprun.txt"):
        assert not fired("mpi-known-issue", _facts(tmp_path, name)), name
