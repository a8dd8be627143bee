"""glibc-older-than-binary and shared-library-not-found on real pastes of glibc's loader messages
(tests/fixtures/pastes, SOURCES.md there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, recorded_paste_facts, told_facts

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"



def test_a_binary_built_on_a_newer_os():
    (f,) = fired("glibc-older-than-binary", recorded_paste_facts("kymoknot-1-binary-built-for-newer-glibc.txt"))
    assert "the program ./KymoKnot_linear.x needs glibc 2.29 (GLIBC_2.29 of /lib64/libm.so.6)" in f.message
    assert "ldd --version | head -1" in f.fix and "objdump -T ./KymoKnot_linear.x" in f.fix
    assert "apptainer exec --bind \"$PWD\" IMAGE.sif ./KymoKnot_linear.x" in f.fix


def test_the_newest_missing_version_is_named():
    (f,) = fired("glibc-older-than-binary", recorded_paste_facts("node-46412-glibc-2-28-centos-7.txt"))
    assert "./node needs glibc 2.28" in f.message and "GLIBC_2.25, GLIBC_2.27, GLIBC_2.28" in f.message
    assert "GLIBCXX" not in f.message


def test_a_python_extension_is_told_of_manylinux():
    text = ("ImportError: /lib64/libc.so.6: version `GLIBC_2.32' not found (required by "
            "/opt/env/lib/python3.11/site-packages/pkg/_core.cpython-311-x86_64-linux-gnu.so)\n")
    (f,) = fired("glibc-older-than-binary", told_facts(text))
    assert "python3 -m pip debug --verbose | grep -m3 manylinux" in f.fix


def test_glibc_rule_leaves_libstdcxx_and_torch_alone():
    # GLIBCXX of libstdc++ is another library's version: only libc's GLIBC_2.29 line is this rule's
    # (blind set D: the site's answer, binaries built against a newer glibc than the cluster's)
    trixie = (FIXTURES / "tickets_blind_d" / "trixie-97-glibcxx-not-found-import-torch.txt").read_text()
    (f,) = fired("glibc-older-than-binary", told_facts(trixie))
    assert "needs glibc 2.29 (GLIBC_2.29 of /lib64/libc.so.6)" in f.message and "GLIBCXX" not in f.message
    assert not fired("glibc-older-than-binary", told_facts(trixie.replace("/lib64/libc.so.6: version `GLIBC_2.29' not found", "")))
    torch = ("ImportError: /lib64/libc.so.6: version `GLIBC_2.27' not found (required by "
             "/env/lib/python3.9/site-packages/torch/lib/libtorch_cpu.so)\n")
    assert not fired("glibc-older-than-binary", told_facts(torch))


@pytest.mark.parametrize("paste, soname", [
    ("monopogen-88-bundled-tool-needs-openssl-1-0.txt", "libcrypto.so.1.0.0"),
    ("vanitygen-plus-112-libcrypto-outside-loader-path.txt", "libcrypto.so.1.1"),
    ("apollo-router-2555-libssl-1-1-ubuntu-22-04.txt", "libssl.so.1.1"),
    ("resinsight-750-libssl-so-10-el6-build-on-ubuntu.txt", "libssl.so.10"),
    # a stem with its own dotted release (libpython2.7): it was read as no library at all
    ("radical-pilot-1276-libpython-module-gone-on-stampede.txt", "libpython2.7.so.1.0"),
])
def test_a_library_the_loader_cannot_find(paste, soname):
    (f,) = fired("shared-library-not-found", recorded_paste_facts(paste))
    assert f"the loader finds no {soname}" in f.message
    assert f.fix.startswith(f"ldconfig -p | grep '{soname}'") and f"find / -xdev -name '{soname}*'" in f.fix
    assert "export LD_LIBRARY_PATH=" in f.fix and f"dnf provides '*/{soname}'" in f.fix


@pytest.mark.parametrize("paste", [
    "cpcl-4-libcudart-10-0-cuda-path.txt",            # cuda-runtime-library-missing's
    "examl-19-libmpi-40-missing.txt",                 # mpi-library-missing's
    "pymol-open-source-232-libgl-missing.txt",        # opengl-library-missing's
    "node-46412-glibc-2-28-centos-7.txt",             # a version, not a missing file
])
def test_library_rule_leaves_the_other_rules_libraries_alone(paste):
    assert not fired("shared-library-not-found", recorded_paste_facts(paste))


def test_silent_on_a_healthy_paste_naming_a_library():
    text = (FIXTURES / "tickets_blind_g" / "ollama-602-packaged-libcudart-name-healthy.txt").read_text()
    assert not fired("shared-library-not-found", told_facts(text))
    assert not fired("glibc-older-than-binary", told_facts(text))


def test_a_loader_error_printed_by_module_load_is_only_info():
    # Lmod#351: a modulefile's capture("mpicc -showme:compile") printed the loader's refusal under the
    # user's own module load line; the same mpicc runs once the modules are loaded (a healthy control)
    text = (FIXTURES / "tickets_blind_n" / "lmod-351-capture-without-module-env-healthy.txt").read_text()
    (f,) = fired("shared-library-not-found", told_facts(text))
    assert f.severity == "info" and "while a modulefile ran it during \"module load\"" in f.message
    assert f.fix.startswith("module load intel/2018 openmpi/2.1.1 test; ldd \"$(command -v mpicc)\"")


def test_the_same_library_missing_for_every_command_stays_an_error():
    # darshan#429: libdarshan.so in LD_PRELOAD needs libimf.so, and even ls fails: no module command printed it
    text = (FIXTURES / "tickets_blind_n" / "darshan-429-ld-preload-libimf-not-found.txt").read_text()
    (f,) = fired("shared-library-not-found", told_facts(text))
    assert f.severity == "error" and "the loader finds no libimf.so" in f.message


def test_a_retyped_glibc_line_is_still_read():
    # gophish#2690 (set AA): typographic quotes, no space after "version", "GLIB _2.28", "(Required by"
    (f,) = fired("glibc-older-than-binary", recorded_paste_facts("../tickets_blind_aa/gophish-2690-glibc-2-28-not-found.txt"))
    assert "the program ./gophish needs glibc 2.28 (GLIBC_2.28 of /lib/x86_64-linux-gnu/libc.so.6)" in f.message
    assert "objdump -T ./gophish" in f.fix


def test_a_retyped_version_of_another_library_is_not_glibc():
    assert not fired("glibc-older-than-binary", told_facts(
        "/usr/lib/libfoo.so.1: version ’GLIB _2.28’ not found (required by ./prog)\n"))
