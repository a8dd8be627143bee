"""Whether the locales the environment names can be loaded: newlocale(3) with the name LC_ALL, an
LC_* variable or LANG holds, asked of the C library itself. It answers what setlocale would for
Perl, bash and Python at their start (ENOENT: the locale's data is not on this node) without
touching the process's own locale, which the other checks' threads share."""

from __future__ import annotations

import ctypes
import errno
import functools
import locale
import os
import re
from typing import Any, Dict, Tuple

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, ReplaySysRoot, SysRoot

NAME = "locales"
TIMEOUT = 1.0

# The categories Python's locale module names, so their numbers are this C library's own (glibc
# and musl both define LC_<x>_MASK as 1 << LC_<x>: glibc's locale/locale.h, musl's include/locale.h).
_CATEGORIES = {n: getattr(locale, n) for n in ("LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE",
                                               "LC_MONETARY", "LC_MESSAGES") if hasattr(locale, n)}
_ALL_MASK = sum(1 << c for c in _CATEGORIES.values())
# What the environment can name (locale(7)): LC_ALL wins over each LC_<x>, which wins over LANG.
VARIABLES = ("LC_ALL",) + tuple(sorted(_CATEGORIES)) + ("LANG",)
# A name with a slash is a path glibc would read a locale from: not asked, not a locale to judge.
_ASKABLE = re.compile(r"[A-Za-z0-9_.@=+,-]{1,100}")


def _mask(var: str) -> int:
    return (1 << _CATEGORIES[var]) if var in _CATEGORIES else _ALL_MASK


@functools.lru_cache(maxsize=1)
def _newlocale() -> Tuple[Any, Any]:
    """newlocale and freelocale from the C library, typed once per process."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        new, free = libc.newlocale, libc.freelocale
    except (OSError, AttributeError) as exc:
        raise Missing(f"newlocale is not available from the C library: {exc}") from None
    new.restype, new.argtypes = ctypes.c_void_p, [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]
    free.restype, free.argtypes = None, [ctypes.c_void_p]
    return new, free


def loads(name: str, mask: int = _ALL_MASK) -> Dict[str, Any]:
    """Whether the C library can load locale ``name`` for the categories in ``mask``: newlocale(3)
    returns a handle (freed at once) or NULL, the locale's data not installed."""
    new, free = _newlocale()
    ctypes.set_errno(0)
    handle = new(mask, name.encode("utf-8", "surrogateescape"), None)
    if handle:
        free(handle)
        return {"loads": True}
    err = ctypes.get_errno()
    # newlocale(3): ENOENT when a category's data is not available; glibc sets no errno when it
    # answers from its cache of names it failed to find before (seen on glibc 2.36). The mask and
    # name are valid by construction, so EINVAL cannot come; ENOMEM says nothing of the locale.
    if err == errno.ENOMEM:
        raise Missing(f"newlocale({name!r}) failed: {os.strerror(err)}")
    return {"loads": False, "error": errno.errorcode.get(err, "none") if err else "none (a name it failed to find before)"}


def facts_of(environ: Dict[str, str], answers: Any) -> Dict[str, Any]:
    """The locales section (pure): for each variable set, its value and whether it loads. A value
    not asked (a path, an odd name) or not answered has no "loads": unjudged, never taken as loading."""
    out: Dict[str, Any] = {}
    for var in VARIABLES:
        value = environ.get(var)
        if not value:
            continue
        got = answers.get(var) if isinstance(answers, dict) else None
        if isinstance(got, dict) and isinstance(got.get("loads"), bool):
            out[var] = {"value": value[:100], "loads": got["loads"]}
        else:
            out[var] = {"value": value[:100], "unjudged": str(got or "not asked of the C library")[:120]}
    return out


def _ask(environ: Dict[str, str]) -> Dict[str, Any]:
    answers: Dict[str, Any] = {}
    for var in VARIABLES:
        value = environ.get(var)
        if not value or not _ASKABLE.fullmatch(value):
            continue
        try:
            answers[var] = loads(value, _mask(var))
        except Missing as exc:
            answers[var] = str(exc)[:120]
    return answers


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    if isinstance(root, ReplaySysRoot) and not root.has_environ():
        # a paste, or a snapshot without its environment: nothing says which locales the job names
        return {"locales": Unknown("the environment was not recorded")}
    try:
        environ = {k: v for k, v in root.environ().items() if k in VARIABLES}
    except (Missing, OSError, AttributeError) as exc:
        return {"locales": Unknown(f"the environment was not read: {exc}")}
    if not environ:
        return {"locales": {}}
    try:
        answers = root.probe("locale_loads", lambda: _ask(environ))
    except Missing as exc:
        return {"locales": Unknown(f"the locales were not asked of the C library: {exc}")}
    return {"locales": facts_of(environ, answers)}

