"""scheduler-config-broken, batch-daemon-already-running and scheduler-commands-not-installed on set T's
pastes, on output recorded from Slurm 22.05.8's own binaries and the shells on the VM
(tests/fixtures/pastes/SOURCES.md), and silent on healthy Slurm output and on other commands not found."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts

SET_T = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_t"


def _ticket(tmp_path, name):
    return paste_facts(tmp_path, (SET_T / name).read_text())


def test_slurm_parse_error_names_the_file_and_line(tmp_path):
    (f,) = fired("scheduler-config-broken", _ticket(tmp_path, "alan-cluster-15-slurm-conf-parse-error.txt"))
    assert f.severity == "error" and "/etc/slurm/slurm.conf line 118" in f.message
    assert "administrators" in f.message and "sed -n '118p' /etc/slurm/slurm.conf" in f.fix


def test_recorded_slurm_config_failures_fire_on_the_line_that_says_where():
    # sinfo 22.05.8: the parse error comes before the fatal line, which alone would not name the file
    (f,) = fired("scheduler-config-broken", recorded_paste_facts("slurm-22.05-config-parse-errors.txt"))
    assert "parse.conf line 3" in f.message and f.evidence["ticket.line"] == 2
    # the fix reads the file the line names, not the default path
    assert "sed -n '3p' /tmp/t2slurm/parse.conf" in f.fix and "SLURM_CONF=/tmp/t2slurm/parse.conf scontrol show config" in f.fix


def test_configless_without_a_source_is_its_own_answer():
    (f,) = fired("scheduler-config-broken", recorded_paste_facts("slurm-22.05-configless-no-source.txt"))
    assert "configless" in f.message and "_slurmctld._tcp" in f.fix


def test_another_pbs_mom_running(tmp_path):
    (f,) = fired("batch-daemon-already-running", _ticket(tmp_path, "openpbs-2517-another-pbs-mom-running.txt"))
    assert f.severity == "error" and "mom.lock" in f.message
    assert f.fix.startswith("pgrep -a pbs_mom") and "mom_logs" in f.fix


def test_slurmd_port_held_names_the_port():
    (f,) = fired("batch-daemon-already-running", recorded_paste_facts("slurmd-22.05-listen-port-in-use.txt"))
    assert "16818" in f.message and "ss -ltnp 'sport = :16818'" in f.fix


def test_scheduler_client_not_on_path(tmp_path):
    (f,) = fired("scheduler-commands-not-installed", _ticket(tmp_path, "rslurm-32-no-slurm-commands-on-this-machine.txt"))
    assert f.severity == "warning" and "squeue" in f.message


def test_recorded_shells_and_python_missing_clients():
    gathered = recorded_paste_facts("shells-scheduler-client-not-on-path.txt")
    (f,) = fired("scheduler-commands-not-installed", gathered)
    assert "squeue" in f.message
    ids = {s["id"] for s in gathered["facts"]["ticket"]["symptoms"]}
    assert {"sched_clients:shell-scheduler-client-not-found", "sched_clients:python-scheduler-client-file-not-found"} <= ids
    # the generic command-not-found entry leaves batch clients to this family
    assert "shell:command-not-found" not in ids


@pytest.mark.parametrize("paste", ["slurm-22.05-srun-execve-command-not-on-path.txt", "gooseslurm-32-scontrol-show-job-running.txt"])
def test_silent_on_other_commands_not_found_and_healthy_slurm(paste):
    gathered = recorded_paste_facts(paste)
    for sym in ("scheduler-config-broken", "batch-daemon-already-running", "scheduler-commands-not-installed"):
        assert not fired(sym, gathered), sym


# --- a slurm.conf key of a later Slurm than the reader (slurm-client-library-older-than-config) --------

def test_drmaa_run_linked_to_an_old_libslurm_names_the_key_and_its_release():
    # https://github.com/natefoo/slurm-drmaa/issues/20: PriorityWeightTRES is in read_config.c from slurm-15-08-0-1
    facts = recorded_paste_facts("slurm-drmaa-20-tres-keys-old-libslurm.txt")
    (f,) = fired("slurm-client-library-older-than-config", facts)
    assert f.severity == "error"
    assert "PriorityWeightTRES is a slurm.conf key since Slurm 15.08: drmaa-run's libslurm is older" in f.message
    assert 'ldd "$(command -v drmaa-run)" | grep -i slurm' in f.fix and "--with-slurm-lib" in f.fix
    # the file is not broken for the site's own commands: scheduler-config-broken stays silent
    assert not fired("scheduler-config-broken", facts)


def test_a_recorded_22_05_client_reading_a_23_02_key():
    # sinfo 22.05.8 on a slurm.conf holding MaxBatchRequeue (read_config.c from slurm-23-02-0-1)
    facts = recorded_paste_facts("slurm-22.05-conf-key-of-later-release.txt")
    (f,) = fired("slurm-client-library-older-than-config", facts)
    assert "MaxBatchRequeue is a slurm.conf key since Slurm 23.02" in f.message and "22.05 or earlier" in f.message
    assert "sinfo --version" in f.fix
    assert not fired("scheduler-config-broken", facts)


def test_a_misspelt_key_stays_scheduler_config_broken():
    facts = recorded_paste_facts("slurm-22.05-config-parse-errors.txt")  # Frobnicate=1: no release knows it
    assert not fired("slurm-client-library-older-than-config", facts)
    assert fired("scheduler-config-broken", facts)


def test_keys_every_release_knows_or_dropped_ones_are_not_a_later_release():
    # the parse_config.c format filled in: SelectType is in every release read; ChosLoc was dropped in 20.11
    for key in ("SelectType", "ChosLoc", "PriorityWeightTRESS"):
        text = f"srun: error: _parse_next_key: Parsing error at unrecognized key: {key}\n"
        facts = told_facts(text)
        assert not fired("slurm-client-library-older-than-config", facts), key
        assert fired("scheduler-config-broken", facts), key


def test_a_key_a_later_slurm_dropped_is_named_by_scheduler_config_broken():
    # the parse_config.c format filled in: CacheGroups is in read_config.c up to 20.11 and gone from slurm-21-08-0-1
    (f,) = fired("scheduler-config-broken", told_facts(
        "sinfo: error: _parse_next_key: Parsing error at unrecognized key: CacheGroups\n"
        "sinfo: fatal: Unable to process configuration file\n"))
    assert "CacheGroups is a key Slurm 21.08 dropped" in f.message
