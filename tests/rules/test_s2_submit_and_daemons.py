"""Set S's classes of issue 24 on real pastes (tests/fixtures/tickets_blind_s, tests/fixtures/pastes/SOURCES.md):
a host's own name that resolves to nothing, a submission refused for its host (PBS's PBSE_BADUSER,
Grid Engine's cut-short refusal), a batch daemon that does not answer, a module function a child shell
cannot import, and a shell's command not found."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rulekit import facts, fired, recorded_paste_facts, run_rule, told_facts
from hpcdoctor.checks import own_name
from hpcdoctor.facts import Unknown

S = "../tickets_blind_s/"
PASTES = Path(__file__).resolve().parents[1] / "fixtures" / "pastes"


def _told(name: str):
    """A near miss the paste path refuses (nothing in it is tool output it reads), read for its messages."""
    return told_facts((PASTES / name).read_text(encoding="utf-8"))


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
    # wget's "unable to resolve host address 'download.pytorch.org'": a server's name, not this host's
    findings, _skipped = run_rule("hostname-not-in-etc-hosts", recorded_paste_facts("offline-vm-wget.txt"))
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
    assert not fired("slurm-submit-from-compute-node-refused", facts)


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


def test_grid_engine_and_torque_daemons_not_answering():
    # the formats of daimh/sge's MSG_GDI_UNABLE_TO_CONNECT_SUS and TORQUE's qstat.c with PBSE_SERVER_NOT_FOUND
    (f,) = fired("batch-system-not-in-service", told_facts('error: unable to contact qmaster using port 6444 on host "master"\n'))
    assert "Grid Engine" in f.message and "act_qmaster" in f.fix
    (t,) = fired("batch-system-not-in-service",
                 told_facts("qstat: cannot connect to server head (errno=15133) Could not connect to batch server\n"))
    assert "TORQUE" in t.message


def test_trqauthd_refusing_the_user_is_not_a_server_down():
    # "cannot connect to server ... (errno=15008) trqauthd unable to authenticate": the user's lookup, not pbs_server
    assert not fired("batch-system-not-in-service", _told("phy-clusters-34-trqauthd-cannot-authenticate.txt"))


def test_exported_module_function_in_italian_and_english():
    (f,) = fired("exported-module-function-breaks-shell",
                 recorded_paste_facts(S + "linter-pylama-72-environment-modules-bash-function-import.txt"))
    assert f.severity == "warning" and f.evidence["function"] == "module" and "BASH_FUNC_module%%" in f.fix


@pytest.mark.parametrize("paste, func", [
    ("cerebro-shell-12-bash-cannot-import-module-function.txt", "module"),
    ("3d-dna-40-bash-4.0-old-module-function-format.txt", "module"),
])
def test_exported_module_function_other_threads(paste, func):
    (f,) = fired("exported-module-function-breaks-shell", recorded_paste_facts(paste))
    assert f.severity == "warning" and f.evidence["function"] == func


def test_exporting_the_module_function_on_purpose_is_silent():
    assert not fired("exported-module-function-breaks-shell",
                     _told("envmodules-109-export-module-function-request-healthy.txt"))


def test_a_script_missing_bc_is_a_hint_naming_the_script():
    (f,) = fired("required-program-not-installed", recorded_paste_facts(S + "c3nl-cluster-32-bc-missing-on-compute-nodes.txt"))
    assert f.severity == "info" and "/apps/software/fsl/5.0.10/bin/fsl_sub" in f.message and "command -v bc" in f.fix


def test_a_command_with_its_own_entry_is_left_to_its_rule():
    # conda not on PATH is conda-activate-not-initialised's (shell.toml's conda-not-found), not a missing program
    assert not fired("required-program-not-installed",
                     recorded_paste_facts("bash-5.2-batch-script-conda-command-not-found.txt"))


def test_command_not_found_forms_of_other_shells():
    for line, prog in (("/usr/bin/dash: 1: bc: not found\n", "bc"), ("zsh:1: command not found: bc\n", "bc"),
                       ("fish: Unknown command: bc\n", "bc")):
        (f,) = fired("required-program-not-installed", told_facts(line))
        assert f.evidence["program"] == prog


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


UNRESOLVED = json.loads((PASTES / "getaddrinfo-debian12-vm-name-unresolved.json").read_text())


def test_the_own_name_lookup_on_a_node():
    # the resolver's real answers on the development VM: localhost from /etc/hosts, and a name nothing knows
    assert own_name.lookup("localhost")["resolves"] is True
    assert UNRESOLVED == {"resolves": False, "error": "Name or service not known"}
    got = own_name.facts_of("node-renamed-s2", UNRESOLVED)
    (f,) = fired("hostname-not-in-etc-hosts", facts("h100-kvm-1gpu", own_name=got))
    assert f.severity == "warning" and "node-renamed-s2" in f.message and "Name or service not known" in f.message
    assert not fired("hostname-not-in-etc-hosts",
                     facts("h100-kvm-1gpu", own_name=own_name.facts_of("vm", own_name.lookup("localhost"))))


def test_an_unreadable_lookup_is_unknown_not_a_pass():
    assert isinstance(own_name.facts_of("vm", {"addresses": []}), Unknown)
    findings, skipped = run_rule("hostname-not-in-etc-hosts", facts("h100-kvm-1gpu", own_name=Unknown("not recorded")))
    assert findings == [] and skipped
