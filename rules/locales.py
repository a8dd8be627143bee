"""The locale a job asks for does not exist on the node, or Python encodes text as ASCII: read from
Perl's, bash's, glibc's, Python's and click's own messages (knowledge/messages/locale.toml). The
node's LANG and LC_* only sharpen what a pasted message says. (Not named locale.py: that would
shadow the standard library's module wherever rules/ is on sys.path.)"""

from __future__ import annotations

import re
from typing import Iterator, List, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "locale-not-available"
# Perl's block lists the variables as NAME = "value" (or (unset)); LC_ALL wins over LC_*, which win over LANG.
_SETTING = re.compile(r'\b(?P<name>LC_[A-Z]{1,14}|LANG) = "(?P<value>[^"]{1,60})"')
_ASCII_ERRORS = ("locale:python-ascii-encode", "locale:python-ascii-encode-characters", "locale:python-ascii-decode")
# A locale name glibc can load is language[_territory][.codeset][@modifier], or C / POSIX (setlocale(3)).
_NAMED = re.compile(r"^(?:[A-Za-z]{2,3}(?:_[A-Za-z]{2})?|C|POSIX)(?:\.[A-Za-z0-9-]{1,20})?(?:@[A-Za-z0-9]{1,20})?$")
_ASCII_LOCALES = {"C", "POSIX", ""}


def _env(f: FactView, name: str) -> Optional[str]:
    try:
        return f.env(name)
    except MissingFact:
        return None


def _asked(told: List[dict]) -> Optional[Tuple[str, str]]:
    """(variable, locale) the messages name as the one that failed, if any does; the locale is ""
    where a message names the variable only (a retyped bash warning without its parentheses)."""
    found = {}
    for s in told:
        if s.get("category") and not s.get("locale") and str(s["category"]) != "LC_ALL":
            found.setdefault(str(s["category"]), "")
        elif s.get("locale") and s.get("category"):
            found.setdefault(str(s["category"]), str(s["locale"]))
        elif s.get("locale"):
            found.setdefault("LC_ALL or LANG", str(s["locale"]))
        for m in _SETTING.finditer(str(s.get("settings") or "")):
            found.setdefault(m.group("name"), m.group("value"))
    for name in ("LC_ALL", "LC_CTYPE", "LC_ALL or LANG"):
        if found.get(name):
            return name, found[name]
    lc = sorted(k for k in found if k.startswith("LC_") and found[k])
    if lc:
        return lc[0], found[lc[0]]
    if found.get("LANG"):
        return "LANG", found["LANG"]
    named = sorted(found, key=lambda k: (k != "LC_CTYPE", k))
    return (named[0], "") if named else None


def _ascii_by_locale(f: FactView) -> bool:
    """Whether a pasted or live environment says the locale is C/POSIX or unset, so that Python's
    ASCII codec error is the locale's and not the program's own choice."""
    for name in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = _env(f, name)
        if value is not None:
            return value in _ASCII_LOCALES
    return False


@rule("ENV029", SYMBOL, "error", "the locale the job asks for is not installed on the node, or Python encodes as ASCII",
      impact=5, also={"info": "Python's ASCII codec error pasted with no locale shown: the usual cause, not a fact seen",
                      "warning": "on this node, LC_ALL, an LC_* variable or LANG names a locale the C library cannot load"})
def locale_not_available(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Perl's "perl: warning: Setting locale failed." block (with the variables it
        lists), bash's "setlocale: LC_ALL: cannot change locale (en_US.UTF-8)" (every variable, with
        or without strerror; retyped without the locale, it still names the variable), glibc locale(1)'s
        "Cannot set LC_CTYPE to default locale", Python's "locale.Error: unsupported locale setting",
        and click's "Click will abort further execution because Python was configured to use ASCII as
        encoding for the environment". Python's "'ascii' codec can't encode character" counts only
        when the environment shown says the locale is C, POSIX or unset: code that encodes to ASCII
        itself fails the same way anywhere. Pasted with no environment, that error (one character
        or "characters in position N-M", Python 2's u'\\u2713' too) answers at info: the usual
        cause, with the command that shows the encoding Python picked.

    Why it matters:
        ssh forwards the laptop's LANG and LC_* to the cluster (OpenSSH's SendEnv, on by default in
        Debian's ssh_config), and jobs inherit them. A locale the node has not generated (en_US.UTF-8
        on a minimal image, macOS Terminal's bare "UTF-8") makes every Perl and bash start warn,
        makes Python's locale.setlocale raise, and leaves programs in the C locale. Python 3.6 and
        older then encode as ASCII and fail on the first non-ASCII character; Python 3.7 and later
        coerce the C locale to UTF-8 (PEP 538, PEP 540) unless that is turned off.

    How to fix:
        Ask for a locale the node has: `locale -a` lists them; C.UTF-8 is part of glibc since 2.35
        and shipped earlier by Debian and Fedora. export LC_ALL=C.UTF-8 LANG=C.UTF-8 in the
        job script (or in ~/.bashrc on the cluster). Or stop sending the laptop's locale: remove
        LANG and LC_* from SendEnv in the laptop's ssh configuration, or unset the forwarded variable
        on the node. Administrators install the locale (locale-gen, or a glibc-langpack).

    On a node (checks/locales.py), each of LC_ALL, LC_* and LANG that is set is asked of the C
    library with newlocale(3), which loads a locale without changing the process's own: one that
    does not load (and is not overridden by LC_ALL) is a warning. A value it did not ask (a path)
    leaves the rule unjudged for that variable.

    References:
        - https://man.openbsd.org/ssh_config#SendEnv (SendEnv; sshd_config's AcceptEnv is the server side)
        - https://sourceware.org/glibc/wiki/Proposals/C.UTF-8 (C.UTF-8 merged for glibc 2.35)
        - https://lists.fedoraproject.org/pipermail/glibc/2015-September/000081.html (Fedora's C.UTF-8, "similar to how Debian did it")
        - https://peps.python.org/pep-0538/ and https://peps.python.org/pep-0540/ (Python 3.7: C locale coercion, UTF-8 mode)
        - https://perldoc.perl.org/perllocale#LOCALE-PROBLEMS (perl: warning: Setting locale failed)
        - https://click.palletsprojects.com/unicode-support/ (the page click's ASCII refusal names; the check is gone from click 8.1)
        - https://man7.org/linux/man-pages/man3/newlocale.3.html (ENOENT: the locale data is not available)
        - https://man7.org/linux/man-pages/man7/locale.7.html (LC_ALL over LC_*, over LANG)
    """
    told = catalogued(f, SYMBOL)
    ascii_err = [s for s in f.get("ticket.symptoms") or [] if s.get("id") in _ASCII_ERRORS]
    if not told and ascii_err and _ascii_by_locale(f):
        told = ascii_err[:1]
    if not told and ascii_err:
        yield from _ascii_alone(ascii_err[0])
        return
    if not told:
        yield from _live(f)
        return
    s = told[0]
    asked = _asked(told)
    if asked and not asked[1]:
        what = (f"{asked[0]} names a locale this machine does not have (the line does not show which: "
                f"`echo ${asked[0]}` prints it)")
    elif asked:
        name, value = asked
        what = f"{name}={value} names a locale this machine does not have"
        if not _NAMED.match(value):
            what += (f" (\"{value}\" is a bare codeset, not a locale name: macOS Terminal sets it and ssh "
                     "forwards it)")
    elif s.get("id") in ("locale:click-ascii-environment",) + _ASCII_ERRORS:
        what = ("Python's text encoding is ASCII: a C/POSIX or missing locale under Python 3.6 or older, or "
                "3.7+ with UTF-8 mode and locale coercion turned off")
    else:
        what = "the locale the environment names is not installed on this machine"
    here = []
    # a paste's export lines are what the user tried (or what click advised), not this node's environment
    for var in (("LC_ALL", "LC_CTYPE", "LANG") if f.get("env.listed") is None else ()):
        value = _env(f, var)
        if value is not None:
            here.append(f"{var}={value}")
    mode = _env(f, "PYTHONUTF8") if f.get("env.listed") is None else None
    if mode is not None:
        here.append(f"PYTHONUTF8={mode}")
    fix = _fix(asked)
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\")"
                      + (f"; here {', '.join(here)}" if here else ""),
              fix=fix, evidence=told_evidence(s))


# glibc's name for a locale's codeset in `locale -a` is lower case without the dash (pt_PT.utf8):
# the language and territory part is what to look for.
_LANG_PART = re.compile(r"^[A-Za-z]{2,3}(?:_[A-Za-z]{2})?")


def _installed(asked: Optional[Tuple[str, str]]) -> str:
    m = _LANG_PART.match(asked[1]) if asked else None
    # a bare codeset (macOS's "UTF-8") has no language part to look for
    if not m or asked[1] in ("C", "POSIX") or asked[1].startswith("C.") or not _NAMED.match(asked[1]):
        return ""
    return (f"locale -a | grep -i '{m.group(0)}'   # empty: {asked[1]} is not installed here (locale -a lists "
            "what is; C.utf8 is glibc's own from 2.35)\n")


def _fix(asked: Optional[Tuple[str, str]]) -> str:
    """The fix for a locale that does not load, whether a pasted message or the node named it."""
    return ((_installed(asked) or "locale -a   # the locales this node has: C.utf8 is glibc's own from 2.35 "
                                  "(Debian's and Fedora's before)\n")
            + _forwarded(asked)
            + "export LC_ALL=C.UTF-8 LANG=C.UTF-8   # in the job script, or ~/.bashrc on the cluster\n"
            "# or stop sending the laptop's locale: remove LANG LC_* from SendEnv in ~/.ssh/config or /etc/ssh/ssh_config"
            + _generate(asked))


def _forwarded(asked: Optional[Tuple[str, str]]) -> str:
    # LC_ALL needs no unset: the export below sets it
    if not asked or not re.fullmatch(r"LC_[A-Z]{1,14}|LANG", asked[0]) or asked[0] == "LC_ALL":
        return ""
    return (f"unset {asked[0]}   # the variable that named it, which ssh forwards from the laptop (SendEnv LANG LC_*); "
            "or set a locale the node has:\n")


def _generate(asked: Optional[Tuple[str, str]]) -> str:
    m = _LANG_PART.match(asked[1]) if asked else None
    if not m or "_" not in m.group(0) or not _NAMED.match(asked[1]):
        return ""
    return (f"\n# administrators, to install it: locale-gen {asked[1]} (Debian, Ubuntu), or "
            f"dnf install glibc-langpack-{m.group(0).split('_')[0].lower()} (RHEL, Fedora)")


_ENCODING_CHECK = ("python3 -c 'import locale, sys; print(locale.getpreferredencoding(False), sys.stdout.encoding, "
                   "sys.flags.utf8_mode)'   # in the same shell or job: ANSI_X3.4-1968 or ascii means the locale is C/POSIX or unset\n"
                   "locale   # LANG and LC_* as this shell has them\n"
                   "export LC_ALL=C.UTF-8 LANG=C.UTF-8 PYTHONIOENCODING=utf-8   # in the job script: a UTF-8 locale (locale -a lists "
                   "them); PYTHONIOENCODING also covers Python 2 writing to a pipe or file")


def _ascii_alone(s: dict) -> Iterator[Hit]:
    """Python's ASCII codec error with no locale in sight: a C/POSIX or unset locale is the usual
    cause (PEP 538 names it: Python 3.6 and older encode as ASCII there), but Python 2 writing to a
    pipe, and code that asks for ASCII itself, fail the same way, so this is info."""
    yield Hit(message=f"Python encoded text as ASCII (line {s.get('line')}: \"{told_text(s)}\"): the usual cause (PEP 538) is a "
                      "C, POSIX or unset locale, under which Python 3.6 and older (and 3.7+ with coercion and UTF-8 mode off) "
                      "pick ASCII; Python 2 also picks it when output goes to a pipe or file",
              severity="info", fix=_ENCODING_CHECK, evidence=told_evidence(s))


def _failing(locales: dict) -> Tuple[List[Tuple[str, str]], List[str]]:
    """The variables whose locale does not load and that a program would use (LC_ALL, where set,
    overrides the rest: locale(7)), and those that could not be judged."""
    order = ["LC_ALL"] if "LC_ALL" in locales else list(locales)
    bad, unjudged = [], []
    for var in order:
        got = locales.get(var) or {}
        if got.get("loads") is False:
            bad.append((var, str(got.get("value") or "")))
        elif not isinstance(got.get("loads"), bool):
            unjudged.append(var)
    return bad, unjudged


def _live(f: FactView) -> Iterator[Hit]:
    """The node's own locales (checks/locales.py): read only where no pasted message said it."""
    locales = f["locales"]
    if not isinstance(locales, dict):
        return
    bad, unjudged = _failing(locales)
    if not bad:
        if unjudged:
            raise MissingFact(f"locales.{unjudged[0]}")
        return
    named = ", ".join(f"{var}={value}" for var, value in bad)
    var, value = bad[0]
    bare = [v for _, v in bad if not _NAMED.match(v)]
    yield Hit(message=f"{named}: the C library cannot load {'this locale' if len(bad) == 1 else 'these locales'} on this "
                      "node (newlocale: not installed); Perl and bash warn at every start, Python's "
                      "locale.setlocale(locale.LC_ALL, '') raises, and programs fall back to the C locale"
                      + (f" (\"{bare[0]}\" is a bare codeset, not a locale name: macOS Terminal sets it and ssh forwards it)"
                         if bare else ""),
              severity="warning",
              fix=_fix((var, value)),
              evidence={f"locales.{v}": {"value": val, "loads": False} for v, val in bad})
