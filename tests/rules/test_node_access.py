"""user-unknown-on-compute-node and pam-slurm-adopt-on-login-node (rules/node_access.py) on set Q's
tickets and other threads' pastes (tests/fixtures/pastes/SOURCES.md), through the real catalogue."""

from __future__ import annotations

from pathlib import Path

from rulekit import PASTES, fired, paste_facts, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages

S = "../tickets_blind_s/"   # set S, unsealed: recorded_paste_facts reads fixtures/pastes/<name>

Q = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_q"


def _feeding(name, symbol):
    # nothing in these pastes is read at all (check --from refuses them): the catalogue's reading is the test
    return [s for s in find_messages((PASTES / name).read_text(encoding="utf-8")) if symbol in (s.get("rules") or [])]


def _q(tmp_path, name):
    return paste_facts(tmp_path, (Q / name).read_text(encoding="utf-8"))


def test_grid_engine_without_a_passwd_entry_on_the_node(tmp_path):
    (f,) = fired("user-unknown-on-compute-node", _q(tmp_path, "dcblast-1-user-unknown-on-compute-nodes.txt"))
    assert f.severity == "error" and "Grid Engine" in f.message and "xxx" in f.message
    assert "getent passwd USER" in f.fix and "qmod -cj" in f.fix


def test_the_same_in_another_thread():
    (f,) = fired("user-unknown-on-compute-node", recorded_paste_facts("tigrlab-admin-535-sge-password-entry-nis.txt"))
    assert f.severity == "error" and "saba" in f.message


def test_singularity_under_aprun_on_a_node_that_knows_only_the_uid():
    # singularity#5598: Go's os/user finds no passwd entry for 606 on the compute node
    (f,) = fired("user-unknown-on-compute-node", recorded_paste_facts("singularity-5598-aprun-compute-node-unknown-userid.txt"))
    assert f.severity == "error" and "606" in f.message and "getent passwd USER" in f.fix


def test_su_in_a_chroot_is_not_a_scheduler():
    assert _feeding("andronix-origin-251-su-user-does-not-exist.txt", "user-unknown-on-compute-node") == []


def test_pam_slurm_adopt_refusal_is_info_naming_both_nodes(tmp_path):
    # info: on a compute node the refusal is the policy working (set K's fgci-ansible-123 is a healthy control)
    (f,) = fired("pam-slurm-adopt-on-login-node", _q(tmp_path, "awsome-distributed-ai-777-pam-slurm-adopt-on-login-node.txt"))
    assert f.severity == "info" and "login node" in f.message and "no job" in f.message
    assert "srun --jobid=JOBID --overlap --pty bash" in f.fix and "/etc/pam.d/sshd" in f.fix


def test_the_older_pam_slurm_wording():
    (f,) = fired("pam-slurm-adopt-on-login-node", recorded_paste_facts("fgci-ansible-123-pam-slurm-no-active-jobs.txt"))
    assert "uid=5249" in f.message and f.severity == "info"


def test_a_description_of_the_module_is_no_refusal():
    assert _feeding("deepops-1111-pam-slurm-adopt-option.txt", "pam-slurm-adopt-on-login-node") == []


def test_each_rule_is_silent_on_the_others_fault():
    assert not fired("user-unknown-on-compute-node", recorded_paste_facts("fgci-ansible-123-pam-slurm-no-active-jobs.txt"))
    assert not fired("pam-slurm-adopt-on-login-node", recorded_paste_facts("tigrlab-admin-535-sge-password-entry-nis.txt"))


# getpwuid failures: Charliecloud 0.13's ch_core.c:406 on set S's ticket, CPython's and whoami's formats
def test_charliecloud_0_13_getpwuid_line_is_the_user_unknown():
    facts = recorded_paste_facts(S + "charliecloud-649-user-not-in-etc-passwd.txt")
    (f,) = fired("user-unknown-on-compute-node", facts)
    assert f.severity == "error" and "ch-run" in f.message and "getent passwd" in f.fix
    assert not fired("user-namespaces-disabled", facts)


def test_getpwuid_of_a_programs_own_uid_is_a_hint():
    # the formats of CPython's pwdmodule.c and coreutils' whoami.c
    for line in ("KeyError: 'getpwuid(): uid not found: 1001'\n", "whoami: cannot find name for user ID 1001\n"):
        (f,) = fired("user-unknown-on-compute-node", told_facts(line))
        assert f.severity == "info" and "uid 1001" in f.message and "arbitrary uid" in f.message


def test_a_container_prompt_without_a_name_is_not_an_unknown_user():
    # bitnami's image runs under an arbitrary uid on purpose: bash's "I have no name!" prompt is read, not judged
    assert not fired("user-unknown-on-compute-node",
                     recorded_paste_facts(S + "bitnami-docker-airflow-53-arbitrary-uid-no-passwd-entry-healthy.txt"))


def test_open_mpi_launcher_without_a_passwd_entry():
    # help-plm-rsh.txt [unknown-user] (Open MPI 4.1.8; PRRTE's help-plm-ssh.txt the same) with a uid
    # filled in: the emitter's own format, no public paste recorded
    text = ("The user (50123) is unknown to the system (i.e. there is no corresponding\n"
            "entry in the password file). Please contact your system administrator\nfor a fix.\n")
    (f,) = fired("user-unknown-on-compute-node", told_facts(text))
    assert f.severity == "error" and "Open MPI's mpirun" in f.message and "the user 50123" in f.message
    assert "getent passwd USER" in f.fix


def test_open_mpi_runtime_unable_to_get_the_username():
    # help-orte-runtime.txt [orte:session:dir:nopwname] as Open MPI 4.1.8 prints it
    text = ("Open MPI was unable to obtain the username in order to create a path\n"
            "for its required temporary directories.  This type of error is usually\n"
            "caused by a transient failure of network-based authentication services\n")
    (f,) = fired("user-unknown-on-compute-node", told_facts(text))
    assert "Open MPI's runtime" in f.message


def test_open_mpi_rank_mapping_is_not_an_unknown_user():
    text = "The rankfile that was used claimed that a host was either not\nallocated or oversubscribed its slots.\n"
    assert not fired("user-unknown-on-compute-node", told_facts(text))
