"""A data or checkpoint file that is not what its reader expects (knowledge/messages/data_files.toml):
cut short, a Git LFS pointer checked out in place of the data, or an HTML page a failed download
saved. The reader's refusal, and the first byte it names, say which; the node is not at fault."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, path_var_line, told_evidence, told_text

SYMBOL = "data-file-damaged"

# What the first byte a reader names says the file is: a Git LFS pointer starts "version https://git-lfs"
# (git-lfs docs/spec.md), a saved web page "<!DOCTYPE" or "<html", a file reserved but never written
# with zeros. Pickle's "invalid load key" prints the byte, torch's weights-only reader its value,
# Python's gzip the first two bytes.
_FIRST_BYTE = {"v": "pointer", "118": "pointer", "b've'": "pointer", '<': "page", "60": "page",
               "b'<!'": "page", "b'<h'": "page", "b'<H'": "page", "\\x00": "zeros", "b'\\x00\\x00'": "zeros"}
_TRUNCATED = frozenset(("data_files:torch-zip-no-central-directory", "data_files:pickle-data-truncated",
                        "data_files:pickle-ran-out-of-input", "data_files:gzip-python-ended-early",
                        "data_files:gzip-unexpected-end-of-file", "data_files:tar-unexpected-eof",
                        "data_files:hdf5-truncated-file", "data_files:safetensors-metadata-incomplete",
                        # the same in the readers' error tables: HDF5's minor "File has been truncated" (H5E_TRUNCATED),
                        # netCDF's NC_ETRUNC "File likely truncated or possibly corrupted"
                        "hdf5:H5E_TRUNCATED", "netcdf:NC_ETRUNC"))
_WHAT = {
    "pointer": "the file is a Git LFS pointer (a few lines of text: version, oid, size), not the data: the repository "
               "or model was cloned without Git LFS",
    "page": "the file is an HTML page, not the data: the download saved an error or login page",
    "zeros": "the file starts with zero bytes: space was reserved for it but the data was never written "
             "(a copy or save that was killed, or a file system that filled)",
    "truncated": "the file is cut short: a download or copy that stopped, a save killed mid-write (a time or memory "
                 "limit), or a file system that filled while it was written",
    "other": "the file is not one this reader can read: cut short or damaged, a Git LFS pointer or a saved web page, "
             "or a file of another format",
}
_NETCDF_BUILD = ("; or a netCDF-4 file opened by a netCDF library built without netCDF-4 (HDF5) support: "
                 "nc-config --has-nc4 says which")
_NETCDF_NAME = re.compile(r": b'([^'\n]{1,300})'")
_FIX = {
    "pointer": ("head -c 200 \"$FILE\"   # 'version https://git-lfs.github.com/spec/v1': a pointer\n"
                "git lfs install && git -C \"$(dirname \"$FILE\")\" lfs pull   # fetch the data in place of the pointers "
                "(module load git-lfs first where the site provides it as a module)"),
    "page": ("head -c 300 \"$FILE\"   # '<!DOCTYPE html' or '<html': a web page\n"
             "# download it again from the project's current link (with the token or cookie it needs), then compare "
             "its size or checksum with the published one: sha256sum \"$FILE\""),
}
_FIX_DEFAULT = ("ls -l \"$FILE\"; sha256sum \"$FILE\"   # compare with the size or checksum the source publishes\n"
                "df -h \"$(dirname \"$FILE\")\"   # a file system that filled while the file was written cuts it short\n"
                "# fetch, copy or write the file again (remove a partial download from the cache first)")


def _kind(s: dict) -> str:
    said = str(s.get("first") or s.get("operand") or "")
    if said in _FIRST_BYTE:
        return _FIRST_BYTE[said]
    if s.get("id") == "data_files:git-lfs-pointer-text":
        return "pointer"
    if s.get("id") in _TRUNCATED:
        return "truncated"
    return "other"


def _sizes(s: dict) -> str:
    """HDF5's own figures: the bytes on disk and the bytes the file says it has."""
    try:
        eof, stored = int(s["eof"]), int(s["stored"])
    except (KeyError, TypeError, ValueError):
        return ""
    return f" ({eof:,} bytes on disk of the {stored:,} the file says it has, {100 * eof // max(stored, 1)} %)" if stored else ""


def _path(s: dict) -> Optional[str]:
    path = str(s.get("path") or "").strip("'\"")
    if not path and s.get("family") == "netcdf":
        named = _NETCDF_NAME.search(str(s.get("text") or ""))
        path = named.group(1) if named else ""
    return path if path and path != "stdin" and re.fullmatch(r"[^\s;&|`$<>'\"]{1,300}", path) else None


@rule("SW075", SYMBOL, "info", "a data or checkpoint file is cut short, a Git LFS pointer or a saved web page, not the data",
      impact=3)
def data_file_damaged(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, a reader refusing a file for what the file is: torch.load's "failed
        finding central directory" (a checkpoint cut short), pickle's "pickle data was truncated"
        and "Ran out of input" (an empty file), pickle's "invalid load key, 'v'" and torch's
        weights-only "Unsupported operand 118" (a Git LFS pointer), '<' / 60 (an HTML page),
        HDF5's "truncated file: eof = N ... stored_eof = M" (with the share of the file present),
        HDF5's "file signature not found" and its error stack's "minor: File has been truncated",
        netCDF's "Unknown file format" and "File likely truncated or possibly corrupted", numpy's "Failed to
        interpret file ... as a pickle", zipfile's "File is not a zip file", gzip's and tar's
        "unexpected end of file", "not in gzip format", "Unexpected EOF in archive",
        safetensors' HeaderTooLarge and MetadataIncompleteBuffer, and the text of an LFS pointer
        itself. Information: the node is fine; support staff learn the ticket is about a file.

    Why it matters:
        These errors look like a broken installation or a bad node and are often reported as
        such; the program is fine and will read the file once it is whole. A truncated output
        can also be the trace of a job killed mid-write or of a full file system, which other
        rules (disk-full, job time and memory limits) answer where the paste shows them.

    How to fix:
        Look at the file's size and first bytes; pull Git LFS files with git lfs; download
        again (after removing the partial copy from the cache); rewrite outputs from a job that
        finished.

    References:
        - https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md (the pointer file format)
        - https://github.com/python/cpython/blob/main/Modules/_pickle.c ("invalid load key", "pickle data was truncated", "Ran out of input")
        - https://github.com/pytorch/pytorch/blob/main/caffe2/serialize/inline_container.cc (PyTorchStreamReader)
        - https://github.com/HDFGroup/hdf5/blob/develop/src/H5Fsuper.c ("truncated file", "file signature not found")
        - https://github.com/Unidata/netcdf-c/blob/main/libdispatch/derror.c (NC_ENOTNC: "Unknown file format")
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    # The most telling line: one that names what the file is, before one that only says it is unreadable.
    order = {"pointer": 0, "page": 0, "zeros": 1, "truncated": 2, "other": 3}
    s = min(told, key=lambda t: (order[_kind(t)], t.get("line") or 0))
    kind = _kind(s)
    path = _path(s)
    # Every fix reads the file through $FILE: set from the paste where it names the file.
    fix = path_var_line("FILE", path, "the file the paste names", "path/to/the/file", "the file the program opened") + "\n" \
        + _FIX.get(kind, _FIX_DEFAULT)
    if kind == "other":
        what = _WHAT[kind] + (_NETCDF_BUILD if s.get("family") == "netcdf" else "")
    else:
        what = f"{_WHAT[kind]}{_sizes(s)}; the node is not at fault"
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}", fix=fix, evidence=told_evidence(s))
