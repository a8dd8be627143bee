"""pip-externally-managed (SW106) on real pastes of pip's PEP 668 refusal."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts


@pytest.mark.parametrize("name", ["kubeasy-11-pip-externally-managed-ubuntu.txt",
                                  "sixfab-ppp-41-pip-externally-managed-raspbian.txt"])
def test_pips_refusal_of_the_system_python_gets_an_environment_of_ones_own(name):
    [hit] = fired("pip-externally-managed", recorded_paste_facts(name))
    assert hit.severity == "error" and "EXTERNALLY-MANAGED" in hit.message
    assert "python3 -m venv" in hit.fix and "sudo pip" not in hit.fix.split("#")[0]


def test_a_pip_install_that_worked_is_not_refused(tmp_path):
    g = paste_facts(tmp_path, "Collecting numpy\n  Using cached numpy-2.1.0.tar.gz\nSuccessfully installed numpy-2.1.0\n"
                              "error: could not open file (a different error)\n")
    assert not fired("pip-externally-managed", g)
