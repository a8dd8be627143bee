"""stack-limit-too-low on public pastes (tests/fixtures/pastes, SOURCES.md there), a stack overflow
recorded on the project's VM, the Fortran run-times' format strings, and the node's own RLIMIT_STACK."""

from __future__ import annotations

import resource

import pytest

from rulekit import facts, fired, recorded_paste_facts, told_facts
from hpcdoctor.checks.limits import _rlimit_stack, _stack
from hpcdoctor.facts import Unknown



def test_a_segfault_of_a_program_the_user_says_ifort_built_is_the_usual_cause_at_info():
    (f,) = fired("stack-limit-too-low", recorded_paste_facts("diva-10-ifort-segfault-stack-limit.txt"))
    assert f.severity == "info" and "built with ifort" in f.message and "Segmentation fault" in f.message
    assert "ulimit -s unlimited" in f.fix and "srun --propagate=STACK" in f.fix and "-heap-arrays" in f.fix


def test_a_recorded_stack_overflow_under_8192_kb_names_the_listed_limit():
    (f,) = fired("stack-limit-too-low", recorded_paste_facts("bash-5.2-automatic-array-stack-8192-segfault.txt"))
    assert "stack size limit of 8192 kB (line 7)" in f.message
    assert f.severity == "info"   # a C program: nothing says its arrays are Fortran's
    assert "(now 8192)" in f.fix


def test_intels_sigsegv_is_a_warning():
    (f,) = fired("stack-limit-too-low", recorded_paste_facts("pbs-hydra-forrtl-174-sigsegv.txt"))
    assert f.severity == "warning" and "Intel Fortran program died of SIGSEGV" in f.message



def test_gfortrans_sigsegv_beside_a_listing_is_a_warning():
    # libgfortran's show_signal format (compile_options.c) and bash's ulimit -a line, as printed
    text = ("stack size                  (kbytes, -s) 8192\n"
            "\nProgram received signal SIGSEGV: Segmentation fault - invalid memory reference.\n")
    (f,) = fired("stack-limit-too-low", told_facts(text))
    assert f.severity == "warning" and "8192 kB" in f.message


@pytest.mark.parametrize("name", [
    "ulimit-four-shells-memlock-64k.txt",          # a listing and no crash
    "probabilistic-unet-pytorch-2-segfault-torch-built-without-cudnn.txt",   # a bare segfault, no Fortran, no limit
])
def test_a_listing_alone_or_a_bare_segfault_is_not_this_rule(name):
    assert not fired("stack-limit-too-low", recorded_paste_facts(name))


@pytest.mark.parametrize("soft, hard, hit", [(1024 * 1024, None, True), (8192 * 1024, None, False), (None, None, False)])
def test_the_nodes_own_soft_limit_below_the_kernel_default(soft, hard, hit):
    got = fired("stack-limit-too-low", facts("h100-kvm-1gpu", **{"limits.stack": {"soft": soft, "hard": hard}}))
    assert bool(got) == hit
    if hit:
        assert got[0].severity == "warning" and "1024 kB" in got[0].message and "ulimit -s unlimited" in got[0].fix


def test_the_probe_reads_this_process_and_a_bad_record_is_unknown():
    soft, _hard = resource.getrlimit(resource.RLIMIT_STACK)
    rec = _stack(_rlimit_stack())
    assert rec["soft"] == (None if soft == resource.RLIM_INFINITY else soft)
    assert isinstance(_stack({"soft": "8M"}), Unknown) and isinstance(_stack([1]), Unknown)
