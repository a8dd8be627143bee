"""FlexNet (FLEXlm) license checkout failures read from real pastes through the paste path `check
--from` uses and the real catalogue (knowledge/messages/flexlm.toml): MATLAB's and lmutil's formats
from public threads, and the near misses that must stay silent (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


# the causes are FlexNet's own explanations: the FLEXnet error table's for -15, the SDK's for -96
@pytest.mark.parametrize("paste, quoted, code, cause", [
    ("matlab-c3nl-cluster-30-license-manager-error-15.txt", "License Manager Error -15", "-15",
     "lmgrd is not started there, or the license path names the wrong port@host or license file"),
    ("flexlm-phplicensewatcher-129-lmstat-hostdown.txt", "License server machine is down", "-96",
     "the license server is not started there, or the license path names the wrong host"),
])
def test_a_license_server_that_does_not_answer_is_an_error(paste, quoted, code, cause):
    (f,) = fired("license-server-unreachable", recorded_paste_facts(paste))
    assert f.severity == "error" and quoted in f.message and f"({code}," in f.message
    assert f.message.endswith(cause)
    assert "lmutil lmstat -a -c PORT@HOST" in f.fix


def test_a_missing_license_file_is_not_a_server_fault():
    # -1 (LM_NOCONFFILE): no license file at all, on a CI runner; nothing was asked of a server
    gathered = recorded_paste_facts("matlab-actions-19-license-file-not-found.txt")
    assert "flexlm:LM_NOCONFFILE" in [s.get("id") for s in gathered["facts"]["ticket"]["symptoms"]]
    assert not fired("license-server-unreachable", gathered)
    assert not fired("license-node-locked-in-use", gathered)


def test_code_minus_9_is_a_warning_naming_both_causes():
    (f,) = fired("license-node-locked-in-use", recorded_paste_facts("matlab-dockerfile-33-license-manager-error-9-username.txt"))
    assert f.severity == "warning" and "-9" in f.message and "hostid" in f.message and "another user" in f.message
    assert "lmutil lmhostid" in f.fix


def test_a_server_that_is_down_is_not_called_node_locked():
    assert not fired("license-node-locked-in-use", recorded_paste_facts("matlab-c3nl-cluster-30-license-manager-error-15.txt"))


def test_every_seat_in_use_is_a_warning_naming_the_code_and_the_license_path():
    # UCL-ARC/rcps-buildscripts#193: COMSOL's block, "Licensed number of users already reached." and FlexNet's -4,132
    (f,) = fired("license-seats-exhausted", recorded_paste_facts("rcps-buildscripts-193-comsol-flexnet-minus-4.txt"))
    assert f.severity == "warning" and "(-4, LM_MAXUSERS" in f.message and "minor code 132" in f.message
    assert f.fix.startswith("lmutil lmstat -c /lustre/shared/ucl/apps/Comsol/comsol53a/multiphysics/license/license.dat -f COMSOL")
    assert "sbatch -L NAME:1" in f.fix


def test_seats_and_server_are_told_apart():
    # -15 (the server did not answer) is not a full pool, and -4 is not a server down
    assert not fired("license-seats-exhausted", recorded_paste_facts("matlab-c3nl-cluster-30-license-manager-error-15.txt"))
    assert not fired("license-server-unreachable", recorded_paste_facts("rcps-buildscripts-193-comsol-flexnet-minus-4.txt"))
