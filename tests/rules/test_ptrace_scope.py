"""ptrace-scope-blocks-mpi-shm: MPI's single-copy transfer between ranks refused by Yama's ptrace scope,
from Intel MPI's and Open MPI's own words in real pastes (tests/fixtures/pastes, SOURCES.md there),
and on the node from /proc/sys/kernel/yama/ptrace_scope."""

from __future__ import annotations

import pytest

from pathlib import Path

from rulekit import file_facts, facts, fired, paste_facts, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages



def test_intel_mpi_dcp_read_refused_is_an_error_with_its_own_workarounds():
    (f,) = fired("ptrace-scope-blocks-mpi-shm", recorded_paste_facts("fds-5853-intel-mpi-cma-needs-ptrace.txt"))
    assert f.severity == "error" and "Intel MPI could not read another rank" in f.message and "(line 12" in f.message
    assert f.fix.startswith("cat /proc/sys/kernel/yama/ptrace_scope") and "export I_MPI_SHM_LMT=shm" in f.fix
    assert "--cap-add=SYS_PTRACE" in f.fix


def test_open_mpis_cma_fallback_warning_is_a_warning():
    # open-mpi/ompi v4.1.8 opal/mca/btl/vader/help-btl-vader.txt [cma-permission-denied], as show_help prints it
    text = ("WARNING: Linux kernel CMA support was requested via the\n"
            "btl_vader_single_copy_mechanism MCA variable, but CMA support is\n"
            "not available due to restrictive ptrace settings.\n")
    (f,) = fired("ptrace-scope-blocks-mpi-shm", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "warning" and "fell back to copying twice" in f.message
    assert "OMPI_MCA_btl_vader_single_copy_mechanism=none" in f.fix


SET_N = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_n"


def test_ucx_1_5s_refused_cma_copy_is_an_error(tmp_path):
    # UCX 1.5.1 under Open MPI 4.0.1 (openucx/ucx#3545): the wording of cma_ep.c up to 1.7
    g = paste_facts(tmp_path, (SET_N / "ucx-3545-cma-ptrace-scope.txt").read_text())
    (f,) = fired("ptrace-scope-blocks-mpi-shm", g)
    assert f.severity == "error" and "UCX's cross-memory copy between ranks (CMA) was refused" in f.message
    assert "process_vm_readv delivered 0 instead of 480960, error message Operation not permitted" in f.message
    assert "export UCX_TLS=^cma" in f.fix and f.fix.startswith("cat /proc/sys/kernel/yama/ptrace_scope")


def test_ucx_1_14s_refused_cma_copy_in_a_container_is_an_error():
    # UCX 1.14.0 in Apptainer (openucx/ucx#8958): the wording since 1.12, two ranks refused
    (f,) = fired("ptrace-scope-blocks-mpi-shm", recorded_paste_facts("ucx-8958-cma-eperm-apptainer.txt"))
    assert f.severity == "error" and "(line 6:" in f.message
    assert f.evidence["ticket.text"].endswith("returned -1: Operation not permitted")
    assert "different containers or user namespaces" in f.message and "--cap-add=SYS_PTRACE" in f.fix


def test_ucx_debug_line_that_cma_is_unsupported_is_a_warning():
    # openucx/ucx v1.22.0 src/uct/sm/scopy/cma/cma_md.c uct_cma_test_ptrace_scope's format, scope 2 filled in
    text = "[1700000000.000000] [node1:1234:0]          cma_md.c:115  UCX  DEBUG ptrace_scope is 2 but no CAP_SYS_PTRACE, CMA is unsupported\n"
    (f,) = fired("ptrace-scope-blocks-mpi-shm", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "warning" and f.message.startswith("UCX could not use") and "fell back" in f.message


@pytest.mark.parametrize("paste", ["ucx-6402-cma-bad-address-cuda-buffer.txt", "singularity-6518-cma-bad-address.txt"])
def test_ucx_cma_copies_that_fail_for_other_reasons_are_silent(paste):
    # the same cma_ep.c lines with EFAULT (a GPU buffer handed to CMA): not the ptrace check
    g = recorded_paste_facts(paste)
    assert any(str(s.get("id", "")).startswith("ucx:cma-failed") for s in g["facts"]["ticket"]["symptoms"])
    assert not fired("ptrace-scope-blocks-mpi-shm", g)


@pytest.mark.parametrize("paste", ["ompi-10940-srun-direct-launch-without-pmi.txt", "ompi-4963-btl-tcp-multi-nic-connect-fail.txt"])
def test_mpi_failures_of_other_causes_are_silent(paste):
    assert not fired("ptrace-scope-blocks-mpi-shm", recorded_paste_facts(paste))


def _node(tmp_path, scope):
    return file_facts(tmp_path, {"/proc/sys/kernel/yama/ptrace_scope": f"{scope}\n"})


@pytest.mark.parametrize("scope", [2, 3])
def test_on_the_node_a_scope_that_forbids_cma_to_every_mpi_is_info(tmp_path, scope):
    g = _node(tmp_path, scope)
    assert g["facts"]["system"]["ptrace_scope"] == scope
    (f,) = fired("ptrace-scope-blocks-mpi-shm", g)
    assert f.severity == "info" and f"kernel.yama.ptrace_scope is {scope}" in f.message


@pytest.mark.parametrize("scope", [0, 1])
def test_on_the_node_scopes_the_mpis_handle_are_silent(tmp_path, scope):
    # 1: Open MPI and UCX grant themselves with PR_SET_PTRACER_ANY (their source), so nothing is lost for them
    assert not fired("ptrace-scope-blocks-mpi-shm", _node(tmp_path, scope))


def test_a_node_without_yama_is_unknown_not_zero():
    g = facts("h100-kvm-1gpu")
    assert "ptrace_scope" not in g["facts"].get("system", {}) or not isinstance(g["facts"]["system"]["ptrace_scope"], int)
    assert not fired("ptrace-scope-blocks-mpi-shm", g)
