"""data-file-damaged on real public pastes (tests/fixtures/pastes/SOURCES.md and set R's unsealed
tickets), and on the messages the readers themselves print for a damaged file, made here with the
real CPython pickle, zipfile and gzip modules and, where installed, the real torch: a file cut in
half, an empty file, a Git LFS pointer and an HTML page."""

from __future__ import annotations

import gzip
import os
import pickle
import zipfile
from pathlib import Path

import pytest

from conftest import FIXTURES
from rulekit import fired, recorded_paste_facts, told_facts

SET_R = FIXTURES / "tickets_blind_r"
# git-lfs docs/spec.md's pointer format
LFS_POINTER = (b"version https://git-lfs.github.com/spec/v1\n"
               b"oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")



def _raised(call) -> str:
    """The last line a traceback of ``call`` would end with: 'module.Class: message'."""
    try:
        call()
    except BaseException as exc:  # noqa: B902 - every reader's own exception is what is read
        name = type(exc).__qualname__
        module = type(exc).__module__
        first = str(exc).splitlines()[0] if str(exc) else ""
        return f"{name if module == 'builtins' else module + '.' + name}: {first}"
    raise AssertionError("the reader accepted the file")


def test_a_checkpoint_cut_short_is_told_as_cut_short():
    (f,) = fired("data-file-damaged", recorded_paste_facts("stable-diffusion-93-pytorchstreamreader-central-directory.txt"))
    assert f.severity == "info" and "cut short" in f.message and "not at fault" in f.message
    assert "failed finding central directory" in f.message and "sha256sum" in f.fix


def test_an_lfs_pointer_read_by_pickle_is_named_with_the_git_lfs_fix():
    (f,) = fired("data-file-damaged", recorded_paste_facts("face-parsing-3-invalid-load-key-v-lfs.txt"))
    assert "the file is a Git LFS pointer" in f.message and "git lfs install" in f.fix and "lfs pull" in f.fix


@pytest.mark.parametrize("ticket, said", [
    ("te-density-149-truncated-intermediate-h5-healthy", "96 bytes on disk of the 2,048 the file says it has, 4 %"),
    ("bonito-157-corrupted-input-file-healthy", "92 %"),
    ("benchmarking-gnns-40-incomplete-download-healthy", "cut short"),
    ("netcdf4-python-927-file-not-netcdf-healthy", "nc-config --has-nc4"),
])
def test_set_r_s_data_file_tickets_are_answered_at_info(ticket, said):
    # healthy controls of set R (the node was fine, the file was not): answered, never as a fault
    text = (SET_R / f"{ticket}.txt").read_text(encoding="utf-8")
    (f,) = fired("data-file-damaged", told_facts(text))
    assert f.severity == "info" and said in f.message, f.message


def test_the_file_a_netcdf_error_names_goes_into_the_fix():
    text = (SET_R / "pyvista-tornado-demo-1-lfs-pointer-not-netcdf-healthy.txt").read_text(encoding="utf-8")
    (f,) = fired("data-file-damaged", told_facts(text))
    assert f.fix.startswith("FILE=volume_and_parcels/30m_tkeparcels_small.nc   #")


def test_a_weights_only_refusal_of_a_whole_checkpoint_is_not_damage():
    # torch 2.6's weights_only default refusing a numpy global: the file is fine, the load policy refuses it
    text = (FIXTURES / "pastes" / "kliff-210-weights-only-unsupported-global.txt").read_text(encoding="utf-8")
    assert "Weights only load failed" in text
    assert not fired("data-file-damaged", told_facts(text))


@pytest.mark.parametrize("make, kind", [
    (lambda d: pickle.load(open(_half(d, pickle.dumps(list(range(5000)))), "rb")), "cut short"),
    (lambda d: pickle.load(open(_write(d, b""), "rb")), "cut short"),
    (lambda d: pickle.load(open(_write(d, LFS_POINTER), "rb")), "the file is a Git LFS pointer"),
    (lambda d: pickle.load(open(_write(d, b"<!DOCTYPE html>\n<html>"), "rb")), "the file is an HTML page"),
    (lambda d: zipfile.ZipFile(_write(d, LFS_POINTER)), "not one this reader can read"),
    (lambda d: gzip.open(_write(d, LFS_POINTER)).read(), "the file is a Git LFS pointer"),
    (lambda d: gzip.open(_half(d, gzip.compress(os.urandom(50000)))).read(), "cut short"),
], ids=["pickle-half", "pickle-empty", "pickle-lfs", "pickle-html", "zip-lfs", "gzip-lfs", "gzip-half"])
def test_what_cpython_itself_says_of_a_damaged_file_is_read(tmp_path, make, kind):
    line = _raised(lambda: make(tmp_path))
    (f,) = fired("data-file-damaged", told_facts(f"Traceback (most recent call last):\n{line}\n"))
    assert kind in f.message, (line, f.message)


def test_what_torch_itself_says_of_a_damaged_checkpoint_is_read(tmp_path):
    torch = pytest.importorskip("torch")
    whole = tmp_path / "whole.pt"
    torch.save({"w": torch.zeros(1000)}, whole)
    half = _half(tmp_path, whole.read_bytes())
    line = _raised(lambda: torch.load(half))
    (f,) = fired("data-file-damaged", told_facts(f"Traceback (most recent call last):\n{line}\n"))
    assert "cut short" in f.message, line
    # the weights-only reader (torch >= 2.6's default) meets the pointer's 'v' as an operand it has no opcode for
    try:
        torch.load(_write(tmp_path, LFS_POINTER))
    except Exception as exc:  # noqa: B902
        text = f"Traceback (most recent call last):\n_pickle.UnpicklingError: {exc}\n"
    (f,) = fired("data-file-damaged", told_facts(text))
    assert "the file is a Git LFS pointer" in f.message, text


def _write(d: Path, data: bytes) -> Path:
    p = d / f"file{len(list(d.iterdir()))}"
    p.write_bytes(data)
    return p


def _half(d: Path, data: bytes) -> Path:
    return _write(d, data[: len(data) // 2])


# The readers' own error-table texts for a truncated file (hdf5.toml H5E_TRUNCATED, netcdf.toml NC_ETRUNC). No
# stored public paste has them without the line that already fires: each is its emitter's format with its text
# (HDF5 1.14.4 H5Eint.c "%*sminor: %s"; Unidata/netcdf-c v4.9.3 libdispatch/derror.c nc_strerror, as netCDF4-python
# raises it with the file's name).
@pytest.mark.parametrize("text", [
    "    major: File accessibility\n    minor: File has been truncated\n",
    "OSError: [Errno -64] NetCDF: File likely truncated or possibly corrupted: b'output/run_0042.nc'\n"])
def test_the_readers_own_truncated_file_errors_are_a_file_cut_short(text):
    (f,) = fired("data-file-damaged", told_facts(text))
    assert f.severity == "info" and "cut short" in f.message
    if "run_0042" in text:
        assert f.fix.startswith("FILE=output/run_0042.nc   #")


def test_another_minor_of_an_hdf5_stack_is_not_a_file_cut_short():
    # another minor of the same stack (a read that failed) says nothing of the file's length
    assert not fired("data-file-damaged", told_facts("    major: Low-level I/O\n    minor: Read failed\n"))
