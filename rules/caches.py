"""Cache directories a job cannot write: Hugging Face's, matplotlib's, pip's, Triton's and the XDG
cache they default to, read from the libraries' own warnings (knowledge/messages/caches.toml) and
from Python's "[Errno 13] Permission denied: '<path>'" on a path that is one of those caches."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "cache-dir-not-writable"
# CPython's OSError.__str__ ("[Errno %S] %S: %R", Objects/exceptions.c): the errno, strerror and path
_ERRNO_PATH = re.compile(r"\[Errno (?P<errno>1|13|30)\] [A-Za-z][A-Za-z ]{2,40}: '(?P<path>/[^'\n]{0,300})'")
# Each library's default cache directory, by its source (caches.toml's header): a path holding one of
# these components is a cache, not the job's own data.
_CACHE_PART = re.compile(r"(?:^|/)(?:\.cache|\.triton|\.nv/ComputeCache|\.keras|\.config/matplotlib|\.matplotlib|"
                         r"huggingface|torch_extensions|torchinductor_[^/]{1,40})(?:/|$)")
_FALLBACK = {"caches:matplotlib-temporary-cache-dir", "caches:pip-cache-dir-not-owned", "caches:hub-ignored-error-writing",
             "caches:fontconfig-no-writable-cache"}
# numba names the source file whose functions it could not cache, not a directory: it looked in
# NUMBA_CACHE_DIR, the __pycache__ beside that file and the user-wide cache (caches.toml).
_NUMBA = {"caches:numba-no-locator", "caches:numba-no-locator-retold"}
_NUMBA_FIX = ("python -c 'import numba; print(numba.config.CACHE_DIR or \"(unset)\")'; id; echo \"HOME=$HOME\"   "
              "# NUMBA_CACHE_DIR, and the home whose ~/.cache/numba numba falls back to\n"
              "export NUMBA_CACHE_DIR=\"${TMPDIR:-/tmp}/$USER/cache/numba\" && mkdir -p \"$NUMBA_CACHE_DIR\"   "
              "# a directory this user can write, before Python starts (a container: -e NUMBA_CACHE_DIR=/tmp/numba_cache); "
              "or install the package in your own virtual environment, whose __pycache__ you can write")

# (variable, what reads it, its directory under the new cache) by the cache a path or message names
_VARIABLE = (
    (re.compile(r"huggingface|transformers|caches:transformers|caches:hub"), "HF_HOME", "Hugging Face's hub, transformers and datasets", "huggingface"),
    (re.compile(r"matplotlib"), "MPLCONFIGDIR", "matplotlib", "matplotlib"),
    (re.compile(r"/pip(?:/|$)|caches:pip"), "PIP_CACHE_DIR", "pip", "pip"),
    (re.compile(r"\.triton"), "TRITON_CACHE_DIR", "Triton's compiled kernels", "triton"),
    (re.compile(r"\.nv/ComputeCache"), "CUDA_CACHE_PATH", "the CUDA driver's JIT cache", "nv"),
    (re.compile(r"torch_extensions"), "TORCH_EXTENSIONS_DIR", "torch's C++/CUDA extension builds", "torch_extensions"),
    (re.compile(r"caches:fontconfig|/fontconfig(?:/|$)"), "XDG_CACHE_HOME", "fontconfig's font cache", ""),
)


def _errno_cache(f: FactView) -> Optional[dict]:
    """The first Python errno line (EACCES, EROFS, EPERM) whose path is a library's cache directory."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") not in ("errno:EACCES", "errno:EROFS", "errno:EPERM"):
            continue
        m = _ERRNO_PATH.search(str(s.get("text", "")))
        if m and _CACHE_PART.search(m.group("path")):
            return dict(s, path=m.group("path"))
    return None


def _told(f: FactView) -> Optional[dict]:
    hub = [s for s in f.get("ticket.symptoms") or []
           if s.get("id") == "caches:hub-ignored-error-writing" and s.get("errno") in ("1", "13", "30")]
    found = [s for s in catalogued(f, SYMBOL) + hub + [_errno_cache(f)] if s]
    if not found:
        return None
    # a failure first, a library's fallback (it goes on) only where nothing failed
    found.sort(key=lambda s: (s.get("id") in _FALLBACK, s.get("line") if isinstance(s.get("line"), int) else 1 << 30))
    return found[0]


def _variable(s: dict, path: str) -> Tuple[str, str, str]:
    said = f"{s.get('id')} {path}"
    return next(((var, who, sub) for pattern, var, who, sub in _VARIABLE if pattern.search(said)),
                ("XDG_CACHE_HOME", "the libraries that follow the XDG cache directory", ""))


# The roles checks/limits.py resolves that are caches (HOME, TMPDIR and the working directory are not).
_CACHE_ROLES = {"HF_HOME": "HF_HOME", "TORCH_HOME": "TORCH_HOME", "TORCHINDUCTOR_CACHE_DIR": "TORCHINDUCTOR_CACHE_DIR",
                "TRITON_CACHE_DIR": "TRITON_CACHE_DIR", "PIP_CACHE_DIR": "PIP_CACHE_DIR", "CONDA_PKGS_DIRS": "CONDA_PKGS_DIRS"}


def _unwritable_live(f: FactView) -> Iterator[Hit]:
    """Live: a cache directory the job's environment resolves (or its nearest existing parent) that
    this user may not write (checks/limits.py, access(2) W_OK)."""
    filesystems = f.get("limits.filesystems")
    for fs in filesystems if isinstance(filesystems, list) else []:
        bad = set(fs.get("unwritable") or [])
        for role, path in zip(fs.get("roles") or [], fs.get("paths") or []):
            if path in bad and role in _CACHE_ROLES:
                yield Hit(message=f"the {role} cache directory {path} (or the parent it would be made in) is not writable by "
                                  f"this user{' (a read-only mount)' if 'ro' in (fs.get('options') or []) else ''}: the "
                                  "library that keeps its cache there fails or runs without it",
                          fix=(f"ls -ld {path} \"$(dirname {path})\"; id   # who owns it\n"
                               f"export {role}=\"${{TMPDIR:-/tmp}}/$USER/cache/{role.lower()}\" && mkdir -p \"${role}\"   "
                               "# in the batch script, before the program; a directory you own on the site's scratch keeps it between jobs"),
                          evidence={"limits.filesystems": {k: fs.get(k) for k in ("roles", "paths", "unwritable", "options")}},
                          severity="warning")
                return


@rule("ENV051", SYMBOL, "error", "a library's cache directory is not writable by the job's user", impact=5,
      also={"warning": "the library goes on without its cache (matplotlib's temporary directory, pip's disabled cache, "
                       "fontconfig); numba's refusal retold without its file; "
                       "live, a resolved cache directory this user may not write"})
def cache_dir_not_writable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a library that cannot write its cache directory: transformers' "There
        was a problem when trying to write in your cache folder (...)", huggingface_hub's
        "Ignored error while writing commit hash to ...: [Errno 13] Permission denied",
        matplotlib's "Matplotlib created a temporary cache directory ... because the default
        path (...) is not a writable directory" (a warning) and its "requires access to a
        writable cache directory", pip's "The directory '...' or its parent directory is not
        owned or is not writable by the current user" (a warning), numba's "cannot cache
        function '...': no locator available for file '...'" (no writable NUMBA_CACHE_DIR,
        __pycache__ or ~/.cache/numba), fontconfig's "No writable cache directories" (a
        warning: it goes on without a cache), and Python's "[Errno 13]
        Permission denied: '<path>'" (or Errno 30, read-only) where the path is a library's
        cache: ~/.cache, ~/.cache/huggingface, ~/.triton, ~/.nv/ComputeCache, ~/.config/matplotlib.
        Live, as a warning: a cache directory the job's environment resolves (HF_HOME, TORCH_HOME,
        TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, PIP_CACHE_DIR, CONDA_PKGS_DIRS, each tool's
        default where unset), or the parent it would be made in, that this user may not write.

    Why it matters:
        Each library puts its cache under the home directory by default. A container run as a
        user without a home (HOME=/ gives '/.cache', HOME=/nonexistent), a home that is
        read-only on compute nodes, or a cache directory another user created makes model
        downloads fail, kernels recompile on every run, or imports stop.

    How to fix:
        Point the cache at a directory the job's user owns (HF_HOME, MPLCONFIGDIR,
        PIP_CACHE_DIR, TRITON_CACHE_DIR, NUMBA_CACHE_DIR, or XDG_CACHE_HOME for all that follow
        it, fontconfig among them), or give the
        container a writable HOME; fix the ownership where the directory is yours.

    References:
        - https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables (HF_HOME, XDG_CACHE_HOME)
        - https://matplotlib.org/stable/install/environment_variables_faq.html (MPLCONFIGDIR)
        - https://pip.pypa.io/en/stable/topics/caching/
        - https://numba.readthedocs.io/en/stable/reference/envvars.html (NUMBA_CACHE_DIR)
        - https://numba.readthedocs.io/en/stable/developer/caching.html (the cache locators)
        - https://specifications.freedesktop.org/basedir-spec/latest/ (XDG_CACHE_HOME)
        - https://github.com/huggingface/transformers/issues/13472
    """
    s = _told(f)
    if not s:
        yield from _unwritable_live(f)
        return
    if s.get("id") in _NUMBA:
        source = s.get("file")
        retold = s.get("id") == "caches:numba-no-locator-retold"
        yield Hit(message=f"numba found no writable cache directory for the functions it compiles with cache=True"
                          f"{f' in {source}' if source else ''} (line {s.get('line')}: \"{told_text(s)}\"): not NUMBA_CACHE_DIR, "
                          "not the __pycache__ beside the source (a package installed where this user cannot write), not "
                          "~/.cache/numba (a container user without a writable home)"
                          + ("; the message is retold without its file, so this is its usual cause" if retold else ""),
                  fix=_NUMBA_FIX, evidence=told_evidence(s), severity="warning" if retold else None)
        return
    path = str(s.get("path") or s.get("path10") or "")
    var, who, sub = _variable(s, path)
    homeless = re.match(r"^/(?:\.cache|\.config|\.triton|nonexistent)(?:/|$)", path)
    why = (" (HOME is / or /nonexistent: a container or service run as a user without a home directory)" if homeless else "")
    fallback = s.get("id") in _FALLBACK
    yield Hit(message=f"the cache directory {path or 'a library keeps'} is not writable by this user{why} "
                      f"(line {s.get('line')}: \"{told_text(s)}\")"
                      f"{'; the library goes on without its cache, slower on every run' if fallback else ''}",
              fix=(f"id; echo \"HOME=$HOME\"; ls -ld {path or '$HOME/.cache'}   # who owns it, and the home this job runs with\n"
                   "export XDG_CACHE_HOME=\"${TMPDIR:-/tmp}/$USER/cache\""
                   + ("" if var == "XDG_CACHE_HOME" else f' {var}="${{TMPDIR:-/tmp}}/$USER/cache/{sub}"')
                   + " && mkdir -p \"$XDG_CACHE_HOME\""
                   + f"   # {who}; in a batch script, before the program; a directory you own on scratch keeps it between jobs\n"
                   "# a container run as another user (docker --user, runAsUser): also give it a writable HOME (-e HOME=/tmp)"),
              evidence=told_evidence(s), severity="warning" if fallback else None)
