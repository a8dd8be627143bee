"""Set R's class of issue 24: slurmctld's registration drain reasons (slurm-node-low-realmemory, slurm-
node-registration-invalid), through the real catalogue and the paste path. Pastes are set R's and
the public ones in tests/fixtures/pastes/SOURCES.md; near misses from the same emitters stay silent."""

from __future__ import annotations


from conftest import FIXTURES
from rulekit import fired, paste_facts, told_facts



def _r(tmp_path, name):
    return paste_facts(tmp_path, (FIXTURES / "tickets_blind_r" / f"{name}.txt").read_text(encoding="utf-8"))


# -- Slurm's registration drain reasons ---------------------------------------------------------

def test_low_realmemory_drain_names_slurmd_c_and_resume(tmp_path):
    (f,) = fired("slurm-node-low-realmemory", _r(tmp_path, "citc-terraform-11-slurm-realmemory-above-node-memory"))
    assert f.severity == "error" and "Low RealMemory" in f.message and "RealMemory" in f.message
    assert "ssh compute001 slurmd -C" in f.fix and "scontrol update nodename='compute[001-003]' state=resume" in f.fix


def test_a_gpu_count_below_gres_is_the_other_registration_drain(tmp_path):
    # a node's lines as public cluster notes quote them (find_string "count reported lower than configured", 2026-11-27)
    text = ("State=IDLE+DRAIN+INVALID_REG\n"
            "Reason=gres/gpu count reported lower than configured (0 < 2)\n")
    (f,) = fired("slurm-node-registration-invalid", told_facts(text))
    assert f.severity == "error" and "(GRES)" in f.message and "slurmd reported 0, slurm.conf declares 2" in f.message
    assert "nvidia-smi -L" in f.fix and "state=resume" in f.fix
    # and the memory drain is the other rule's alone
    assert not fired("slurm-node-registration-invalid", _r(tmp_path, "citc-terraform-11-slurm-realmemory-above-node-memory"))


def test_realmemory_in_a_sentence_is_not_a_drain():
    # a slurm.conf comment quoted in public infrastructure code (find_string "Low RealMemory", 2026-11-27)
    text = ("# m7a.2xlarge: 8 vCPU / 32 GB. RealMemory=31000 MB (slightly below reported\n"
            "# ~31178 MB) prevents INVALID_REG drain from \"Low RealMemory\" check.\n")
    assert not fired("slurm-node-low-realmemory", told_facts(text))
