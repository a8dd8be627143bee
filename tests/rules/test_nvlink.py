"""GPU039 nvlink-errors on real lines: the NVLink5 Xids at the fatality the driver's own line gives
them; CUDA's uncorrectable NVLink error alone, and a driver log naming no NVLink fault, answer nothing."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts


def test_a_fatal_nvlink5_xid_is_an_error_naming_the_gpu():
    # leptonai/gpud#1174: "149, NETIR Fatal ..."
    (f,) = fired("nvlink-errors", recorded_paste_facts("gpud-1174-xid149-netir-fatal.txt"))
    assert f.severity == "error" and "Xid 149" in f.message and "PCI:0019:01:00" in f.message
    assert "nvidia-smi nvlink --status" in f.fix and "dcgmi diag -r 3" in f.fix


def test_a_nonfatal_nvlink5_xid_is_a_warning():
    # leptonai/gpud#1174: "145, RLW_RXPIPE Nonfatal ..."
    (f,) = fired("nvlink-errors", recorded_paste_facts("gpud-1174-xid145-rlw-nonfatal.txt"))
    assert f.severity == "warning" and "Xid 145" in f.message


def test_cudas_uncorrectable_nvlink_error_alone_is_not_called_a_link_fault(tmp_path):
    # MIC-DKFZ/nnUNet#1519's title, verbatim: the same words come from programs whose error went away
    # with a newer PyTorch on one GPU (quanpn90/NMTGMinor#28), so the line alone names no node fault
    text = "RuntimeError: CUDA error: uncorrectable NVLink error detected during the execution\n"
    g = paste_facts(tmp_path, text)
    assert "cuda:cudaErrorNvlinkUncorrectable" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("nvlink-errors", g)


def test_the_driver_line_without_an_nvlink_xid_answers_nothing():
    # open-gpu-kernel-modules#1230: a GSP timeout on a GH100, no NVLink fault named
    assert not fired("nvlink-errors", recorded_paste_facts("open-gpu-kernel-modules-1230-gsp-timeout-cut.txt"))
