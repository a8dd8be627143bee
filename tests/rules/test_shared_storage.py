"""shared-filesystem-not-mounted and shared-dir-group-inheritance-missing: no program prints either,
so the user's own sentence (prose.toml) is quoted back at info; set M's tickets and other public
threads (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

from rulekit import PASTES, facts, fired, recorded_paste_facts, told_facts
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import open_paste

M = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_m"


def _ticket(name: str):
    with open_paste([str(M / f"{name}.txt")]) as (root, _r, _n):
        return pipeline.gather(root, Options())


def _said(name: str):
    # a paste whose only content is a sentence: read for its messages (a sentence alone is not refused
    # once catalogued, but the near misses are, so they go through find_messages directly)
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages((PASTES / name).read_text())})


def test_a_file_system_missing_on_the_compute_nodes_is_quoted_at_info():
    (f,) = fired("shared-filesystem-not-mounted", _ticket("marbits-public-30-filesystem-not-mounted-on-compute-nodes"))
    assert f.severity == "info" and "cold02" in f.message and "findmnt -T" in f.fix
    (f,) = fired("shared-filesystem-not-mounted", recorded_paste_facts("cbio-cluster-151-moab-bin-only-on-head-node.txt"))
    assert f.severity == "info" and "compute nodes" in f.message


def test_files_taking_the_creators_group_are_quoted_at_info():
    (f,) = fired("shared-dir-group-inheritance-missing", _ticket("c3nl-cluster-9-group-folders-lack-setgid"))
    assert f.severity == "info" and "aazor" in f.message
    assert "chmod g+s" in f.fix


def test_silent_where_setgid_works_and_only_moved_data_keeps_its_group():
    assert not fired("shared-dir-group-inheritance-missing", _said("archer2-docs-209-setgid-copied-data-keeps-group.txt"))


def test_silent_where_a_shared_file_system_is_only_slow_to_show_files():
    assert not fired("shared-filesystem-not-mounted", _said("tigrlab-admin-560-scratch-not-immediately-visible.txt"))


def test_gpfs_daemon_not_running_on_the_node_is_an_error_with_mmstartup():
    # cBio/cbio-cluster#48: mmautoload did not start the daemon after a reboot; mmstartup fixed it
    (f,) = fired("shared-filesystem-not-mounted", recorded_paste_facts("cbio-cluster-48-gpfs-not-ready-after-reboot.txt"))
    assert f.severity == "error" and "GPFS is not ready to handle commands yet" in f.message
    assert "mmstartup" in f.fix and "mmgetstate" in f.fix and "autoload" in f.fix


def test_gpfs_waiting_for_quorum_is_the_clusters_fault_not_this_nodes_mount():
    # IBM's own example line of 6027-725 (gpfs.toml): the daemon runs and waits for quorum
    said = _said_text("6027-725 The mmfsd daemon is not ready to handle commands yet. Waiting for quorum.")
    assert not fired("shared-filesystem-not-mounted", said)
    assert fired("shared-filesystem-fault", said)


def _said_text(text: str):
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


def test_slurmstepds_chdir_to_tmp_names_the_working_directory_missing_on_the_node():
    # slurmstepd's own line (src/slurmd/slurmstepd/mgr.c @ slurm-25-05-8-1, format string filled in)
    text = ("slurmstepd: error: couldn't chdir to `/scratch/u/run1': No such file or directory: going to /tmp instead\n"
            "Traceback (most recent call last):\n")
    (f,) = fired("shared-filesystem-not-mounted", told_facts(text))
    assert "/scratch/u/run1 does not exist on the node" in f.message and f.severity == "warning"
    assert f.fix.startswith("findmnt -T /scratch/u/run1") and "srun -N1 -p PARTITION --chdir=/tmp ls -ld /scratch/u/run1" in f.fix


def test_not_fired_on_a_chdir_refused_for_permission():
    text = "slurmstepd: error: couldn't chdir to `/root': Permission denied: going to /tmp instead\n"
    assert not fired("shared-filesystem-not-mounted", told_facts(text))
