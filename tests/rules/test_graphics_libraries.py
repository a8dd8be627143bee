"""opengl-library-missing on public pastes (tests/fixtures/pastes, SOURCES.md there): the dynamic
loader's failure naming a graphics or windowing-system library, answered with the package that
provides it; silent for other libraries and for a display that is absent while the libraries load."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("paste, file, package", [
    ("pymol-open-source-232-libgl-missing.txt", "libGL.so.1", "libgl1"),
    ("tfodcourse-132-libgl-missing.txt", "libGL.so.1", "libgl1"),
    ("studio-lab-examples-45-libgthread-missing-cv2.txt", "libgthread-2.0.so.0", "libglib2.0-0"),
])
def test_the_missing_library_names_its_package(paste, file, package):
    (f,) = fired("opengl-library-missing", recorded_paste_facts(paste))
    assert f.severity == "error" and f.message.startswith(f"{file} is not installed where the program ran")
    assert f"sudo apt-get install -y {package}" in f.fix and f"dnf install -y /usr/lib64/{file}" in f.fix
    assert "opencv-python-headless" in f.fix and f.evidence["library"] == file


def test_a_library_opencv_does_not_link_gets_no_opencv_advice():
    text = "OSError: libEGL.so.1: cannot open shared object file: No such file or directory\n"
    (f,) = fired("opengl-library-missing", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "libegl1" in f.fix and "opencv" not in f.fix


@pytest.mark.parametrize("paste", [
    "llmdet-32-libcudart-10-1-mmcv.txt",                 # the CUDA runtime: cuda-runtime-library-missing's
    "docker-for-win-13835-libnvidia-ml-missing-title.txt",  # the driver's NVML
    "kanezaki-11-qt-xcb-no-display-ssh-cv2.txt",         # cv2 loaded; no display to open a window on
    "debian12-tk-no-display.txt",
])
def test_silent_for_other_libraries_and_for_a_missing_display(paste):
    assert not fired("opengl-library-missing", recorded_paste_facts(paste))
