"""slurmd-spool-broken on slurmstepd's own lines about its SlurmdSpoolDir (src/slurmd/slurmstepd/mgr.c
and task.c @ 284c3b95), replayed from public pastes (tests/fixtures/pastes, SOURCES.md there) and the
format strings."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, told_facts
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, script", [
    ("arjunausers-46-slurmd-tmp-script-missing.txt", "/tmp/slurmd/job00089/slurm_script"),
    ("arjunausers-20-execve-slurm-script-missing.txt", "/tmp/slurmd/job2997813/slurm_script"),
])
def test_the_script_slurmstepd_wrote_is_gone(paste, script):
    (f,) = fired("slurmd-spool-broken", recorded_paste_facts(paste))
    assert f.severity == "error" and f"({script})" in f.message and "every batch job there fails at once" in f.message
    # the fix looks at the spool the line names, not the default one
    assert "findmnt -T /tmp/slurmd   # on the node" in f.fix and "df -h /tmp/slurmd" in f.fix
    assert "sbatch --exclude=NODE job.sh" in f.fix


def test_permission_denied_is_said_less_firmly():
    # EACCES from execve() may also be the script's #! interpreter (execve(2)), so a warning
    (f,) = fired("slurmd-spool-broken", recorded_paste_facts("ansible-slurm-37-spool-undefined-permission-denied.txt"))
    assert f.severity == "warning" and "Permission denied" in f.message and "interpreter" in f.message
    assert "findmnt -T /var/lib/slurm/slurmctld" in f.fix


@pytest.mark.parametrize("entry", [
    "stepd-batch-dir-mkdir-failed", "stepd-batch-script-open-failed", "stepd-batch-setup-failed", "drain-slurmd-spool-full",
])
def test_each_spool_failure_slurmstepd_prints(entry):
    family = next(fam for fam in messages.families() if fam.id == "slurm")
    example = next(e.get("example") for e in family.entries if e.key == entry)
    (f,) = fired("slurmd-spool-broken", told_facts(example + "\n"))
    assert f.severity == "error" and "SlurmdSpoolDir" in f.message


@pytest.mark.parametrize("paste", [
    "slurm-22.05-srun-execve-command-not-on-path.txt",          # execve() of a command not on PATH
    "batchspawner-246-slurm-script-module-command-not-found.txt",  # the spool's script ran, and failed inside
    "autosubmit-485-invalid-qos-default-queue.txt",
])
def test_silent_when_the_spool_did_its_job(paste):
    assert not fired("slurmd-spool-broken", recorded_paste_facts(paste))


def test_the_command_not_on_path_entry_keeps_its_lines():
    ids = {s["id"] for s in find_messages("slurmstepd-vm: error: execve(): torchrun: No such file or directory\n")}
    assert ids == {"slurm:stepd-execve-failed"}
    ids = {s["id"] for s in find_messages("slurmstepd: error: execve(): /tmp/slurmd/job00089/slurm_script: No such file or directory\n")}
    assert ids == {"slurm:stepd-batch-script-exec-failed"}
