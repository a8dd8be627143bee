"""mpi-internal-hwloc-incompatible on Open MPI 4.x's own binding report (orte/mca/rtc/hwloc/rtc_hwloc.c
@ v4.1.7: "hwloc_set_cpubind returned "%s" for bitmap "%s"" inside [binding generic error]), replayed
from the public thread that showed it (tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


def test_the_kernel_refusing_open_mpis_cpus_points_at_its_hwloc():
    (f,) = fired("mpi-internal-hwloc-incompatible",
                 recorded_paste_facts("ompi-12470-internal-hwloc-vs-slurm-cgroup-binding.txt"))
    assert f.severity == "warning" and "(2,114)" in f.message and "line 18" in f.message
    assert "internal hwloc 2.0" in f.message and "cgroup v2" in f.message
    assert f.fix.startswith("ompi_info | grep -i 'MCA hwloc'") and "--with-hwloc=external" in f.fix
    assert "mpirun --bind-to none ./app" in f.fix


def test_the_not_bound_warning_carries_the_same_line():
    # help-orte-odls-default.txt [not bound] (binding not required) @ v4.1.7, its format filled in
    text = ("WARNING: Open MPI tried to bind a process but failed.  This is a\n"
            "warning only; your job will continue.\n\n"
            "  Local host:        gpu004\n"
            "  Application name:  ./hpcx\n"
            '  Error message:     hwloc_set_cpubind returned "Error" for bitmap "0-3"\n'
            "  Location:          rtc_hwloc.c:382\n")
    told = facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})
    (f,) = fired("mpi-internal-hwloc-incompatible", told)
    assert "(0-3)" in f.message


@pytest.mark.parametrize("paste", [
    "baselines-325-openmpi-binding-overload-4-cores.txt",   # more ranks than cores: mpi-binding-overload's
    "grudge-227-openmpi-not-enough-slots-ci.txt",
    "horovod-106-mpirun-hangs-no-output.txt",
])
def test_silent_on_other_open_mpi_reports(paste):
    assert not fired("mpi-internal-hwloc-incompatible", recorded_paste_facts(paste))
