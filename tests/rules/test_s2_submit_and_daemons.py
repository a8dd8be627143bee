"""Set S's classes of issue 24 on real pastes (tests/fixtures/tickets_blind_s, tests/fixtures/pastes/SOURCES.md):
a host's own name that resolves to nothing, a submission refused for its host (PBS's PBSE_BADUSER,
Grid Engine's cut-short refusal), a batch daemon that does not answer, a module function a child shell
cannot import, and a shell's command not found."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_facts

S = "../tickets_blind_s/"


@pytest.mark.parametrize("paste, host", [
    (S + "dietpi-2932-etc-hosts-has-old-hostname.txt", "hostname"),
    (S + "hassbian-scripts-27-hostname-not-in-etc-hosts.txt", "hassbian"),
    ("terry-21-sudo-unable-to-resolve-host.txt", "string-string"),
])
def test_sudo_unable_to_resolve_its_own_host(paste, host):
    (f,) = fired("hostname-not-in-etc-hosts", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"({host})" in f.message and "/etc/hosts" in f.message
    assert f"getent hosts {host}" in f.fix


def test_sudo_translated_and_java_getlocalhost():
    # sudoers' it.po msgstr, and InetAddress.getLocalHost's "<name>: <name>: <gai_strerror>"
    (f,) = fired("hostname-not-in-etc-hosts", told_facts("sudo: impossibile risolvere l'host nodo01\n"))
    assert "(nodo01)" in f.message
    (j,) = fired("hostname-not-in-etc-hosts", told_facts(
        "java.net.UnknownHostException: node17: node17: Name or service not known\n"))
    assert "getLocalHost" in j.message


def test_wget_unable_to_resolve_a_server_is_not_the_own_host():
    findings, _ = run_rule("hostname-not-in-etc-hosts", recorded_paste_facts("offline-vm-wget.txt"))
    assert findings == []


def test_pbs_bad_uid_bare_names_every_cause_and_not_a_missing_user():
    facts = recorded_paste_facts(S + "canu-288-compute-nodes-cannot-submit-bad-uid.txt")
    (f,) = fired("slurm-submit-from-compute-node-refused", facts)
    assert f.severity == "warning" and "not trusted" in f.message and "passwd entry on the PBS server" in f.message
    assert run_rule("user-unknown-on-compute-node", facts)[0] == []


def test_torque_ruserok_names_the_host():
    (f,) = fired("slurm-submit-from-compute-node-refused",
                 recorded_paste_facts("canu-104-torque-ruserok-failed-from-compute-node.txt"))
    assert f.severity == "error" and "(r3node4)" in f.message and "allow_node_submit" in f.fix


def test_torque_user_missing_on_server_is_not_a_host_refusal():
    facts = recorded_paste_facts("phy-clusters-19-torque-user-not-in-server-passwd.txt")
    assert run_rule("slurm-submit-from-compute-node-refused", facts)[0] == []


def test_grid_engine_refusal_cut_short():
    (f,) = fired("slurm-submit-from-compute-node-refused",
                 recorded_paste_facts(S + "canu-1846-compute-node-not-a-submit-host.txt"))
    assert f.severity == "error" and "qconf -ss" in f.fix
    # the full text still reads through its own entry, not the cut one
    (g,) = fired("slurm-submit-from-compute-node-refused", recorded_paste_facts("canu-404-sge-no-submit-host.txt"))
    assert g.evidence["message"] == "submit_host:sge-no-submit-host"


def test_lsf_lim_down():
    (f,) = fired("batch-system-not-in-service", recorded_paste_facts(S + "fics-cluster-guide-14-lsf-replaced-by-slurm.txt"))
    assert f.severity == "error" and "LSF" in f.message and "no longer runs" in f.message and "lsid" in f.fix


def test_exported_module_function_in_italian_and_english():
    (f,) = fired("exported-module-function-breaks-shell",
                 recorded_paste_facts(S + "linter-pylama-72-environment-modules-bash-function-import.txt"))
    assert f.severity == "warning" and f.evidence["function"] == "module" and "BASH_FUNC_module%%" in f.fix


def test_a_script_missing_bc_is_a_hint_naming_the_script():
    (f,) = fired("required-program-not-installed", recorded_paste_facts(S + "c3nl-cluster-32-bc-missing-on-compute-nodes.txt"))
    assert f.severity == "info" and "/apps/software/fsl/5.0.10/bin/fsl_sub" in f.message and "command -v bc" in f.fix


def test_command_not_found_forms_of_other_shells():
    for line, prog in (("/usr/bin/dash: 1: bc: not found\n", "bc"), ("zsh:1: command not found: bc\n", "bc"),
                       ("fish: Unknown command: bc\n", "bc")):
        (f,) = fired("required-program-not-installed", told_facts(line))
        assert f.evidence["program"] == prog
