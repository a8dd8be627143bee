"""newuidmap-lacks-privilege (rules/id_mapping.py) on set Q's ticket and other threads' pastes."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts

Q = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_q"


def test_eperm_on_the_map_write_names_the_missing_privilege(tmp_path):
    gathered = paste_facts(tmp_path, (Q / "podman-7106-newuidmap-lacks-file-capabilities.txt").read_text(encoding="utf-8"))
    (f,) = fired("newuidmap-lacks-privilege", gathered)
    assert f.severity == "error" and "setuid" in f.message and "getcap /usr/bin/newuidmap" in f.fix


def test_podmans_own_check_is_read_first():
    (f,) = fired("newuidmap-lacks-privilege", recorded_paste_facts("podman-23596-newuidmap-should-have-setuid.txt"))
    assert f.severity == "error" and "neither the setuid bit nor the file capability" in f.message


def test_a_nested_engine_that_cannot_open_the_map_is_only_a_warning():
    (f,) = fired("newuidmap-lacks-privilege", recorded_paste_facts("podman-20336-newuidmap-open-uid-map-denied.txt"))
    assert f.severity == "warning" and "inside another container" in f.message


def test_apptainers_own_wording_is_left_to_its_rule():
    # the localtime bind paste is Apptainer's, with no newuidmap line: nothing of this rule's
    assert not fired("newuidmap-lacks-privilege", recorded_paste_facts("singularity-5465-localtime-not-a-directory.txt"))
