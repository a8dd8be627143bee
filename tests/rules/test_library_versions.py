"""A program built against one version of a library and run with another (rules/library_versions.py),
on set P's three HDF5 tickets, another public thread, HDF5 1.10.8's own check recorded on the VM
(tests/fixtures/pastes/SOURCES.md), and protobuf's VerifyVersion in two public threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule

SET_P = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_p"


@pytest.mark.parametrize("name, headers, library", [
    ("dbscan-multiplex-7-hdf5-headers-library-mismatch", "1.8.17", "1.8.18"),
    ("latfield2-4-hdf5-two-installs-include-vs-linker", "1.8.12", "1.8.18"),
    ("openmeeg-363-hdf5-built-against-other-library", "1.8.14", "1.8.18"),
])
def test_set_p_hdf5_checks_name_both_versions(tmp_path, name, headers, library):
    g = paste_facts(tmp_path, (SET_P / f"{name}.txt").read_text(encoding="utf-8"))
    (f,) = fired("hdf5-version-mismatch", g)
    assert f.severity == "error"
    assert f.evidence["hdf5.headers"] == headers and f.evidence["hdf5.library"] == library
    assert "same 1.8 series" in f.message and "library is newer" in f.message and "aborts" in f.message
    assert "ldd $(command -v PROGRAM) | grep -i hdf5" in f.fix and "h5cc -showconfig" in f.fix and "module list" in f.fix
    assert not fired("built-against-other-library-version", g)


def test_headers_newer_than_the_library_in_another_thread():
    (f,) = fired("hdf5-version-mismatch", recorded_paste_facts("pyfor-41-hdf5-headers-newer-than-library.txt"))
    assert f.evidence["hdf5.headers"] == "1.10.2" and f.evidence["hdf5.library"] == "1.10.1"
    assert "headers are newer than the library" in f.message


def test_hdf5_1_10_8_aborting_on_1_8_headers_is_another_series():
    (f,) = fired("hdf5-version-mismatch", recorded_paste_facts("hdf5-1.10.8-version-check-aborts.txt"))
    assert f.severity == "error" and "different release series (1.8 against 1.10" in f.message
    assert "aborts it unless HDF5_DISABLE_VERSION_CHECK" in f.message


def test_the_check_disabled_says_the_program_went_on_at_its_risk():
    (f,) = fired("hdf5-version-mismatch", recorded_paste_facts("hdf5-1.10.8-version-check-disabled.txt"))
    assert "continue at its own risk" in f.message and "aborts" not in f.message


def test_h5pys_own_warning_alone_is_a_warning(tmp_path):
    # h5py/__init__.py's UserWarning, as a public TensorFlow log prints it (version_check.toml's example)
    text = ("/usr/lib/python3.11/site-packages/h5py/__init__.py:36: UserWarning: h5py is running against HDF5 1.14.2 "
            "when it was built against 1.14.1, this may cause problems\n")
    (f,) = fired("hdf5-version-mismatch", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "built against HDF5 1.14.1" in f.message and "h5py.version.info" in f.fix


@pytest.mark.parametrize("paste, built, loaded", [
    ("mcpelauncher-355-protobuf-runtime-older-than-headers.txt", "3.5.0", "3.4.0"),
    ("only-train-once-20-protobuf-headers-older-than-runtime.txt", "2.6.1", "3.17.1"),
])
def test_protobufs_verify_version_names_both_versions(paste, built, loaded):
    g = recorded_paste_facts(paste)
    (f,) = fired("built-against-other-library-version", g)
    assert f.severity == "error" and f.evidence["library.name"] == "protobuf"
    assert f.evidence["library.headers"] == built and f.evidence["library.loaded"] == loaded
    assert "ldd $(command -v PROGRAM) | grep -i protobuf" in f.fix
    assert not fired("hdf5-version-mismatch", g)


def test_openssh_decodes_openssls_hex_versions(tmp_path):
    # openssh-portable entropy.c's format, with the numbers of a public FAQ entry (version_check.toml's example)
    (f,) = fired("built-against-other-library-version",
                 paste_facts(tmp_path, "OpenSSL version mismatch. Built against 30000020, you have 30300020\n"))
    assert f.evidence["library.headers"] == "3.0.2 (0x30000020)" and f.evidence["library.loaded"] == "3.3.2 (0x30300020)"
    assert "env -u LD_LIBRARY_PATH ssh -V" in f.fix


def test_silent_on_hdf5s_file_lock_error_and_a_healthy_control():
    # an HDF5 error stack of another kind (hdf5-file-locking's), and set P's healthy TensorFlow notice
    for paste in ("h5py-1082-nfs-no-locks-available.txt",):
        g = recorded_paste_facts(paste)
        assert not fired("hdf5-version-mismatch", g) and not fired("built-against-other-library-version", g)
    g = recorded_paste_facts("../tickets_blind_p/tensorflow-39926-cpu-feature-guard-notice-healthy.txt")
    for symbol in ("hdf5-version-mismatch", "built-against-other-library-version"):
        assert run_rule(symbol, g)[0] == []
