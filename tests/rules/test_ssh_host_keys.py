"""ssh-host-key-changed (rules/ssh_host_keys.py) on set Q's ticket and another thread's paste, and
ssh-between-nodes-refused keeping the refusals that name no changed key."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts

Q = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_q"


def test_reinstalled_node_names_host_file_and_line(tmp_path):
    gathered = paste_facts(tmp_path, (Q / "phy-clusters-29-node-host-key-changed.txt").read_text(encoding="utf-8"))
    (f,) = fired("ssh-host-key-changed", gathered)
    assert f.severity == "error" and "cu25" in f.message and "/home/USER/.ssh/known_hosts:27" in f.message
    assert "ssh-keygen -R cu25 -f /home/USER/.ssh/known_hosts" in f.fix and "ssh_known_hosts" in f.fix
    assert not fired("ssh-between-nodes-refused", gathered)   # one finding, the one that names the cause


def test_newer_openssh_wording():
    (f,) = fired("ssh-host-key-changed", recorded_paste_facts("ibm-zos-core-1843-remote-host-identification-changed.txt"))
    assert "ec12345a.sanitized.host.ibm.com" in f.message and "/root/.ssh/known_hosts:47" in f.message


def test_verification_failed_alone_stays_with_the_launch_rule():
    gathered = recorded_paste_facts("mpich-4712-host-key-verification-failed.txt")
    assert not fired("ssh-host-key-changed", gathered)
    assert len(fired("ssh-between-nodes-refused", gathered)) == 1
