"""mpi-fortran-interface-missing (SW112) on set AG's PICLas paste (gfortran under a UTF-8 locale) and two
more public pastes of MPICH 4.1's mpi module refusing a TYPE(c_ptr) baseptr, silent on ifort's #6285 for a
generic that takes no baseptr and on an ordinary argument mismatch (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts


@pytest.mark.parametrize("paste", [
    "piclas-18-mpich-lacks-c-ptr-interface.txt",
    "mpich-6691-alloc-mem-c-ptr-mpich-4.1.2.txt",
    "dbcsr-661-mpich-4.1-baseptr-c-ptr.txt",
])
def test_c_ptr_baseptr_refused_by_the_mpi_module(paste):
    facts = recorded_paste_facts(paste)
    (f,) = fired("mpi-fortran-interface-missing", facts)
    assert f.severity == "error" and "TYPE(C_PTR)" in f.message and "baseptr" in f.message
    assert "MPICH 4.2.0" in f.fix and "mpi_f08" in f.fix
    # -fallow-argument-mismatch is no fix for an explicit interface: the GCC 10 rule leaves it
    assert not fired("gfortran-argument-mismatch", facts)


def test_ifort_generic_without_a_baseptr_is_silent():
    assert not fired("mpi-fortran-interface-missing", recorded_paste_facts("fds-2670-ifort-6285-mpi-allreduce.txt"))


def test_an_ordinary_argument_mismatch_is_silent(tmp_path):
    # gfortran's compare_parameter format filled in with another argument (no baseptr)
    text = "Error: Type mismatch in argument 'idx' at (1); passed INTEGER(8) to INTEGER(4)\n"
    assert not fired("mpi-fortran-interface-missing", paste_facts(tmp_path, text))


def test_ifort_generic_for_a_baseptr_routine(tmp_path):
    # ifort's #6285 format (as fds#2670 prints it) filled in with MPI_WIN_ALLOCATE_SHARED: no public
    # paste of it was found
    text = ("mpi_shared.f90(268): error #6285: There is no matching specific subroutine for this generic "
            "subroutine call.   [MPI_WIN_ALLOCATE_SHARED]\n")
    (f,) = fired("mpi-fortran-interface-missing", paste_facts(tmp_path, text))
    assert "MPI_WIN_ALLOCATE_SHARED" in f.message
