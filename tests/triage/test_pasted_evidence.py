"""Rules that today read a live fact fire on the pasted message that states the same fact (issue
24): NCCL's "no socket interface found" family for nccl-socket-ifname, torch's DataLoader and
/torch_* shared-memory lines for shm-too-small (wrapped by a mail client, and torch 0.3's form
without an errno), and the shared-memory fixes answer for the place the job runs. Every paste is a
verbatim cut of the public ticket named beside it."""

from __future__ import annotations

import textwrap

import pytest

from conftest import ticket
from hpcdoctor.triage.messages import find_messages
from rulekit import facts, fired, run_rule, with_env

H100 = "h100-kvm-1gpu"


def pasted(text: str, node: str = H100, **changes):
    """A recorded node's facts with what a paste of ``text`` reads, as `check --from` gives them."""
    return facts(node, **{"ticket.symptoms": find_messages(text)}, **changes)


# https://github.com/NVIDIA/nccl/issues/1837 (NCCL 2.27.7): the name matches nothing and NCCL
# fails later on an address it never got, with no WARN of its own.
NCCL_1837 = """[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth2
[trainer3]:twshared1016:1958:1958 [3] NCCL INFO NCCL_SOCKET_IFNAME set to eth2
...
[trainer0|0]:ncclInternalError: Internal check failed.
[trainer0|0]:Last error:
[trainer0|0]:ncclSocketInit: connecting to address  with family 59936 is neither AF_INET(2) nor AF_INET6(10)
"""
# https://github.com/marin-community/marin/issues/7018 (NCCL through JAX/XLA)
MARIN_7018 = """Failed to create NCCL communicator: INTERNAL: ncclCommInitRankConfig(...) failed:
invalid usage ... Last NCCL warning(error): 'Bootstrap : no socket interface found'
"""


def test_no_socket_interface_names_the_value_nccl_was_given():
    (f,) = fired("nccl-socket-ifname", pasted(NCCL_1837))
    assert "NCCL_SOCKET_IFNAME=eth2 (line 1)" in f.message and "line 6" in f.message
    assert f.fix.startswith("unset NCCL_SOCKET_IFNAME")


def test_no_socket_interface_without_the_setting_asks_what_is_up():
    (f,) = fired("nccl-socket-ifname", pasted(MARIN_7018))
    assert "Bootstrap : no socket interface found" in f.message and "line 2" in f.message
    assert f.fix.startswith("ip -brief address show up")


def test_the_setting_alone_is_no_finding():
    # with no failure pasted the rule falls back to the node's interfaces, which a paste lacks
    findings, skipped = run_rule("nccl-socket-ifname", pasted(NCCL_1837.splitlines()[0] + "\n"))
    assert not findings and skipped[0]["reason"].startswith("needs network.interfaces")
    # ncclSocketInit's failure counts only beside the name NCCL was given
    findings, _ = run_rule("nccl-socket-ifname", pasted(NCCL_1837.splitlines()[-1] + "\n"))
    assert not findings


HOPSWORKS = ticket("hopsworks-1557-dataloader-shm-no-space-k8s").read_text(encoding="utf-8")
BUS_LINE = next(line for line in HOPSWORKS.splitlines() if "is killed by signal: Bus error" in line)


def test_a_bus_error_wrapped_in_prose_is_read():
    """hopsworks#1557's line, word-wrapped as a mail client does, so that "Bus" and "error." fall on
    two lines: a needle "bus error" would be on no line; the catalogue's ("is killed by signal") is."""
    prose = "The job died with " + BUS_LINE
    width = prose.index("Bus error") + len("Bus")  # a mail client's column that falls inside the message
    wrapped = "\n".join(textwrap.wrap(prose, width=width)) + "\n"
    assert any(line.endswith("Bus") for line in wrapped.splitlines()), wrapped
    (f,) = fired("shm-too-small", pasted(wrapped))
    assert "bus error" in f.message and "line 1" in f.message


def test_a_dataloader_killed_by_the_oom_killer_is_not_shm():
    """The same line with the signal the OOM killer sends: host memory, not /dev/shm."""
    killed = BUS_LINE.replace("Bus error. It is possible that dataloader's workers are out of shared memory. "
                              "Please try to raise your shared memory limit.", "Killed. ")
    assert "Bus error" not in killed
    findings, skipped = run_rule("shm-too-small", pasted(killed + "\n"))
    assert not findings and skipped  # falls back to the node's /dev/shm, which a paste lacks


def test_torch_03s_unsized_shm_file_is_shm_too_small():
    """pangeo-docker-images#258: "unable to write to file </torch_1394_2747491098>" with no errno,
    as torch before MapAllocator printed it."""
    line = next(line for line in ticket("pangeo-docker-images-258-dataloader-shm-hub").read_text(encoding="utf-8")
                .splitlines() if "unable to write to file" in line)
    assert line == "RuntimeError: unable to write to file </torch_1394_2747491098>"
    (f,) = fired("shm-too-small", pasted(line + "\n"))
    assert "could not be written" in f.message


# The fix answers where the job runs: a recorded node's facts with the environment each place sets.

def _small_shm(env=None, **changes):
    base = {"memory.shm_size_bytes": 64 * 2**20, "torch.installed": True}
    return with_env(H100, env or {}, **base, **changes)


def test_shm_fix_in_a_kubernetes_pod_is_a_memory_emptydir():
    (f,) = fired("shm-too-small", _small_shm({"KUBERNETES_SERVICE_HOST": "10.96.0.1"}))
    assert f.fix.startswith("kubectl edit deployment NAME") and "medium: Memory" in f.fix and "/dev/shm" in f.fix
    assert "\n" not in f.fix and "docker" not in f.fix


def test_shm_fix_in_docker_is_shm_size():
    g = _small_shm()
    g["facts"]["scheduler"]["in_container"] = True
    (f,) = fired("shm-too-small", g)
    assert f.fix.startswith("docker run --shm-size=16g IMAGE") and "\n" not in f.fix


@pytest.mark.parametrize("env", [{"SLURM_JOB_ID": "4242", "SLURM_JOB_NUM_NODES": "1"},
                                 {"APPTAINER_CONTAINER": "/scratch/env.sif"}])
def test_shm_fix_on_a_slurm_node_or_in_apptainer_is_the_sites(env):
    (f,) = fired("shm-too-small", _small_shm(env))
    assert f.fix.startswith("df -h /dev/shm") and "site" in f.fix and "docker" not in f.fix


def test_a_paste_that_says_nothing_of_its_place_gets_every_places_command():
    (f,) = fired("shm-too-small", pasted(BUS_LINE + "\n"))
    lines = f.fix.splitlines()
    assert [line.split()[0] for line in lines] == ["kubectl", "docker", "df"]
    assert not any(line.lstrip().startswith("#") for line in lines)  # commands, not prose


def test_nccl_shm_unusable_in_kubernetes_is_the_emptydir_too():
    text = ticket("nccl-328-shm-open-permission-denied").read_text(encoding="utf-8")
    g = pasted(text)
    g["facts"]["env"]["vars"]["KUBERNETES_SERVICE_HOST"] = "10.96.0.1"
    (f,) = fired("nccl-shm-unusable", g)
    assert f.fix.startswith("kubectl edit deployment") and "chmod" not in f.fix
