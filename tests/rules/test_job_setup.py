"""conda-activate-not-initialised and master-port-in-use on verbatim cuts of public threads and on
output recorded here (tests/fixtures/pastes, SOURCES.md there): each tool's own words decide the fix."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts


@pytest.mark.parametrize("paste", [
    "conda-8536-slurm-job-commandnotfounderror.txt",   # conda 4.6-23.10: CommandNotFoundError in a Slurm job
    "veba-195-sbatch-wrap-run-conda-init.txt",          # conda 23.11+: CondaError from sbatch --wrap
])
def test_conda_refusing_activate_is_answered_with_conda_sh(paste):
    (f,) = fired("conda-activate-not-initialised", recorded_paste_facts(paste))
    assert f.severity == "error" and "conda's shell function was never defined" in f.message
    assert f.fix.startswith('source "$(conda info --base)/etc/profile.d/conda.sh"   # in the script')


def test_conda_4_4_names_its_installation_and_the_fix_sources_that_file():
    (f,) = fired("conda-activate-not-initialised", recorded_paste_facts("micone-107-conda-4.4-shell-not-configured.txt"))
    # conda 4.4-4.5 had no `conda info --base`: the path the refusal printed is the one to source
    assert f.fix.startswith("source /home/dileep/anaconda3/etc/profile.d/conda.sh")


@pytest.mark.parametrize("paste, line", [
    ("sd-installer-mac-15-micromamba-shell-not-initialized.txt", 1),   # micromamba 1.x
    ("leakpro-181-micromamba-2-ci-shell-not-initialized.txt", 2),      # micromamba 2.x, the critical line first
])
def test_micromamba_refusal_is_answered_with_its_shell_hook(paste, line):
    (f,) = fired("conda-activate-not-initialised", recorded_paste_facts(paste))
    assert f"line {line}:" in f.message and "micromamba's shell function" in f.message
    assert f.fix.startswith('eval "$(micromamba shell hook --shell bash)"')


def test_conda_not_on_the_jobs_path_is_the_sites_module_not_conda_sh():
    (f,) = fired("conda-activate-not-initialised", recorded_paste_facts("bash-5.2-batch-script-conda-command-not-found.txt"))
    assert "has no conda on PATH" in f.message and f.severity == "info"   # also a skipped install step (set M's healthy control)
    assert f.fix.startswith("module spider conda")


def test_silent_on_a_healthy_conda_environment():
    # collect_env of a conda environment: conda named on many lines, nothing refused
    assert not fired("conda-activate-not-initialised", recorded_paste_facts("pytorch-35646-pip-and-conda-same-torch-healthy.txt"))


@pytest.mark.parametrize("paste, port", [
    ("tune-a-video-90-server-socket-29500-in-use.txt", "29500"),   # socket.cpp, inside "failed to listen"
    ("vlm-r1-289-libuv-eaddrinuse-29500.txt", "29500"),            # libuv back end, useIpv6: 0
    ("torch-2.13-tcpstore-twice-libuv.txt", "29500"),              # recorded: 2.13.0's default back end
    ("torch-2.13-tcpstore-twice-legacy-socket.txt", "29500"),      # recorded: use_libuv=False, [W socket.cpp] lines
])
def test_port_held_by_another_process_names_the_port_and_a_port_per_job(paste, port):
    (f,) = fired("master-port-in-use", recorded_paste_facts(paste))
    assert f.severity == "error" and f"could not listen on port {port}" in f.message
    assert f.fix.startswith("export MASTER_PORT=$((10000 + ${SLURM_JOB_ID:-$$} % 50000))")


def test_under_torchrun_the_port_is_set_through_its_own_variable():
    # torchrun reads --master-port (PET_MASTER_PORT), not MASTER_PORT; its OMP_NUM_THREADS notice says it ran
    (f,) = fired("master-port-in-use", recorded_paste_facts("dist-kd-10-torchrun-master-port-in-use.txt"))
    assert "port 25641" in f.message
    assert f.fix.startswith("export PET_MASTER_PORT=") and "--standalone" in f.fix


def test_a_bare_address_already_in_use_is_answered_at_info():
    (f,) = fired("master-port-in-use", recorded_paste_facts("tacotron2-181-tcp-rendezvous-address-already-in-use.txt"))
    assert f.severity == "info" and "usual cause" in f.message


def test_another_errno_is_not_a_port_in_use():
    # errno 13 on port 98: a privileged port, not one another process holds
    facts = recorded_paste_facts("time-llm-158-master-port-98-permission-denied.txt")
    assert "torch:store-server-listen-failed" in {s["id"] for s in facts["facts"]["ticket"]["symptoms"]}
    assert not fired("master-port-in-use", facts)


def test_mamba_1_is_answered_with_conda_activate_as_its_message_advises():
    (f,) = fired("conda-activate-not-initialised", recorded_paste_facts("mamba-1819-mamba1-activate-in-script.txt"))
    assert "mamba activate ran" in f.message and "conda activate works once conda.sh is sourced" in f.message
    assert f.fix.startswith(_CONDA_SH_FIX) and "conda activate in place of mamba activate" in f.fix


_CONDA_SH_FIX = 'source "$(conda info --base)/etc/profile.d/conda.sh"'
