"""Set X's healthy controls from simulation input, a TPU lock and MPICH's PMI-2 probe: each emitter's own
words are read (a catalogued message, rules = []) and answered with no error or warning."""

from __future__ import annotations

import pytest

from conftest import alarms, report_of
from hpcdoctor.triage.messages import find_messages
from rulekit import PASTES


@pytest.mark.parametrize("name,symptom", [
    ("openmm-2308-particle-coordinate-nan-healthy.txt", "md_engines:openmm-particle-coordinate-nan"),
    ("moltemplate-76-columns-atom-style-healthy.txt", "moltemplate:columns-atom-style-mismatch"),
    ("pytorch-xla-3214-libtpu-in-use-healthy.txt", "frameworks:libtpu-in-use"),
    ("mpich-6687-pmi2-nonexist-key-harmless-healthy.txt", "cray_mpich:pmi2-nonexist-key-lookup"),
])
def test_simulation_input_tpu_lock_and_pmi_probe_pastes_are_read_and_stay_quiet(name, symptom):
    doc = report_of("check", "--from", str(PASTES / name))
    assert symptom in str(doc)
    assert alarms(PASTES / name) == {}


@pytest.mark.parametrize("text,symptom", [
    # lttree.py's InputError as Python prints it, wrapped where the source wraps it (moltemplate v2.22.5)
    ("moltemplate.InputError: Error: The number of columns in your data file does not\n"
     "       match the LAMMPS atom_style you selected.\n", "moltemplate:columns-atom-style-mismatch"),
    # tpu_initializer_helper.cc's later wording with a pid (filled in)
    ("libtpu.so is already in use by process with pid 4242. Not attempting to load libtpu.so in this process.",
     "frameworks:libtpu-in-use"),
    # XLA's ABORTED status, pid filled in
    ("jaxlib.xla_extension.XlaRuntimeError: ABORTED: The TPU is already in use by process with pid 22589. "
     "Not attempting to load libtpu.so in this process.", "frameworks:tpu-already-in-use"),
    ("openmm.OpenMMException: Energy or force at minimization starting point is infinite or NaN.",
     "md_engines:openmm-minimization-start-nan"),
])
def test_other_wordings_of_the_same_emitters_are_read_and_feed_no_rule(text, symptom):
    found = [s for s in find_messages(text) if s["id"] == symptom]
    assert found and found[0]["rules"] == []
