"""Slurm's clients refusing a request for the cluster's configuration or the environment they
inherited (rules/slurm_client_env.py), on real public pastes, on blind set V's tickets, and on what
the Debian slurm-wlm 22.05.8 clients printed on the development VM (tests/fixtures/pastes/SOURCES.md).
Lines no paste shows are the emitter's format strings filled in, marked so below."""

from __future__ import annotations

import pytest

from conftest import ROOT
from rulekit import fired, recorded_paste_facts, told_facts

BLIND_V = ROOT / "tests" / "fixtures" / "tickets_blind_v"


def _ticket(name: str) -> str:
    return (BLIND_V / f"{name}.txt").read_text(encoding="utf-8")


# --- accounting storage ----------------------------------------------------------------------------

@pytest.mark.parametrize("paste", ["jetstream-cluster-12-sacct-accounting-disabled.txt",
                                   "snakemake-slurm-38-sacct-accounting-disabled.txt",
                                   "ansible-slurm-54-sacctmgr-not-slurmdbd.txt",
                                   "slurm-22.05-accounting-storage-disabled.txt"])
def test_accounting_commands_refused_for_no_accounting_storage(paste):
    (f,) = fired("slurm-accounting-disabled", recorded_paste_facts(paste))
    assert f.severity == "error" and "no accounting storage" in f.message
    assert "AccountingStorageType" in f.fix and "squeue" in f.fix


def test_the_galaxy_ticket_retyped_in_capitals_is_read():
    (f,) = fired("slurm-accounting-disabled", told_facts(_ticket("galaxy-9927-slurm-accounting-not-configured")))
    assert "SLURM accounting storage is disabled" in f.message


def test_sacct_completion_alone_names_jobcomptype():
    # format string of src/sacct/options.c line 934 as the recorded 22.05.8 sacct -c printed it
    (f,) = fired("slurm-accounting-disabled", told_facts("$ sacct -c\nSlurm job completion is disabled\n"))
    assert "JobCompType" in f.message and "sacct -j JOBID" in f.fix


@pytest.mark.parametrize("text", [
    # slurmdbd configured but not answering: another fault, read without this finding
    "sacct: error: Problem talking to the database: Connection refused\n",
    # the accounting guide's words in a question, not a client's refusal
    "How do I enable accounting storage for sacct on my cluster? AccountingStorageType=accounting_storage/slurmdbd\n",
    # sprio's refusal is about the priority plugin, not accounting
    "You are not running a supported priority plugin\n(priority/basic).\nOnly 'priority/multifactor' is supported.\n",
])
def test_near_misses_are_not_accounting_disabled(text):
    assert not fired("slurm-accounting-disabled", told_facts(text))


# --- inherited environment -------------------------------------------------------------------------

def test_hostfile_forcing_arbitrary_distribution_in_blind_v():
    (f,) = fired("slurm-inherited-env-conflict", told_facts(_ticket("esm-tools-1148-hostfile-forces-arbitrary-distribution")))
    assert f.severity == "error" and "SLURM_HOSTFILE" in f.message and "incompatable" in f.message
    assert "unset SLURM_HOSTFILE" in f.fix


def test_the_later_spelling_is_read_too():
    (f,) = fired("slurm-inherited-env-conflict", recorded_paste_facts("cloudai-746-nodes-incompatible-arbitrary.txt"))
    assert "SLURM_HOSTFILE" in f.message and "drop --nodes" in f.message


@pytest.mark.parametrize("paste", ["snakemake-slurm-75-srun-mem-variables-exclusive.txt",
                                   "slurm-22.05-inherited-environment-conflicts.txt"])
def test_srun_refusing_inherited_memory_variables(paste):
    (f,) = fired("slurm-inherited-env-conflict", recorded_paste_facts(paste))
    assert "SLURM_MEM_PER_CPU" in f.message and "env | grep" in f.fix


def test_recorded_hostfile_that_cannot_be_read():
    text = ("srun: error: slurm_allocate_resources error opening file /tmp/v1s/nonexistent, No such file or directory\n"
            "srun: error: Failure getting NodeNames from hostfile\n")   # lines of slurm-22.05-inherited-environment-conflicts.txt
    (f,) = fired("slurm-inherited-env-conflict", told_facts(text))
    assert "SLURM_HOSTFILE" in f.message and "line 2" in f.message


@pytest.mark.parametrize("line", [
    # format strings of src/srun/allocate.c existing_allocation(), filled in (no public paste found)
    "srun: error: Slurm job 4242 has expired",
    "srun: error: Unable to confirm allocation for job 4242: Invalid job id specified",
])
def test_a_stale_slurm_job_id(line):
    (f,) = fired("slurm-inherited-env-conflict", told_facts(line + "\nsrun: Check SLURM_JOB_ID environment variable. Expired or invalid job 4242\n"))
    assert "SLURM_JOB_ID" in f.message and "unset SLURM_JOB_ID" in f.fix


@pytest.mark.parametrize("paste", [
    # the controller did not answer: the "Check SLURM_JOB_ID" hint is not a stale variable
    "arjuna-100-srun-confirm-allocation-controller-down.txt",
    # two memory options on sbatch's own command line: the user's request, read with rules = []
    "dask-jobqueue-698-mem-options-on-command-line.txt",
    # unknown options and options slurm.conf does not enable: read, no environment finding
    "slurm-22.05-client-options-and-configuration.txt",
])
def test_near_misses_are_not_an_inherited_environment(paste):
    assert not fired("slurm-inherited-env-conflict", recorded_paste_facts(paste))


def test_the_controller_down_paste_still_reads_as_unreachable():
    assert fired("slurm-controller-unreachable", recorded_paste_facts("arjuna-100-srun-confirm-allocation-controller-down.txt"))


def test_the_recorded_unknown_options_are_read_not_refused():
    from hpcdoctor.triage.messages import find_messages

    text = (ROOT / "tests" / "fixtures" / "pastes" / "slurm-22.05-client-options-and-configuration.txt").read_text()
    ids = {s["id"] for s in find_messages(text)}
    assert {"slurm_client_env:unrecognized-option", "slurm_client_env:invalid-short-option",
            "slurm_client_env:container-needs-interactive-step", "slurm_client_env:spec-resources-not-allowed"} <= ids
    assert not [i for i in ids if i == "slurm:unlisted"], ids


# --- slurmdbd unreachable --------------------------------------------------------------------------

def test_sacct_against_a_localhost_slurmdbd_names_host_port_and_the_localhost_cause():
    # https://github.com/Azure/az-hop/issues/1857: AccountingStorageHost=localhost on the OnDemand node
    (f,) = fired("slurmdbd-unreachable", recorded_paste_facts("az-hop-1857-sacct-slurmdbd-localhost.txt"))
    assert f.severity == "error" and "slurmdbd at localhost:6819 (Connection refused)" in f.message
    assert "AccountingStorageHost=localhost is right only on the node where slurmdbd runs" in f.message
    assert "scontrol show config | grep -i AccountingStorage" in f.fix and "systemctl status slurmdbd" in f.fix
    assert "ss -ltnp | grep ':6819 '" in f.fix


def test_each_recorded_client_wording_is_slurmdbd_unreachable():
    # Debian slurm-wlm 22.05.8 sacct, sacctmgr, sreport, squeue --clusters with nothing on 6819
    (f,) = fired("slurmdbd-unreachable", recorded_paste_facts("slurm-22.05-slurmdbd-unreachable.txt"))
    assert "localhost:6819" in f.message
    for text in ("sacctmgr: error: Sending PersistInit msg: Connection refused\n",
                 "sreport: fatal: Problem connecting to the database: Connection refused\n",
                 "squeue: error: DBD_GET_CLUSTERS failure: Connection refused\n",
                 # Slurm 17.11-20.02's wordings (src/common/slurm_persist_conn.c, accounting_storage_slurmdbd.c),
                 # the format strings filled in: no public paste of them recorded here
                 "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to dbd01:6819: Connection timed out\n",
                 "sacctmgr: error: slurmdbd: DBD_GET_ASSOCS failure: Connection refused\n"):
        assert fired("slurmdbd-unreachable", told_facts(text)), text


def test_a_timeout_points_at_the_host_or_firewall():
    # format string of src/common/persist_conn.c line 662, filled in
    (f,) = fired("slurmdbd-unreachable", told_facts(
        "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to "
        "host:dbd01.cluster:6819: Connection timed out\n"))
    assert "dbd01.cluster:6819" in f.message and "firewall" in f.message and "is this node itself" not in f.message


@pytest.mark.parametrize("text", [
    # a federated controller's persistent connection (slurmctld's port), not slurmdbd's
    "slurmctld: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:ctl2:6817: Connection refused\n",
    # slurmdbd reached, and it answered with an error: not unreachable
    "sacctmgr: error: slurm_persist_conn_open: Something happened with the receiving/processing of the persistent "
    "connection init message to dbd01:6819: Invalid authentication credential\n",
    # accounting not configured at all: slurm-accounting-disabled's case
    "Slurm accounting storage is disabled\n",
])
def test_near_misses_are_not_slurmdbd_unreachable(text):
    assert not fired("slurmdbd-unreachable", told_facts(text))


def test_accounting_disabled_is_not_answered_as_unreachable_and_back():
    disabled = recorded_paste_facts("slurm-22.05-accounting-storage-disabled.txt")
    assert fired("slurm-accounting-disabled", disabled) and not fired("slurmdbd-unreachable", disabled)
    down = recorded_paste_facts("slurm-22.05-slurmdbd-unreachable.txt")
    assert fired("slurmdbd-unreachable", down) and not fired("slurm-accounting-disabled", down)
