"""Message catalogues: what the software that prints an error means by it.

One TOML file per family in ``messages/`` (CUDA runtime and driver errors, HIP, NVML, nvidia-smi,
Xid, NCCL, torch, frameworks), each built from the code or document that emits the messages, so a
message is known because its emitter defines it, not because a ticket once showed it. The schema
is ``messages/README.md``; ``tests/knowledge/test_messages_catalogue.py`` holds every file to it.

A family has *forms* (the ways its messages are printed: torch's ``CUDA error: <text>``, the kernel
log's ``NVRM: Xid (...): <code>``), whose named groups (``name``, ``code`` or ``message``) pick an
*entry* (one per enum value or distinct message), and entries that carry their own ``needle`` and
``pattern`` where a message has no family form (NCCL's WARN lines).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on the oldest supported Python in CI
    import tomli as tomllib

MESSAGES_DIR = Path(__file__).parent / "messages"

# What a cause may be: the catalogue says who has to act, a rule says what to do. "unclassified":
# the emitter's table gives a message and no cause (a scheduler's whole error table), and nobody
# has judged each row: not a guess dressed as a cause.
CAUSES = frozenset({"environment", "build", "driver", "hardware", "program", "resource", "transient",
                    "internal", "configuration", "unclassified"})

_SPACES = re.compile(r"\s{1,64}")
# An unbounded repeat (*, +, {n,}) after anything: a pattern over a pasted line must not be able to
# backtrack for as long as the line is, so every repeat in the catalogue is bounded ({0,N}).
_UNBOUNDED = re.compile(r"(?<!\\)(?:[*+]|\{\d+,\})")


def norm(text: str) -> str:
    """A message as compared: lower case, runs of white space as one space (a wrapped or
    re-indented paste), without the full stop some emitters add."""
    return _SPACES.sub(" ", text.strip().lower()).rstrip(".")


class Pattern:
    """A catalogue pattern, compiled when first searched with: a paste holds the needles of a few
    dozen of the catalogues' thousands of patterns, and compiling every one cost more than reading
    most pastes. ``problems`` compiles each (the catalogue test runs it on every shipped file), so a
    shipped pattern that does not compile fails there, not in a user's triage."""

    __slots__ = ("pattern", "where", "_rx")

    def __init__(self, pattern: str, where: str):
        self.pattern = pattern
        self.where = where
        self._rx: "Optional[re.Pattern[str]]" = None

    def compiled(self) -> "re.Pattern[str]":
        if self._rx is None:
            self._rx = _compile(self.pattern, self.where)
        return self._rx

    def search(self, text: str, pos: int = 0) -> "Optional[re.Match[str]]":
        return self.compiled().search(text, pos)

    def match(self, text: str, pos: int = 0) -> "Optional[re.Match[str]]":
        return self.compiled().match(text, pos)

    @property
    def groupindex(self) -> Any:
        return self.compiled().groupindex


@dataclass(frozen=True)
class Form:
    family: str
    id: str
    needle: str
    pattern: Pattern
    key: str
    source: str
    example: str = ""
    # A form of a family without entries (errorlines.toml: how a program prints an error line, not
    # which errors it prints) names its emitter, which the reply quotes ("a GCC diagnostic").
    emitter: str = ""
    # line: matched on the needle's line alone (stripped, cut at LINE_CAP), not the window;
    # anchored: the match must start where that line's text starts, as an error-line convention
    # (apt's "E: ", pip's "ERROR: ") prints its prefix first and prose has the same words elsewhere.
    line: bool = False
    anchored: bool = False
    # retold: the form reads an error number a user retyped in a sentence ("error 35: cuda driver is
    # insufficient"), not a program's line: a number the table lacks is no reading at all, and a rule
    # that answers it says the number came from the user's words (at most a warning: engine.py).
    retold: bool = False
    # name_prefix: an emitter that prints the enum name without its prefix (go-nvml's fallback
    # ErrorString prints "ERROR_LIBRARY_NOT_FOUND" for NVML_ERROR_LIBRARY_NOT_FOUND) is looked up
    # with the prefix put back.
    name_prefix: str = ""
    # bare: the entry's own message wherever a program printed it, after a prefix of its own
    # ("Error 804: ", "launch failed: ", glog's check) that no form of the family knows: one form per
    # entry whose message is long enough to be the emitter's alone (_expand_bare). ``entry`` is its key;
    # ``unless``: a paste this matches is another emitter's that prints the same texts (HIP copies
    # CUDA's), and is left to that family's own forms; ``when``: only a paste this matches is read
    # (HIP's texts, CUDA's words, only where the paste names HIP or ROCm).
    bare: bool = False
    entry: str = ""
    unless: Optional[Pattern] = None
    when: Optional[Pattern] = None
    # longer: the family's longer bare texts that hold this one ("unspecified launch failure in prior
    # launch" holds "unspecified launch failure"): a line holding one of them is not this text's
    longer: Tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    family: str
    key: str
    data: Dict[str, Any]
    needle: str = ""
    pattern: Optional[Pattern] = None
    # needles = [...]: one message found through several literals (the shells' "command not found"
    # and fish's "Unknown command: "), the first of them also in needle
    needles: Tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.family}:{self.key}"

    def get(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)


@dataclass
class Family:
    id: str
    title: str
    source: str
    read: str
    path: Path
    proposed_rules: Tuple[str, ...] = ()
    # A generic family (errno: strerror texts after any program's words) reads only the lines no other
    # family read: the specific emitter's entry says more of the same line (and feeds its rule).
    generic: bool = False
    forms: List[Form] = field(default_factory=list)
    entries: List[Entry] = field(default_factory=list)
    by_key: Dict[str, Entry] = field(default_factory=dict)
    by_code: Dict[int, Entry] = field(default_factory=dict)
    # Longest message first: a captured text is matched by the longest message it starts with.
    by_message: List[Tuple[str, Entry]] = field(default_factory=list)

    def lookup(self, group: str, value: str, prefix: str = "") -> Optional[Entry]:
        """The entry a form's captured group names, or None: ``name`` and ``code`` exactly (``name``
        after ``prefix``, where the emitter leaves the enum's prefix out), ``message`` by the longest
        catalogued message the captured text starts with (a window runs on past the message into the
        lines after it)."""
        if group == "name":
            name = prefix + value.strip()
            return self.by_key.get(name) or self.by_key.get(name.rstrip(":.,;"))
        if group == "code":
            try:
                return self.by_code.get(int(value))
            except ValueError:
                return None
        said = norm(value)
        for text, entry in self.by_message:
            if _starts_with_words(said, text):
                return entry
        # A message retyped by a user loses its hyphens ("Read only file system"): the same message.
        said = said.replace("-", " ")
        for text, entry in self.by_message:
            if "-" in text and _starts_with_words(said, text.replace("-", " ")):
                return entry
        return None


def _starts_with_words(said: str, text: str) -> bool:
    """``said`` begins with the whole of ``text``, not with a longer word that starts the same."""
    return said.startswith(text) and (len(said) == len(text) or not said[len(text)].isalnum())


class CatalogueError(ValueError):
    """A catalogue file that does not follow the schema (a shipped file is held to it by a test)."""


def _compile(pattern: str, where: str) -> "re.Pattern[str]":
    # Case matters unless a pattern says (?i): some patterns end a captured field where the case
    # of the next word changes ("Cannot allocate memory" before a joined "RuntimeError").
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise CatalogueError(f"{where}: pattern does not compile: {exc}") from None


def _parse(path: Path) -> Dict[str, Any]:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def _family(path: Path, data: Optional[Dict[str, Any]] = None) -> Family:
    data = _parse(path) if data is None else data
    head = data.get("family")
    if not isinstance(head, dict) or not isinstance(head.get("id"), str):
        raise CatalogueError(f"{path.name}: no [family] table with an id")
    fid = head["id"]
    fam = Family(id=fid, title=str(head.get("title", fid)), source=str(head.get("source", "")),
                 read=str(head.get("read", "")), path=path, proposed_rules=tuple(head.get("proposed_rules") or ()),
                 generic=head.get("generic") is True)
    bare_forms = []
    for n, form in enumerate(data.get("form") or []):
        where = f"{path.name} form {form.get('id', n)}"
        if form.get("bare") is True:
            bare_forms.append((form, where))
            continue
        pattern = Pattern(str(form.get("pattern", "")), where)
        # needles = [...]: one convention found through several literals (glog's E and F lines of
        # .cc, .cpp and .go files), each needle a form of its own with the one compiled pattern.
        for needle in [str(x) for x in form.get("needles") or []] or [str(form.get("needle", ""))]:
            fam.forms.append(Form(family=fid, id=str(form.get("id", n)), needle=needle, pattern=pattern,
                                  key=str(form.get("key", "")), source=str(form.get("source", "")),
                                  example=str(form.get("example", "")), emitter=str(form.get("emitter", "")),
                                  line=form.get("line") is True, anchored=form.get("anchored") is True,
                                  retold=form.get("retold") is True, name_prefix=str(form.get("name_prefix", ""))))
    for n, raw in enumerate(data.get("entry") or []):
        key = str(raw.get("key", ""))
        where = f"{path.name} entry {key or n}"
        own = Pattern(str(raw["pattern"]), where) if "pattern" in raw else None
        needles = tuple(str(x) for x in raw.get("needles") or []) or (str(raw.get("needle", "")),)
        entry = Entry(family=fid, key=key, data=dict(raw), needle=needles[0], pattern=own, needles=needles)
        fam.entries.append(entry)
        fam.by_key.setdefault(key, entry)
        if isinstance(raw.get("code"), int) and not isinstance(raw.get("code"), bool):
            fam.by_code.setdefault(raw["code"], entry)
        if isinstance(raw.get("message"), str) and raw["message"].strip():
            fam.by_message.append((norm(raw["message"]), entry))
    fam.by_message.sort(key=lambda pair: -len(pair[0]))
    for form, where in bare_forms:
        fam.forms += _expand_bare(fam, form, where)
    return fam


# What a bare message must hold to be read without its emitter's prefix: four words ("no kernel
# image is available for execution on the device"); "invalid argument" or "out of memory" alone is
# every program's. A form lists the shorter ones that are its emitter's alone (also) and the longer
# ones that are not (except).
BARE_MIN_WORDS = 4


def _expand_bare(fam: Family, form: Dict[str, Any], where: str) -> List[Form]:
    """One form per entry of the family whose message qualifies (BARE_MIN_WORDS, or the form's
    ``also``, never its ``except``), longest message first: a line that holds "unspecified launch
    failure in prior launch" is that message, not the shorter one it starts with. The form's pattern
    is a template whose ``{message}`` becomes the message, escaped, any case."""
    also = set(form.get("also") or ())
    never = set(form.get("except") or ())
    unless = Pattern(str(form["unless"]), where + " unless") if form.get("unless") else None
    when = Pattern(str(form["when"]), where + " when") if form.get("when") else None
    template = str(form.get("pattern", ""))
    out = []
    for entry in fam.entries:
        message = str(entry.get("message") or "").strip().rstrip(".")
        if not message or entry.key in never or (len(message.split()) < BARE_MIN_WORDS and entry.key not in also):
            continue
        if any(f.needle.lower() == message.lower() for f in out):
            continue  # two entries of one text (CUDA's 200 and 300): the first, as lookup gives it
        out.append(Form(family=fam.id, id=str(form.get("id", "bare")), needle=message,
                        pattern=Pattern(template.replace("{message}", re.escape(message)), where),
                        key="message", source=str(form.get("source", "")), example=str(form.get("example", "")),
                        line=True, bare=True, entry=entry.key, unless=unless, when=when))
    out.sort(key=lambda f: -len(f.needle))
    return [dataclasses.replace(f, longer=tuple(g.needle.lower() for g in out
                                                if len(g.needle) > len(f.needle) and f.needle.lower() in g.needle.lower()))
            for f in out]


# Documents message_cache.py gave for the next _family_at calls, so that a family is built once
# and shared whichever way it was asked for.
_PRELOADED: Dict[Tuple[Path, Tuple[int, int]], Dict[str, Any]] = {}


@functools.lru_cache(maxsize=None)
def _family_at(path: Path, stamp: Tuple[int, int]) -> Family:
    # stamp (mtime, size): a file rewritten in place is read again
    cached = _PRELOADED.pop((path, stamp), None)
    if cached is not None:
        try:
            return _family(path, cached)
        except Exception:  # a cache file somebody edited: the TOML is the truth
            pass
    return _family(path)


@functools.lru_cache(maxsize=None)
def families(ids: Optional[Tuple[str, ...]] = None) -> Tuple[Family, ...]:
    """Every shipped catalogue in file-name order, or only those whose id is in ``ids`` (a family's
    id is its file's stem, which a test holds): the live kernel-log check reads two families of
    thirty and should not parse the other twenty-eight."""
    paths = sorted(MESSAGES_DIR.glob("*.toml"))
    if ids is not None:
        paths = [p for p in paths if p.stem in ids]
    stamps = [(st.st_mtime_ns, st.st_size) for st in (p.stat() for p in paths)]
    if ids is None:  # paste triage: every catalogue, worth the per-user cache (message_cache.py)
        from hpcdoctor.knowledge import message_cache

        _PRELOADED.update(((p, st), d) for p, st, d in zip(paths, stamps, message_cache.documents(paths, stamps, _parse)))
        try:
            return tuple(_family_at(p, st) for p, st in zip(paths, stamps))
        finally:
            _PRELOADED.clear()
    return tuple(_family_at(p, st) for p, st in zip(paths, stamps))


def entry_data(sid: str) -> Dict[str, Any]:
    """The catalogue entry behind a symptom id ("gas:avx512-unknown", family:key): its fields (a
    release, a switch, a minimum capability the message does not print), {} if none."""
    family, _, key = sid.partition(":")
    for fam in families((family,)):
        entry = fam.by_key.get(key)
        if entry is not None:
            return entry.data
    return {}


def _compiles(pattern: Pattern) -> bool:
    try:
        pattern.compiled()
    except CatalogueError:
        return False
    return True


def problems(fam: Family, known_rules: frozenset = frozenset()) -> List[str]:
    """How a family breaks the schema (``messages/README.md``); empty when it follows it. With
    ``known_rules``, every rule an entry feeds must exist or be declared proposed."""
    out: List[str] = []
    name = fam.path.name
    if not fam.source or not re.search(r"20\d\d-\d\d-\d\d", fam.read):
        out.append(f"{name}: [family] needs a source and a read date")
    seen: Dict[str, int] = {}
    for form in fam.forms:
        if not form.needle or not form.source:
            out.append(f"{name} form {form.id}: needs a needle and a source")
        try:
            form.pattern.compiled()
        except CatalogueError as exc:
            out.append(str(exc))
            continue
        if form.key not in form.pattern.groupindex:
            out.append(f"{name} form {form.id}: key {form.key!r} is not a named group of its pattern")
        if _UNBOUNDED.search(form.pattern.pattern):
            out.append(f"{name} form {form.id}: unbounded repeat in pattern")
        if form.bare and (re.escape(form.needle) not in form.pattern.pattern
                          or any(p is not None and not _compiles(p) for p in (form.unless, form.when))):
            out.append(f"{name} form {form.id}: a bare form's pattern needs {{message}}, and its unless and when must compile")
        if not fam.entries and not form.emitter:
            out.append(f"{name} form {form.id}: a family without entries quotes every match back: its forms name their emitter")
    for e in fam.entries:
        where = f"{name} entry {e.key or '?'}"
        seen[e.key] = seen.get(e.key, 0) + 1
        if not e.key:
            out.append(f"{where}: no key")
        if not e.get("means"):
            out.append(f"{where}: no means")
        if e.get("cause") not in CAUSES:
            out.append(f"{where}: cause {e.get('cause')!r} is not one of {sorted(CAUSES)}")
        if e.pattern is not None:
            try:
                e.pattern.compiled()
            except CatalogueError as exc:
                out.append(str(exc))
            if not e.needle:
                out.append(f"{where}: a pattern without a needle")
            if _UNBOUNDED.search(e.pattern.pattern):
                out.append(f"{where}: unbounded repeat in pattern")
            if not (e.get("source") or fam.source) or not re.search(r"20\d\d-\d\d-\d\d", str(e.get("read") or fam.read)):
                out.append(f"{where}: needs a source and a read date")
        if e.get("example") and not e.get("example_source") and e.pattern is not None and not e.get("source"):
            out.append(f"{where}: an example needs example_source")
        if e.get("sdk_message") and not e.get("confirmed_by"):
            # a text replaced on a document's word (flexlm.toml, issue 24) names that document
            out.append(f"{where}: sdk_message without confirmed_by: which document gave the text that replaced it?")
        for rule in e.get("rules") or []:
            if known_rules and rule not in known_rules and rule not in fam.proposed_rules:
                out.append(f"{where}: feeds rule {rule!r}, which neither exists nor is proposed")
        for rule in e.get("needs") or {}:
            if rule not in (e.get("rules") or []):
                out.append(f"{where}: needs says what rule {rule!r} reads besides it, but the entry does not feed {rule!r}")
    out += [f"{name}: key {k!r} appears {n} times" for k, n in seen.items() if n > 1]
    return out
