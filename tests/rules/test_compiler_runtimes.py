"""gcc-gfortran-version-mismatch on real build logs (tests/fixtures/pastes, SOURCES.md there; set N's ticket)."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, recorded_paste_facts, told_facts

SET_N = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_n"



def test_openblas_link_without_libgfortran_of_gccs_version():
    # OpenBLAS#985: the reporter's gcc and gfortran were of different versions; gcc 5 with gfortran 5 builds
    (f,) = fired("gcc-gfortran-version-mismatch", told_facts((SET_N / "openblas-985-gcc-gfortran-version-mismatch.txt").read_text()))
    assert f.severity == "warning" and "(line 10: \"/usr/bin/ld: cannot find -lgfortran\")" in f.message
    assert "another version than gcc" in f.message
    assert f.fix.startswith("gcc --version | head -1; gfortran --version | head -1")
    assert "gfortran-$(gcc -dumpversion | cut -d. -f1)" in f.fix


def test_another_openblas_build_the_maintainers_asked_about():
    (f,) = fired("gcc-gfortran-version-mismatch", recorded_paste_facts("openblas-1879-cannot-find-lgfortran.txt"))
    assert f.severity == "warning" and "cannot find -lgfortran" in f.message


def test_silent_on_another_library_and_on_macos_ld64():
    # mxnet#2656: the same ld sentence for -lcuda; aenet#16: Apple's linker, where gfortran is installed apart
    assert not fired("gcc-gfortran-version-mismatch", recorded_paste_facts("mxnet-2656-ld-cannot-find-lcuda.txt"))
    g = recorded_paste_facts("aenet-16-macos-library-not-found-lgfortran.txt")
    assert any(s.get("id") == "linker:ld64-library-not-found-lgfortran" for s in g["facts"]["ticket"]["symptoms"])
    assert not fired("gcc-gfortran-version-mismatch", g)
