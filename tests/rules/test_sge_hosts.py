"""sge-execd-not-running and sge-no-single-node-parallel-environment (rules/sge_hosts.py): Grid
Engine's scheduler, qstat -f and qhost on an execution host that does not report, and canu's check
for a $pe_slots parallel environment, on real pastes and the emitters' own formats."""

from __future__ import annotations

from rulekit import fired, told_facts, told_paste_facts

AE = "../tickets_blind_ae/"   # set AE, unsealed


def test_scheduler_dropping_a_queue_instance_and_the_users_finding():
    (f,) = fired("sge-execd-not-running", told_paste_facts("elasticluster-368-sge-queue-temporarily-not-available.txt"))
    assert f.severity == "error" and "temporarily not available" in f.message and "sge_execd" in f.message
    assert "H=compute001" in f.fix and "pgrep -a sge_execd" in f.fix and "spool/$H/messages" in f.fix
    assert "kills its jobs" in f.fix


def test_the_title_alone_states_the_daemon_down():
    # set AE's ticket: a title and one line of prose, no program output
    (f,) = fired("sge-execd-not-running", told_paste_facts(AE + "elasticluster-368-sge-execd-not-running-on-worker.txt"))
    assert "the paste says sge_execd is not running" in f.message and "H=$(qstat -f" in f.fix


def test_qstat_f_state_u_and_qhost_dash():
    # the formats of qstat.c qstat_stdout_queue_summary and sge_qhost.c HEAD_FORMAT @ 8.1.9, values filled in
    qstat = ("queuename                      qtype resv/used/tot. load_avg arch          states\n"
             "---------------------------------------------------------------------------------\n"
             "all.q@node01                   BIP   0/0/8          -NA-     lx-amd64      au\n"
             "---------------------------------------------------------------------------------\n"
             "all.q@node02                   BIP   0/2/8          0.51     lx-amd64      \n")
    (f,) = fired("sge-execd-not-running", told_facts(qstat))
    assert "all.q@node01" in f.message and '"au"' in f.message and "H=node01" in f.fix
    qhost = ("HOSTNAME                ARCH         NCPU NSOC NCOR NTHR  LOAD  MEMTOT  MEMUSE  SWAPTO  SWAPUS\n"
             "----------------------------------------------------------------------------------------------\n"
             "global                  -               -    -    -    -     -       -       -       -       -\n"
             "compute001              lx-amd64        1    1    1    1     -    3.6G       -    0.0       -\n")
    (h,) = fired("sge-execd-not-running", told_facts(qhost))
    assert "compute001" in h.message and "H=compute001" in h.fix


def test_healthy_queues_alarms_and_disabled_queues_are_not_a_dead_execd():
    # TIGRLab/admin#532: suspend alarms, a disabled queue instance, hosts without free slots
    assert not fired("sge-execd-not-running", told_paste_facts("tigrlab-532-sge-qw-suspend-alarm-disabled-slots.txt"))
    healthy = ("HOSTNAME                ARCH         NCPU NSOC NCOR NTHR  LOAD  MEMTOT  MEMUSE  SWAPTO  SWAPUS\n"
               "global                  -               -    -    -    -     -       -       -       -       -\n"
               "compute001              lx-amd64        1    1    1    1  0.01    3.6G  150.2M    0.0     0.0\n"
               "all.q@node01                   BIP   0/1/8          0.01     lx-amd64      d\n")
    assert not fired("sge-execd-not-running", told_facts(healthy))
    assert not fired("sge-execd-not-running", told_facts("Please check whether sge_execd is not running on the node.\n"))


def test_canu_finding_no_pe_slots_parallel_environment():
    (f,) = fired("sge-no-single-node-parallel-environment", told_paste_facts("canu-1975-sge-no-pe-with-pe-slots-rule.txt"))
    assert f.severity == "error" and "$pe_slots" in f.message and "misprint" in f.message
    assert "qconf -spl" in f.fix and "allocation_rule" in f.fix and "qconf -ap" in f.fix


def test_canu_refusing_the_named_pe_lists_it():
    # the formats of Grid_SGE.pm @ v2.3 (configureSGE, discoverThreadsOption), a PE filled in
    (f,) = fired("sge-no-single-node-parallel-environment", told_facts(
        "ERROR:  Sun Grid Engine parallel environment 'mpi' is using 'allocation_rule' other than '$pe_slots'.\n"))
    assert "'mpi'" in f.message


def test_a_pe_found_or_only_warned_about_is_not_fired():
    # canu's warnings before it finds a $pe_slots PE, and the scheduler's PE messages, say nothing of a missing one
    text = ("-- WARNING: Parallel Environment 'mpi' ignored; uses allocation_rule '$fill_up'\n"
            "-- Detected Sun Grid Engine parallel environment 'smp'.\n"
            'cannot run in PE "smp" because it only offers 4 slots\n')
    assert not fired("sge-no-single-node-parallel-environment", told_facts(text))
