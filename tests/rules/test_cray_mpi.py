"""HPE Cray MPICH refusing to start (rules/cray_mpi.py): GPU support asked of a program linked without
the GTL library, and MPI_Init run outside srun/aprun, on set P's tickets and other public threads
(tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts

SET_P = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_p"


def _set_p(tmp_path, name):
    return paste_facts(tmp_path, (SET_P / f"{name}.txt").read_text(encoding="utf-8"))


def test_gtl_not_linked_on_a_login_node(tmp_path):
    g = _set_p(tmp_path, "sst-core-895-cray-mpich-gtl-not-linked")
    (f,) = fired("cray-mpich-gtl-not-linked", g)
    assert f.severity == "error" and "libmpi_gtl" in f.message and "login31, a login node" in f.message
    assert "module load craype-accel-nvidia80" in f.fix and "make CC=cc CXX=CC FC=ftn" in f.fix
    assert "MPICH_GPU_SUPPORT_ENABLED=0" in f.fix and "ldd $(command -v PROGRAM) | grep -i gtl" in f.fix
    assert not fired("mpi-init-outside-launcher", g)


def test_gtl_not_linked_on_a_compute_node_of_another_site():
    (f,) = fired("cray-mpich-gtl-not-linked", recorded_paste_facts("appfl-258-cray-mpich-gtl-not-linked-polaris.txt"))
    assert f.severity == "error" and "login node" not in f.message


def test_pmi2_init_failed_on_a_login_node(tmp_path):
    g = _set_p(tmp_path, "emcee-228-cray-mpi-init-aborts-on-login-node")
    (f,) = fired("mpi-init-outside-launcher", g)
    assert f.severity == "warning" and "PMI2 init failed: 1" in f.message and "outside srun/aprun" in f.message
    assert "srun -n 1 python -c 'from mpi4py import MPI" in f.fix and "mpi4py.rc.initialize = False" in f.fix
    # srun refusing its PMI plugin is mpi-srun-without-pmi's, a cause this paste does not show
    assert not fired("mpi-srun-without-pmi", g)
    assert not fired("cray-mpich-gtl-not-linked", g)   # a Cray MPI abort of another cause


def test_pmi2_init_failed_from_h5py_in_another_thread():
    (f,) = fired("mpi-init-outside-launcher", recorded_paste_facts("sirepo-4930-h5py-mpi-init-on-nersc-login.txt"))
    assert "MPID_Init(647)" in f.message


def test_silent_where_cray_pmi_names_its_own_failure_under_aprun():
    # the same "PMI2 init failed: 1" on a launched job whose Cray PMI could not bind its socket
    assert not fired("mpi-init-outside-launcher", recorded_paste_facts("radical-pilot-766-cray-pmi-bind-failed-under-aprun.txt"))
