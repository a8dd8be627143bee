"""opencl-icd-missing and egl-device-unavailable (rules/compute_apis.py) on public pastes of clinfo,
pyopencl, OpenCLCapsViewer, MuJoCo and robosuite (tests/fixtures/pastes, SOURCES.md there) and on
the emitters' own format strings; silent on real pastes holding similar words."""

from __future__ import annotations

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts, told_facts
from hpcdoctor.triage.messages import find_messages



@pytest.mark.parametrize("paste, line", [
    ("clinfo-11-no-opencl-runtime-installed.txt", 1),
    ("btcrecover-540-pyopencl-platform-not-found.txt", 11),
    ("pyfai-323-pyopencl-platform-not-found-khr-words.txt", 3),
    ("openclcapsviewer-7-opencl-icd-runtime-missing.txt", 16),   # the code's number, not the viewer's own words
])
def test_no_opencl_platform_is_read_and_the_fix_registers_a_driver(paste, line):
    (f,) = fired("opencl-icd-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and f"(line {line}:" in f.message
    assert "no OpenCL driver is registered with the ICD loader" in f.message
    assert f.fix.startswith("ls -l /etc/OpenCL/vendors/") and "pocl-opencl-icd" in f.fix and "OCL_ICD_VENDORS" in f.fix


def test_capsviewers_words_alone_are_a_warning():
    (f,) = fired("opencl-icd-missing", told_facts('The program fails with the message "Could not get platform count!"\n'))
    assert f.severity == "warning"


def test_clinfo_counting_zero_platforms_is_read():
    # clinfo 3.0.25.02.14: printf(I0_STR "%" PRIu32, "Number of platforms", 0), I0_STR "%-48s  "
    text = "%-48s  %d\n" % ("Number of platforms", 0)
    assert [s["id"] for s in find_messages(text)] == ["opencl:clinfo-zero-platforms"]
    assert fired("opencl-icd-missing", told_facts(text))
    assert not fired("opencl-icd-missing", told_facts("%-48s  %d\n" % ("Number of platforms", 2)))


@pytest.mark.parametrize("paste, line", [
    ("gymnasium-726-mujoco-egl-on-cpu-only-compute-nodes.txt", 10),
    ("robosuite-616-mujoco-egl-device-unsupported.txt", 2),
])
def test_mujocos_egl_failure_is_read_and_the_fix_renders_without_a_gpu(paste, line):
    (f,) = fired("egl-device-unavailable", recorded_paste_facts(paste))
    assert f.severity == "error" and f"(line {line}:" in f.message
    assert f.fix.startswith("ls /usr/share/glvnd/egl_vendor.d/")
    assert "export MUJOCO_GL=osmesa; unset PYOPENGL_PLATFORM" in f.fix and "NVIDIA_DRIVER_CAPABILITIES" in f.fix


def test_dm_control_and_an_empty_device_range_are_the_same_cause_a_wrong_index_is_not():
    assert fired("egl-device-unavailable", told_facts("ImportError: Cannot initialize a headless EGL display.\n"))
    none = ("RuntimeError: The MUJOCO_EGL_DEVICE_ID environment variable must be an integer between 0 and -1 "
            "(inclusive), got 0.\n")
    assert fired("egl-device-unavailable", told_facts(none))
    wrong = ("RuntimeError: The MUJOCO_EGL_DEVICE_ID environment variable must be an integer between 0 and 3 "
             "(inclusive), got 4.\n")
    assert [s["id"] for s in find_messages(wrong)] == ["egl:mujoco-egl-device-id-range"]
    assert not fired("egl-device-unavailable", told_facts(wrong))


def test_silent_on_pastes_with_similar_words_and_on_a_live_node():
    # MuJoCo named in a healthy question (nothing in it is readable, so its words are matched directly)
    g = told_facts((PASTES / "mujoco-playground-40-h100-figure-misread-healthy.txt").read_text())
    assert not fired("egl-device-unavailable", g) and not fired("opencl-icd-missing", g)
    g = recorded_paste_facts("kanezaki-11-qt-xcb-no-display-ssh-cv2.txt")   # Qt's plugin list names eglfs, minimalegl
    assert not fired("egl-device-unavailable", g) and not fired("opencl-icd-missing", g)
    assert not fired("opencl-icd-missing", facts("h100-kvm-1gpu"))
    assert not fired("egl-device-unavailable", facts("h100-kvm-1gpu"))
