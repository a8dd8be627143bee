"""A data or checkpoint file that is not what its reader expects (knowledge/messages/data_files.toml):
cut short, a Git LFS pointer checked out in place of the data, or an HTML page a failed download
saved; a download that ended short of its length (huggingface_hub, curl, wget, git); a checksum or
digest that does not match (sha256sum -c, pip, docker, containerd, podman, conda's package cache);
and a container image Apptainer or Singularity does not recognise as one (apptainer.toml). The
reader's refusal, and the first byte it names, say which; the node is not at fault."""

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
                        "data_files:safetensors-header-too-small", "data_files:safetensors-invalid-header-length",
                        "data_files:torch-legacy-unexpected-eof", "data_files:numpy-npy-eof",
                        "data_files:unzip-no-end-of-central-directory", "data_files:xz-unexpected-end-of-input",
                        "data_files:bzip2-ends-unexpectedly", "data_files:zstd-premature-end",
                        "data_files:tarfile-unexpected-end-of-data",
                        # the same in the readers' error tables: HDF5's minor "File has been truncated" (H5E_TRUNCATED),
                        # netCDF's NC_ETRUNC "File likely truncated or possibly corrupted"
                        "hdf5:H5E_TRUNCATED", "netcdf:NC_ETRUNC"))
# A file whose contents fail the reader's own check (a CRC, a header inside the archive): damaged, or cut short.
_DAMAGED = frozenset(("data_files:torch-zip-member-damaged", "data_files:zipfile-bad-crc", "data_files:xz-data-corrupt",
                      "data_files:bzip2-data-integrity", "data_files:zstd-corruption",
                      "data_files:gzip-invalid-compressed-data"))
# A download that ended before the length its server announced: the program says so itself.
_TRANSFER = frozenset(("data_files:hf-consistency-check-failed", "data_files:curl-transfer-closed-remaining",
                       "data_files:curl-end-of-response-missing", "data_files:wget-connection-closed-at-byte",
                       "data_files:git-early-eof"))
# A file whose checksum or digest is not the one published (or pinned): which bytes differ is not said.
_CHECKSUM = frozenset(("data_files:cksum-failed", "data_files:cksum-did-not-match", "pip:hash-mismatch",
                       "data_files:docker-layer-verification-failed", "data_files:containerd-unexpected-commit",
                       "data_files:containers-image-digest-mismatch"))
# A container image the runtime reads as none of its formats (or a squashfs header no writer made).
_IMAGE = frozenset(("apptainer:image-format-not-recognized", "apptainer:squashfs-unknown-compression",
                    "prose:image-format-not-recognised-said"))
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
    "damaged": "the file's contents fail the reader's own check: damaged or cut short (a download or copy that stopped "
               "or was altered on the way, a save killed mid-write, or a file read while another job was still writing it)",
    "transfer": "the download ended before the whole file arrived (a connection that dropped, a proxy that closed it, or "
                "a file system that filled while it wrote): what is on disk is cut short",
    "checksum": "the file's checksum is not the one published: the download is cut short or damaged, or is not the file "
                "the checksum is for",
    "conda": "a package in conda's (or mamba's) package cache is damaged (a file its manifest lists is missing or "
             "differs, or the tarball's size or checksum is not the channel's): an extraction or download cut short, by a "
             "killed install, a proxy or mirror, or a file system that filled",
    "image": "the file given as a container image is not an image Apptainer or Singularity can read: an HTML page saved "
             "in place of the download, an image cut short, or segments not all joined",
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
_FIX_IMAGE = ("file \"$IMAGE\"; head -c 200 \"$IMAGE\"; echo   # 'HTML document' or '<!DOCTYPE html': a web page; a SIF "
              "shows SIF_MAGIC in its first bytes\n"
              "ls -l \"$IMAGE\"; sha256sum \"$IMAGE\"   # compare with the size and checksum the image's publisher gives "
              "(for an image published in segments, join every one, in order: cat PART1 PART2 ... > IMAGE)\n"
              "# then pull or download the image again (apptainer pull, or the project's own link), and check it the same way")
_FIX_CONDA = ("ls \"$PKG\"   # the package's extracted copy in conda's package cache\n"
              "rm -rf \"$PKG\" && conda clean --tarballs --yes   # drop the damaged copy and the downloaded archives "
              "(micromamba clean --tarballs --yes under micromamba)\n"
              "df -h \"$(dirname \"$PKG\")\"   # a file system that filled during extraction damages it again\n"
              "# then run the same conda install or create again: the package is downloaded and extracted anew")
_FIX_HF = ("find \"${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}\" -name '*.incomplete' -ls   "
           "# the partial downloads the Hub client left\n"
           "df -h \"${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}\"   # a full file system stops a download too\n"
           "# then download again with force_download=True (from_pretrained(..., force_download=True), "
           "or hf download REPO FILE --force-download)")
_FIX_TRANSFER = ("df -h .   # a file system that filled cuts a download short as well\n"
                 "# run the same command again: curl -C - -O URL and wget -c URL resume a partial file; for git, "
                 "fetch less at once: git clone --depth 1 URL, then git fetch --unshallow")
_FIX_PIP = ("python3 -m pip cache purge   # drop cached wheels and sdists, one of which may be the damaged one\n"
            "# then run the same pip install again; a hash that still differs means the pinned hash is not this file's "
            "(the package was re-uploaded, or the pin names another platform's wheel)")
_FIX_REGISTRY = ("# pull the image again (docker pull, podman pull, ctr images pull): the layer that failed is fetched anew; "
                 "a layer that fails each time points at a proxy or the registry's storage\n"
                 "df -h /var/lib/docker /var/lib/containers 2>/dev/null   # a full image store cuts a layer short as well")
_REGISTRY = frozenset(("data_files:docker-layer-verification-failed", "data_files:containerd-unexpected-commit",
                       "data_files:containers-image-digest-mismatch"))
_FIX_DEFAULT = ("ls -l \"$FILE\"; sha256sum \"$FILE\"   # compare with the size or checksum the source publishes\n"
                "df -h \"$(dirname \"$FILE\")\"   # a file system that filled while the file was written cuts it short\n"
                "# fetch, copy or write the file again (remove a partial download from the cache first)")


def _kind(s: dict) -> str:
    said = str(s.get("first") or s.get("operand") or "")
    if said in _FIRST_BYTE:
        return _FIRST_BYTE[said]
    sid = s.get("id")
    if sid == "data_files:git-lfs-pointer-text":
        return "pointer"
    if sid in _TRUNCATED:
        return "truncated"
    if sid in _DAMAGED:
        return "damaged"
    if sid in _TRANSFER:
        return "transfer"
    if sid in _CHECKSUM:
        return "checksum"
    if sid in _IMAGE:
        return "image"
    if sid in ("data_files:conda-package-corrupted", "data_files:mamba-tarball-not-valid"):
        return "conda"
    return "other"


def _sizes(s: dict) -> str:
    """The reader's own figures: the bytes on disk and the bytes the file (HDF5's superblock) or the
    server (the Hub's listing, numpy's header) says it has."""
    try:
        eof, stored = int(s["eof"]), int(s["stored"])
    except (KeyError, TypeError, ValueError):
        return ""
    whose = "the file says it has" if s.get("id") in ("data_files:hdf5-truncated-file", "hdf5:H5E_TRUNCATED") else "expected"
    return f" ({eof:,} bytes on disk of the {stored:,} {whose}, {100 * eof // max(stored, 1)} %)" if stored else ""


def _path(s: dict, f: Optional[FactView] = None) -> Optional[str]:
    path = str(s.get("path") or s.get("image") or "").strip("'\"")
    if not path and s.get("family") == "netcdf":
        named = _NETCDF_NAME.search(str(s.get("text") or ""))
        path = named.group(1) if named else ""
    if not path and f is not None and _kind(s) == "image":
        # Apptainer's "could not open image <path>: ..." on another line of the same paste names the file
        # (a title that retells the refusal comes first and names none)
        opened = [t for t in f.get("ticket.symptoms") or [] if isinstance(t, dict) and t.get("image")
                  and t.get("id") in ("apptainer:could-not-open-image", "apptainer:image-format-not-recognized")]
        path = str(opened[0]["image"]) if opened else ""
    return path if path and path != "stdin" and re.fullmatch(r"[^\s;&|`$<>'\"]{1,300}", path) else None


def _fix(s: dict, kind: str, path: Optional[str]) -> str:
    sid = s.get("id")
    if kind == "image":
        return path_var_line("IMAGE", path, "the image the paste names", "path/to/the/image.sif",
                             "the image file given to apptainer or singularity") + "\n" + _FIX_IMAGE
    if kind == "conda":
        return path_var_line("PKG", path, "the package copy or tarball the message names", "path/to/pkgs/PACKAGE-VERSION-BUILD",
                             "the directory conda's message names") + "\n" + _FIX_CONDA
    if sid == "data_files:hf-consistency-check-failed":
        return _FIX_HF
    if sid == "pip:hash-mismatch":
        return _FIX_PIP
    if sid in _REGISTRY:
        return _FIX_REGISTRY
    if kind == "transfer":
        return _FIX_TRANSFER
    # Every other fix reads the file through $FILE: set from the paste where it names the file.
    return path_var_line("FILE", path, "the file the paste names", "path/to/the/file", "the file the program opened") + "\n" \
        + _FIX.get(kind, _FIX_DEFAULT)


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
        interpret file ... as a pickle" and "EOF: reading array data", zipfile's "File is not a zip file",
        unzip's "End-of-central-directory signature not found", gzip's, tar's, xz's, bzip2's and zstd's
        files cut short or damaged, safetensors' header errors (HeaderTooLarge, "incomplete metadata,
        file not fully covered" ...), torch's legacy "unexpected EOF, expected N more bytes", and the
        text of an LFS pointer itself. Also a download that ended short of its length (huggingface_hub's
        "Consistency check failed: file should be of size N but has size M", curl's (18), wget's
        "Connection closed at byte", git's "early EOF"), a checksum or digest that does not match
        (sha256sum -c's FAILED, pip's hash mismatch, docker's "filesystem layer verification failed",
        containerd's "unexpected commit digest", podman's "Digest did not match"), a damaged package in
        conda's cache ("appears to be corrupted", mamba's "File not valid: ... doesn't match
        expectation"), and a file Apptainer or Singularity does not
        recognise as an image ("could not open image ...: image format not recognized", and the user's
        own "image format not recognised"): an HTML page saved in place of the image, an image cut
        short, segments not all joined. The Hub's "does not appear to have a file named" and its etag
        errors are no damage and are not read here. Information: the node is fine; support staff learn
        the ticket is about a file.

    Why it matters:
        These errors look like a broken installation or a bad node and are often reported as
        such; the program is fine and will read the file once it is whole. A truncated output
        can also be the trace of a job killed mid-write or of a full file system, which other
        rules (disk-full, job time and memory limits) answer where the paste shows them.

    How to fix:
        Look at the file's size and first bytes (file IMAGE; head -c 200 IMAGE for an image);
        compare its sha256sum with the published one; pull Git LFS files with git lfs; download or
        pull again (after removing the partial copy from the cache: force_download=True for the
        Hub, conda clean for conda's cache); rewrite outputs from a job that finished.

    References:
        - https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md (the pointer file format)
        - https://github.com/python/cpython/blob/main/Modules/_pickle.c ("invalid load key", "pickle data was truncated", "Ran out of input")
        - https://github.com/pytorch/pytorch/blob/main/caffe2/serialize/inline_container.cc (PyTorchStreamReader)
        - https://github.com/HDFGroup/hdf5/blob/develop/src/H5Fsuper.c ("truncated file", "file signature not found")
        - https://github.com/Unidata/netcdf-c/blob/main/libdispatch/derror.c (NC_ENOTNC: "Unknown file format")
        - https://github.com/huggingface/huggingface_hub/blob/main/src/huggingface_hub/file_download.py ("Consistency check failed")
        - https://github.com/huggingface/safetensors/blob/main/safetensors/src/tensor.rs (SafeTensorError)
        - https://github.com/apptainer/apptainer/blob/main/pkg/image/image.go (ErrUnknownFormat: "image format not recognized")
        - https://github.com/conda/conda/blob/main/conda/core/path_actions.py ("appears to be corrupted")
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    # The most telling line: one that names what the file is, before one that only says it is unreadable.
    order = {"pointer": 0, "page": 0, "zeros": 1, "image": 2, "truncated": 2, "damaged": 2, "transfer": 3, "checksum": 4, "conda": 4,
             "other": 5}
    s = min(told, key=lambda t: (order[_kind(t)], t.get("family") == "prose", t.get("line") or 0))
    kind = _kind(s)
    fix = _fix(s, kind, _path(s, f))
    if kind == "other":
        what = _WHAT[kind] + (_NETCDF_BUILD if s.get("family") == "netcdf" else "")
    else:
        what = f"{_WHAT[kind]}{_sizes(s)}; the node is not at fault"
    if s.get("family") == "prose":
        what = "the user reports it in their own words; " + what
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {what}", fix=fix, evidence=told_evidence(s))
