"""mpi-spawn-exceeds-allocation on public tickets (tests/fixtures/pastes, SOURCES.md there): a program
that spawns MPI processes with no room left for them; the plain not-enough-slots launch stays ENV019's."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_open_mpi_refusing_the_spawned_slots_is_an_error_not_env019():
    g = recorded_paste_facts("mpi4py-examples-15-spawn-not-enough-slots.txt")
    (f,) = fired("mpi-spawn-exceeds-allocation", g)
    assert f.severity == "error" and "MPI_Comm_spawn asked for found no free slot" in f.message
    assert "sbatch --ntasks=11" in f.fix and "mpirun -np 1" in f.fix
    assert not fired("mpi-not-enough-slots", g)


def test_mpichs_spawn_timing_out_under_sbatch_is_info():
    (f,) = fired("mpi-spawn-exceeds-allocation", recorded_paste_facts("mpich-6804-spawn-in-sbatch-no-free-slots.txt"))
    assert f.severity == "info" and "timed out under sbatch" in f.message


def test_srun_waiting_beside_a_spawn_is_a_warning():
    # srun's launch.c line 1382, filled in, beside a program's MPI_Comm_spawn
    text = ("MPI_Comm_spawn(cmd, MPI_ARGV_NULL, 4, MPI_INFO_NULL, 0, MPI_COMM_SELF, &children, errs);\n"
            "srun: Job 123456 step creation temporarily disabled, retrying (Requested nodes are busy)\n")
    (f,) = fired("mpi-spawn-exceeds-allocation", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "warning" and "srun waits to start the spawned processes" in f.message


def test_a_launch_without_spawn_stays_not_enough_slots():
    # Open MPI 4.1.8 help-orte-rmaps-base.txt [alloc-error], filled in
    text = ("There are not enough slots available in the system to satisfy the 4\n"
            "slots that were requested by the application:\n")
    g = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})
    assert not fired("mpi-spawn-exceeds-allocation", g)
    assert fired("mpi-not-enough-slots", g)
