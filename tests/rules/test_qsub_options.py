"""qsub-options-for-other-scheduler (rules/qsub_options.py): Grid Engine's qsub options refused by a
PBS qsub, and PBS's by Grid Engine's, on real pastes (tests/fixtures/pastes/SOURCES.md) and, where no
public paste was found, the emitters' own formats (said beside each)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, told_facts



def test_torque_refusing_cwd_with_the_command_line_is_an_error():
    # Xinglab/PAIRADISE#7: "qsub -cwd -l h_vmem=90G ..." -> "[qsub: illegal -c value]" and TORQUE's usage
    (f,) = fired("qsub-options-for-other-scheduler", recorded_paste_facts("pairadise-7-torque-qsub-refuses-sge-cwd.txt"))
    assert f.severity == "error"
    assert "TORQUE's qsub refused -cwd" in f.message and "Grid Engine's option" in f.message
    assert '-d "$PWD"' in f.fix and "qsub --version" in f.fix


def test_the_refusal_alone_names_cwd_as_a_warning():
    # NYU-BFX/hic-bench#2 (set AC): the refusal and TORQUE's usage, no command line
    (f,) = fired("qsub-options-for-other-scheduler", recorded_paste_facts("hic-bench-2-sge-qsub-options-on-pbs-cluster.txt"))
    assert f.severity == "warning" and "-cwd" in f.message and "TORQUE" in f.message
    assert "read from the refusal alone" in f.message


def test_openpbs_refusing_pe_names_select():
    # the format of OpenPBS's qsub.c ("qsub: illegal -p value" then print_usage) with a #$ -pe directive
    text = ("#$ -pe smp 8\n#$ -cwd\nqsub: illegal -p value\n"
            "usage: qsub [-a date_time] [-A account_string] [-c interval]\n")
    (f,) = fired("qsub-options-for-other-scheduler", told_facts(text))
    assert "OpenPBS / PBS Pro's qsub refused -pe" in f.message
    assert "-l select=1:ncpus=N" in f.fix and "nodes=1:ppn" not in f.fix


def test_getopt_refusing_sync_needs_the_command_line():
    # glibc getopt's format with argv[0] qsub: Grid Engine's -sync has no -s in either PBS qsub
    (f,) = fired("qsub-options-for-other-scheduler", told_facts("$ qsub -sync y -b y hostname\nqsub: invalid option -- 's'\n"))
    assert "-sync" in f.message and "-W block=true" in f.fix
    assert not fired("qsub-options-for-other-scheduler", told_facts("qsub: invalid option -- 's'\n"))


def test_grid_engine_refusing_pbs_options():
    # the formats of daimh/sge msg_common.h 23105 (after qsub.c's "qsub: ") and 23259 (after "Unable to run job: ")
    (f,) = fired("qsub-options-for-other-scheduler", told_facts('qsub: invalid option argument "-W"\n'))
    assert "Grid Engine's qsub refused -W" in f.message and "-hold_jid" in f.fix
    (f,) = fired("qsub-options-for-other-scheduler", told_facts('Unable to run job: unknown resource "nodes".\nExiting.\n'))
    assert "-l nodes" in f.message and "-pe" in f.fix and "qconf -spl" in f.fix
    (f,) = fired("qsub-options-for-other-scheduler", told_facts('qsub: invalid option argument "-j oe"\n'))
    assert "-j oe" in f.message and "-j y" in f.fix


def test_a_schedulers_own_options_refused_are_not_this_fault():
    # HIPS/Spearmint#6: SGE's own -j with no y|n; openpbs/openpbs#1769: OpenPBS's own -W malformed
    assert not fired("qsub-options-for-other-scheduler", recorded_paste_facts("spearmint-6-sge-qsub-j-without-value.txt"))
    assert not fired("qsub-options-for-other-scheduler", recorded_paste_facts("openpbs-1769-qsub-illegal-w-value-own-option.txt"))
    # a PBS user's own -c, shown on the command line, is not Grid Engine's -cwd
    assert not fired("qsub-options-for-other-scheduler", told_facts("$ qsub -c foo job.sh\n[qsub: illegal -c value]\n"))
    # a site's own unknown resource on Grid Engine is no PBS resource
    assert not fired("qsub-options-for-other-scheduler", told_facts('Unable to run job: unknown resource "gpu_type".\n'))
