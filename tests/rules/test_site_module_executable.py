"""site-module-missing-executable on public pastes (tests/fixtures/pastes, SOURCES.md there) and on
Slurm's and bash's own words for a command on no PATH directory, recorded on the project's VM."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import PASTES, fired, recorded_paste_facts, told_facts

RECORDED = (PASTES / "slurm-22.05-srun-execve-command-not-on-path.txt").read_text().splitlines()
STEPD, BASH = RECORDED[1], RECORDED[4]   # slurmstepd's execve() line, bash's "command not found"



def test_a_site_module_without_torchrun():
    (f,) = fired("site-module-missing-executable", recorded_paste_facts("cscfi-pytorch-ddp-examples-1-site-module-lacks-torchrun.txt"))
    assert "torchrun" in f.message and "pytorch/2.1" in f.message and f.severity == "warning"
    assert f.fix.startswith("module load pytorch/2.1 && module show pytorch/2.1")
    assert "python3 -m torch.distributed.run" in f.fix and "module spider pytorch" in f.fix


@pytest.mark.parametrize("failure", [STEPD, BASH])
def test_slurms_and_bashs_recorded_words_after_a_module_load(failure):
    assert "torchrun" in failure
    (f,) = fired("site-module-missing-executable", told_facts(f"module load pytorch/2.3\n{failure}\n"))
    assert "pytorch/2.3" in f.message


def test_a_command_the_module_does_not_name_is_not_this_rule():
    assert not fired("site-module-missing-executable", told_facts(f"module load gcc/12 openmpi\n{BASH}\n"))


def test_without_a_module_load_the_recorded_failures_fire_nothing():
    assert not fired("site-module-missing-executable", recorded_paste_facts("slurm-22.05-srun-execve-command-not-on-path.txt"))


@pytest.mark.parametrize("name", [
    "batchspawner-246-slurm-script-module-command-not-found.txt",   # no module command at all: module-command-missing
    "envmodules-192-unable-to-locate-gcc.txt",                      # the load itself failed: module-unknown
])
def test_a_failed_or_missing_module_command_is_another_rules(name):
    assert not fired("site-module-missing-executable", recorded_paste_facts(name))


def test_a_healthy_script_that_loads_modules_fires_nothing():
    healthy = Path(PASTES).parent / "tickets_blind_f" / "gpu-burn-2-makefile-hardcodes-nvcc-healthy.txt"
    assert not fired("site-module-missing-executable", told_facts(healthy.read_text()))
