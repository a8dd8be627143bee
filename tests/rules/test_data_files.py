"""data-file-damaged on real public pastes (tests/fixtures/pastes/SOURCES.md and set R's unsealed
tickets), and on the messages the readers themselves print for a damaged file, made here with the
real CPython pickle, zipfile and gzip modules and, where installed, the real torch: a file cut in
half, an empty file, a Git LFS pointer and an HTML page."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import FIXTURES
from rulekit import fired, recorded_paste_facts, run_rule, told_facts

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
    (lambda d: zipfile.ZipFile(_zip_with_a_byte_altered(d)).read("a.bin"), "fail the reader's own check"),
    (lambda d: tarfile.open(_half(d, _tar_of(os.urandom(50000)))).extractall(d / "out", filter="data"), "cut short"),
], ids=["pickle-half", "pickle-empty", "pickle-lfs", "pickle-html", "zip-lfs", "gzip-lfs", "gzip-half", "zip-crc",
        "tar-half"])
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


def _zip_with_a_byte_altered(d: Path) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.bin", os.urandom(5000))
    data = bytearray(buf.getvalue())
    data[100] ^= 0xFF   # inside the stored member: its CRC-32 no longer matches
    return _write(d, bytes(data))


def _tar_of(data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        info = tarfile.TarInfo("x")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


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


# --- downloads cut short, checksums that differ, conda's cache, container images (real public pastes) ---

SET_X = FIXTURES / "tickets_blind_x"


@pytest.mark.parametrize("paste, said, fix", [
    ("transformers-course-1-hf-consistency-check-failed.txt", "883,464,076 bytes on disk of the 9,449,717,937 expected, 9 %",
     "force_download=True"),
    ("embedded-ai-bench-6-git-early-eof.txt", "the download ended before the whole file arrived", "git clone --depth 1"),
    ("action-units-heatmaps-7-torch-unexpected-eof.txt", "the file is cut short", "sha256sum \"$FILE\""),
    ("marker-970-safetensors-incomplete-metadata.txt", "the file is cut short", "sha256sum \"$FILE\""),
    ("eb-php-wordpress-8-unzip-no-central-directory.txt", "the file is cut short", "sha256sum \"$FILE\""),
    ("stable-diffusion-230-pytorchstreamreader-invalid-header.txt", "fail the reader's own check", "sha256sum \"$FILE\""),
    ("update-golang-9-sha256sum-failed.txt", "checksum is not the one published", "FILE=update-golang.sh   #"),
    ("ruby-134-docker-layer-verification-failed.txt", "checksum is not the one published", "docker pull"),
    ("mamba-3244-tarball-size-not-valid.txt", "package cache is damaged",
     "PKG=/public/home/gqwang/miniconda3/pkgs/yaml-cpp-0.6.3-he1b5a44_4.tar.bz2   #"),
    ("python-feedstock-328-conda-package-corrupted.txt", "package cache is damaged",
     "PKG=/gpfs02/astro/workarea/beckermr/miniconda3/pkgs/python-2.7.15-h5a48372_1011_cpython   #"),
])
def test_a_file_cut_short_or_unlike_its_checksum_is_answered_at_info(paste, said, fix):
    (f,) = fired("data-file-damaged", recorded_paste_facts(paste))
    assert f.severity == "info" and said in f.message and "not at fault" in f.message, f.message
    assert fix in f.fix, f.fix


def test_an_image_apptainer_does_not_recognise_names_the_image_in_the_fix():
    (f,) = fired("data-file-damaged", recorded_paste_facts("cylinder2dflowcontroldrl-19-image-format-not-recognized.txt"))
    # the program's own line is quoted, not the title that retells it
    assert "could not open image" in f.message and "not an image Apptainer or Singularity can read" in f.message
    assert f.fix.startswith("FILE=") is False
    assert f.fix.startswith("IMAGE=/home/zww/Cylinder2DFlowControlDRL-master/container/fenics-and-more.img   #")
    assert 'file "$IMAGE"; head -c 200 "$IMAGE"' in f.fix and 'sha256sum "$IMAGE"' in f.fix


def test_the_users_own_image_format_not_recognised_is_read_as_their_words():
    (f,) = fired("data-file-damaged", recorded_paste_facts("singularity-2750-image-format-not-recognised-html.txt"))
    assert f.severity == "info" and "in their own words" in f.message and "HTML page" in f.message
    assert f.fix.startswith("IMAGE=path/to/the/image.sif   #")


@pytest.mark.parametrize("ticket", ["singularity-2750-image-is-html-page",
                                    "cylinder2dflowcontroldrl-19-reassembled-image-checksum-differs",
                                    "transformers-course-1-model-download-cut-short"])
def test_set_x_s_data_file_tickets_fire(ticket):
    text = (SET_X / f"{ticket}.txt").read_text(encoding="utf-8")
    assert fired("data-file-damaged", told_facts(text))


def test_an_archive_cut_short_with_no_disk_evidence_keeps_the_info_answer_that_names_df():
    # github-mirror #44: the reporter later found the disk had filled; the paste shows only gzip's and tar's words
    text = (SET_X / "github-mirror-44-disk-full-during-download.txt").read_text(encoding="utf-8")
    facts = told_facts(text)
    (f,) = fired("data-file-damaged", facts)
    assert f.severity == "info" and "df -h" in f.fix
    findings, _ = run_rule("disk-full", facts)   # judged or not, it never fires without a full file system shown
    assert not findings


# Each emitter's format filled in (no public paste recorded for these wordings): the sources are in
# knowledge/messages/data_files.toml and apptainer.toml.
@pytest.mark.parametrize("text, kind", [
    ("safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge\n", "not one this reader can read"),
    ("safetensors_rust.SafetensorError: Error while deserializing header: header too small\n", "cut short"),
    ("ValueError: EOF: reading array data, expected 262144 bytes got 131072\n", "131,072 bytes on disk of the 262,144 expected"),
    ("curl: (18) transfer closed with 1048576 bytes remaining to read\n", "download ended before"),
    ("xz: (stdin): Unexpected end of input\ntar: Unexpected EOF in archive\n", "cut short"),
    ("bzip2: Compressed file ends unexpectedly;\n\tperhaps it is corrupted?  *Possible* reason follows.\n", "cut short"),
    ("model.tar.zst : Read error (39) : premature end\n", "cut short"),
    ("ERROR: THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE. If you have updated the package "
     "versions, please update the hashes. Otherwise, examine the package contents carefully; someone may have "
     "tampered with them.\n", "checksum is not the one published"),
    ("FATAL:   container creation failed: corrupted image: unknown compression algorithm value 9\n", "not an image"),
])
def test_each_emitters_own_format_is_read(text, kind):
    (f,) = fired("data-file-damaged", told_facts(text))
    assert kind in f.message, f.message


@pytest.mark.parametrize("text", [
    # transformers' file-not-in-repository and the Hub's etag error: a name or a server, not a damaged file
    "OSError: bert-base-uncased does not appear to have a file named pytorch_model.bin. Checkout "
    "'https://huggingface.co/bert-base-uncased/None' for available files.\n",
    "OSError: Distant resource does not have an ETag, we won't be able to reliably ensure reproducibility.\n",
    # a status line that is not sha256sum's, and sha256sum's "FAILED open or read" (a file missing, not damaged)
    "Status: FAILED\n",
    "data.tar: FAILED open or read\n",
    # Apptainer unable to open an image for another reason than its format
    "FATAL:   could not open image /scratch/u/app.sif: failed to retrieve path for /scratch/u/app.sif: lstat "
    "/scratch/u/app.sif: no such file or directory\n",
])
def test_what_is_not_a_damaged_file_is_not_told_as_one(text):
    assert not fired("data-file-damaged", told_facts(text))
