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


# The same cause in the other MPIs' words (mpich.toml pmi2-job-getid-failed, openmpi.toml
# ess-singleton-rte-init-failed): each on a real public paste, and the near misses silent.

def test_intel_mpi_pmi2_job_getid_on_a_login_node_decodes_the_code():
    g = recorded_paste_facts("polychordlite-64-intel-mpi-pmi2-job-getid-login-node.txt")
    (f,) = fired("mpi-init-outside-launcher", g)
    assert f.severity == "warning" and "PMI2_Job_GetId returned 14" in f.message
    assert "code 14: PMI2_ERR_OTHER" in f.message and "without mpiexec/srun" in f.message
    assert "mpiexec -n 1 python -c" in f.fix and "mpi4py.rc.initialize = False" in f.fix
    assert "salloc -N 1" not in f.fix   # Cray's fix is not this MPI's
    assert not fired("mpi-srun-without-pmi", g)


def test_open_mpi_singleton_without_its_orted():
    (f,) = fired("mpi-init-outside-launcher", recorded_paste_facts("gmx-mmpbsa-578-openmpi-singleton-orted-not-found.txt"))
    assert f.severity == "warning" and "without mpirun, as a singleton" in f.message
    assert "A system-required executable either could not be found" in f.message
    assert "mpirun -n 1 python -c" in f.fix and "OPAL_PREFIX" in f.fix and "/orted\"" in f.fix


def test_open_mpi_singleton_in_another_thread():
    (f,) = fired("mpi-init-outside-launcher", recorded_paste_facts("minife-22-openmpi-singleton-orted-not-found.txt"))
    assert f.severity == "warning" and "as a singleton" in f.message and "(line 1: " in f.message


def test_silent_where_mpirun_itself_failed():
    # ess_hnp_module.c is mpirun's own start-up (the HNP): launched, not outside the launcher
    assert not fired("mpi-init-outside-launcher", recorded_paste_facts("spack-30906-openmpi-mpirun-pmix-select-not-found.txt"))


def test_silent_where_srun_launched_an_open_mpi_without_slurm_pmi(tmp_path):
    # mpi-srun-without-pmi's ticket: srun present, no PMI shared; not this rule's
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_i"
            / "arjunausers-172-srun-ompi-without-slurm-pmi.txt").read_text(encoding="utf-8")
    g = paste_facts(tmp_path, text)
    assert fired("mpi-srun-without-pmi", g)
    assert not fired("mpi-init-outside-launcher", g)
