"""apptainer-loop-devices-unavailable: the setuid starter's loop-device failures: Singularity 3.7.3's
chain in a real paste (sylabs/singularity#67), Apptainer v1.4.5's and Singularity 2.6.1's words as
their sources print them."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule, told_facts


def test_singularity_3_chain_in_a_real_paste():
    (f,) = fired("apptainer-loop-devices-unavailable", recorded_paste_facts("sylabs-singularity-67-no-loop-devices-available.txt"))
    assert "line 6" in f.message and "losetup" in f.fix


def test_singularity_2():
    (f,) = fired("apptainer-loop-devices-unavailable", told_facts(
        "ERROR  : No more available loop devices, try increasing 'max loop devices' in singularity.conf\n"))
    assert f.severity == "error"


def test_no_free_loop_device():
    (f,) = fired("apptainer-loop-devices-unavailable", told_facts(
        "FATAL:   container creation failed: mount /proc/self/fd/3->/var/apptainer/mnt/session/rootfs error: while "
        "mounting image /proc/self/fd/3: failed to find loop device: no loop devices available\n"))
    assert f.severity == "error" and "loop device" in f.message
    assert "--userns" in f.fix and "max loop devices" in f.fix


def test_an_image_that_is_not_a_sif_is_not_a_loop_device():
    facts = told_facts("FATAL:   could not open image /scratch/x.sif: image format not recognized\n")
    assert run_rule("apptainer-loop-devices-unavailable", facts)[0] == []
    assert not fired("apptainer-loop-devices-unavailable", facts)
