"""Catalogued messages in a paste (hpcdoctor/knowledge/messages/), and error lines that no
catalogue knows, quoted back so support staff see they were looked at.

Each match becomes a ``ticket.symptoms`` entry: ``id`` is
``<family>:<key>`` (``cuda:cudaErrorNoKernelImageForDevice``), with the family, key, code, cause,
the rules the entry feeds and the line it was read on. A form whose message is not in its family's
table gives ``<family>:unlisted`` with the text it captured: an emitter's new message is read as
new, never as its nearest neighbour."""

from __future__ import annotations

import re
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from hpcdoctor import knowledge
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.scan import NeedleIndex, NeedleSet, keep_windows, lines_holding, lower, window_at
from hpcdoctor.triage.translated import to_english

# Findings per family and unlisted error lines per paste: a log that repeats one error on every
# line is one finding, and a paste of ten thousand distinct errors is not read to the end of them.
MAX_PER_FAMILY = 32
MAX_UNLISTED = 8
# Lines read per form or pattern: a log that prints one message on a hundred thousand lines is that
# message repeated; reading each would cost seconds on a 16 MiB paste for nothing new.
MAX_LINES_PER_NEEDLE = 2048
# Lines kept of a listing (an entry with all = true: every NCCL WARN of a log, one finding each).
MAX_LINES_PER_LISTING = 50
# What a line-only entry (line = true) is matched on: its own line, cut here.
LINE_CAP = 4096
# A line's shape without its numbers: a log repeats one message with another timestamp, count,
# sector or address, and a family reads each message once, so a generic family must not quote the
# repeats back as uncatalogued.
_NUMBERS = re.compile(r"(?:0x)?[0-9a-f]{0,16}[0-9][0-9a-f]{0,16}")


def _skeleton(line: str) -> str:
    return _NUMBERS.sub("#", lower(line.strip()))[:200]


def _distinct_lines(text: str, low: str, needle: str, with_next: bool = False):
    """The lines holding ``needle``, each distinct text once, the first MAX_LINES_PER_NEEDLE of them.
    ``with_next``: distinct with the line after it (one REPL expression, two different answers)."""
    texts: Set[str] = set()
    for n, (line_no, start, end) in enumerate(lines_holding(text, low, needle)):
        if n >= MAX_LINES_PER_NEEDLE:
            return
        after = text.find("\n", end + 1, end + 1 + LINE_CAP) if with_next else end
        line = text[start:after if after != -1 else min(len(text), end + 1 + LINE_CAP)]
        if line in texts:
            continue
        texts.add(line)
        yield line_no, start, end


def _record(fam: messages.Family, entry: "messages.Entry | None", line_no: int, line: str, groups: Dict[str, Any],
            captured: str, form: "messages.Form | None" = None) -> Dict[str, Any]:
    fields = {k: str(v)[:300] for k, v in groups.items() if v is not None}
    if entry is None:
        # A form that names its emitter (errorlines.toml) says whose error line this is.
        said = (f"{form.emitter}, not in hpcdoctor's catalogue" if form is not None and form.emitter
                else f"a {fam.title} message that is not in hpcdoctor's catalogue")
        out = {"id": f"{fam.id}:unlisted", "family": fam.id, "line": line_no, "text": line.strip()[:300],
               "means": said, "unlisted": True, "captured": captured.strip()[:200], **fields}
        if form is not None and form.emitter:
            out.update(emitter=form.emitter, form=form.id)
        return out
    out = {**fields, "id": entry.id, "family": fam.id, "key": entry.key, "line": line_no, "text": line.strip()[:300],
           "means": entry.get("means", ""), "cause": entry.get("cause", ""), "rules": list(entry.get("rules") or [])}
    for extra in ("code", "message", "action"):
        if entry.get(extra) not in (None, ""):
            out[extra] = entry.get(extra)
    if entry.get("claims"):
        out["claims"] = list(entry.get("claims"))
    return out


# Markdown's and mail's quoting, or a line number that an excerpt put before the program's own line:
# Spack's build-log excerpt ("  >> 357    " on the error, five spaces on its context:
# spack/util/log_parse.py make_log_context), cat -n's "%6d\t".
_DECORATION = re.compile(r"^(?:\s{0,8}(?:>> )?[0-9]{1,7}(?: {2,11}|\t)|[#>*`\s]{1,12})")


def _unfinished_status() -> "re.Pattern[str]":
    """A status another program left unfinished at the line's start (conda's spinner, cut by a kill:
    "Solving environment: \\ Killed"), which a form that reads from the line's start steps over
    (knowledge/line_prefixes.toml)."""
    spinner = knowledge.load("line_prefixes")["conda_spinner"]
    said = "|".join(re.escape(m) for m in spinner["messages"])
    marks = "|".join(re.escape(m) for m in spinner["indicators"])
    return re.compile(rf"^(?:{said})(?: \([^()\n]{{1,60}}\))?: (?:{marks}) ")


_UNFINISHED = _unfinished_status()


# The families object the needles were filed from, and the filing: remade whenever
# messages.families() gives another tuple (a catalogue changed, a site's folder, its cache cleared).
_FILED: Dict[Optional[tuple], tuple] = {}


def _needles(ids: Optional[tuple]) -> Tuple[NeedleSet, Dict[str, List[Tuple[str, int]]]]:
    """Every needle of the families, and for each the entries that hold it (family id, index in its
    entries): a paste's index answers for all the needles at once, from its own words, and only the
    entries of the needles it holds are tried."""
    fams = messages.families(ids)
    filed = _FILED.get(ids)
    if filed is not None and filed[0] is fams:
        return filed[1]
    entries: Dict[str, List[Tuple[str, int]]] = {}
    for fam in fams:
        for i, entry in enumerate(fam.entries):
            if entry.pattern is not None:
                for n in dict.fromkeys(n.lower() for n in entry.needles):
                    entries.setdefault(n, []).append((fam.id, i))
    result = NeedleSet([form.needle.lower() for fam in fams for form in fam.forms] + list(entries)), entries
    _FILED[ids] = (fams, result)
    return result


def _literal_message(message: Any) -> bool:
    """An entry's message that is the program's literal words (no %s or <placeholder>), long enough
    not to be found by chance in another line."""
    text = str(message or "")
    return len(text) >= 16 and "%" not in text and "<" not in text and "{" not in text


def find_messages(text: str, families: Optional[Sequence[str]] = None,
                  check: Optional[Callable[[str], None]] = None) -> List[Dict[str, Any]]:
    """Every catalogued message in ``text`` (first line each; every line of a listing), in line
    order, from every family or those named. Linear in the paste: see hpcdoctor.triage.scan.
    ``check(what)`` is called before each family (paste.py's clock against --budget)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    low = lower(text)
    # Every distinct line once: a needle (one line's literal) is in the text exactly when it is in
    # these, and a paste of one line repeated is short here; the index then answers for thousands of
    # needles without a search of the paste for each.
    present = NeedleIndex("\n".join(dict.fromkeys(low.split("\n"))))
    # GNU ld's and glibc's messages in the user's language are read as their English (translated.py);
    # a finding still quotes the line the user pasted, and says in which language it was printed.
    text, low, translated = to_english(text, present, low)
    if translated:
        present = NeedleIndex("\n".join(dict.fromkeys(low.split("\n"))))
    found: List[Dict[str, Any]] = []
    # Generic families last: they read only what no specific family read, on its line or in its words
    # (an error a title retells and the traceback repeats is one reading).
    # errorlines.toml, which knows only how a line looks and never what it says, reads after every
    # table of a program's own texts (the batch systems' error tables are generic too).
    ids = tuple(sorted(families)) if families is not None else None
    fams = sorted(messages.families(ids), key=lambda f: (f.generic, f.id == "errorlines"))
    needle_set, entries_of = _needles(ids)
    held = present.held(needle_set)
    tried: Dict[str, Set[int]] = {}   # family id -> its entries that hold a needle the paste holds
    for needle in held:
        for fam_id, i in entries_of.get(needle, ()):
            tried.setdefault(fam_id, set()).add(i)
    taken: Set[int] = set()
    said: Set[str] = set()
    shapes: Set[str] = set()
    # What an entry matched, numbers set aside: the same message with other numbers on a later line
    # (a second step "exceeded memory limit", another pid) is that entry's, which records its first
    # match only; the generic families must not call it "not in hpcdoctor's catalogue".
    matched_shapes: Set[str] = set()

    skeletons: Dict[int, str] = {}   # a line's shape is computed once, whichever forms ask

    def covered(line_no: int, start: int, end: int) -> bool:
        if line_no in taken or any(w in low[start:end] for w in said):
            return True
        if not shapes and not matched_shapes:
            return False
        if line_no not in skeletons:
            skeletons[line_no] = _skeleton(text[start:end][:LINE_CAP])
        line_shape = skeletons[line_no]
        return line_shape in shapes or any(m in line_shape for m in matched_shapes)

    bare_read = False
    for fam in fams:
        if check is not None:
            check(f"looking for {fam.title}")
        if fam.generic and not bare_read:
            bare_read = True
            found += _bare_messages(fams, text, low, held, found)
        if fam.generic:
            # Each generic family reads what neither a specific family nor an earlier generic one read
            # (errno's strerror text before errorlines' bare "<file>:<n>: error:").
            taken = {s["line"] for s in found}
            # The user's own words (prose.toml) retell no program's line: a program's line that repeats
            # them is still read ("# Too many open files" over SeaDrive's "...:Too many open files.").
            said = {lower(str(s["matched"])) for s in found
                    if len(str(s.get("matched") or "")) >= 12 and s.get("family") != "prose"}
            # A read entry's own text covers a later line that repeats it, where the reading matched
            # only its code (a title cut short, read with the quoted line below it: "Error 803").
            said |= {lower(str(s["message"])) for s in found if _literal_message(s.get("message"))}
            shapes = {_skeleton(s["text"]) for s in found if not s.get("unlisted")}
            matched_shapes = {_skeleton(str(s["matched"])) for s in found
                              if not s.get("unlisted") and len(str(s.get("matched") or "")) >= 24}
        seen: Set[str] = set()
        for form in fam.forms:
            needle = form.needle.lower()
            if needle not in held or form.bare:
                continue
            for line_no, start, end in _distinct_lines(text, low, needle):
                if len(seen) >= MAX_PER_FAMILY:
                    break
                if fam.generic and covered(line_no, start, end):
                    continue
                if form.line:
                    # a line quoted in Markdown or mail ("# " title, "> ", "`...`", "**") still starts
                    # with its program's convention once that decoration is set aside
                    where, at = text[start:end][:LINE_CAP].strip(), 0
                    if form.anchored:
                        where = _UNFINISHED.sub("", _DECORATION.sub("", where, count=1), count=1)
                else:
                    where, at = window_at(text, start, end)
                m = form.pattern.match(where, at) if form.anchored else form.pattern.search(where, at)
                if not m or m.group(form.key) is None:
                    continue
                captured = m.group(form.key)
                entry = fam.lookup(form.key, captured, form.name_prefix)
                if entry is None and form.retold:
                    continue  # a number in a sentence that the table lacks is not an error code read
                mark = entry.key if entry else "unlisted:" + messages.norm(captured)[:80]
                if mark in seen:
                    continue
                seen.add(mark)
                groups = {k: v for k, v in m.groupdict().items() if k != form.key}
                groups[form.key] = captured
                # The message a keyed form read covers a later line that repeats it (the generic families
                # then leave that line alone); the whole match may run on into the lines after it.
                known = str(entry.get("message") or "") if entry is not None else ""
                record = dict(_record(fam, entry, line_no, text[start:end], groups, captured, form),
                              matched=(known if known and known.lower() in captured.lower() else
                                       captured.strip() if entry is not None else m.group(0))[:200])
                if form.retold:
                    record["retold"] = True
                found.append(record)
                if fam.generic:
                    taken.add(line_no)  # one reading a line: its first form that matches
        for i in sorted(tried.get(fam.id, ())):
            entry = fam.entries[i]
            listing = bool(entry.get("all"))
            listed = 0
            lines_read: Set[int] = set()   # a listing's line that holds two of its needles is one line
            for needle in (n.lower() for n in entry.needles):
                if entry.key in seen or needle not in held:
                    continue
                for line_no, start, end in _distinct_lines(text, low, needle, listing and bool(entry.get("window"))):
                    if line_no in lines_read or (fam.generic and covered(line_no, start, end)):
                        continue
                    # A line-only entry is matched on its line alone (a short needle on many lines made
                    # the windows cost seconds on a 16 MiB paste); the others on the window from its line.
                    # A listing whose answer follows on the next line (a REPL's) asks for the window.
                    if entry.get("line") or (listing and not entry.get("window")):
                        m = entry.pattern.search(text[start:end][:LINE_CAP])
                    else:
                        joined, at = window_at(text, start, end)
                        # starts_before: a long message whose stable part comes late may begin on the two
                        # lines above its needle (a warning wrapped by a terminal before the needle).
                        m = entry.pattern.search(joined, 0 if entry.get("starts_before") else at)
                    if not m:
                        continue
                    record = dict(_record(fam, entry, line_no, text[start:end], m.groupdict(), m.group(0)),
                                  matched=m.group(0)[:200])
                    lines_read.add(line_no)
                    if listing:
                        found.append(dict(record, listing=True))
                        listed += 1
                        if listed < MAX_LINES_PER_LISTING:
                            continue
                    else:
                        found.append(record)
                    seen.add(entry.key)
                    break
    if not bare_read:
        found += _bare_messages(fams, text, low, held, found)
    for s in found:
        if s["line"] in translated:
            lang, own = translated[s["line"]]
            s.update(text=own.strip()[:300], language=lang, read_as=s["text"])
    found.sort(key=lambda s: s["line"])
    return found


def _bare_messages(fams, text: str, low: str, held, found: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """An emitter's message printed after a prefix no form knows ("Error 804: forward compatibility
    was attempted on non supported HW", "launch failed: no kernel image ..."), read after every
    specific family, on a line where no reading already holds it, once an entry (Form.bare)."""
    out: List[Dict[str, Any]] = []
    ids = {s["id"] for s in found}
    by_line: Dict[int, List[Dict[str, Any]]] = {}
    for s in found:
        by_line.setdefault(s["line"], []).append(s)
    matches: Dict[int, bool] = {}

    def matched(rx) -> bool:
        # a family's bare forms share one unless and one when: each searches the paste once
        if id(rx) not in matches:
            matches[id(rx)] = rx.search(text) is not None
        return matches[id(rx)]

    for fam in fams:
        if fam.generic:
            continue
        for form in fam.forms:
            needle = form.needle.lower()
            if not form.bare or needle not in held or f"{fam.id}:{form.entry}" in ids:
                continue
            if (form.unless is not None and matched(form.unless)) or (form.when is not None and not matched(form.when)):
                continue
            for line_no, start, end in _distinct_lines(text, low, needle):
                if any(needle in lower(str(s.get("message") or "")) or needle in lower(str(s.get("matched") or ""))
                       for s in by_line.get(line_no, ())):
                    continue  # a reading of this line already holds the message (a form's, or a longer one's)
                if form.longer and any(longer in low[start:end] for longer in form.longer):
                    continue  # the line's text is a longer message that holds this one, read on another line
                m = form.pattern.search(text[start:end][:LINE_CAP])
                if not m:
                    continue
                entry = fam.by_key[form.entry]
                record = dict(_record(fam, entry, line_no, text[start:end], {"message": m.group("message")},
                                      m.group("message")), matched=m.group("message")[:200], bare=True)
                out.append(record)
                by_line.setdefault(line_no, []).append(record)
                ids.add(entry.id)
                break
    return out


# The last line of a Python traceback, or a process killed by a signal: the lines a user pastes
# as "the error". Anchored on literals found first, bounded, one line at a time. A line may start
# with what quoted or logged it: Markdown ("> ", "**"), pytest's "E   ", a rank's or a worker's tag
# ("[rank0]: ", "(RayWorker pid=7) "), or a timestamp a log collector glued on ("6-10-2022 08:49:15").
_PREFIX = (r"[\s>|E*_`#-]{0,40}(?:(?:\[[^\]\n]{1,40}\]|\([^)\n]{1,60}\)):?[ \t]{0,4}){0,3}"
           r"(?:[0-9][0-9/.:,T-]{3,11}[ T][0-9][0-9:.,]{4,14}[ \t]{0,3})?")
_EXCEPTION = re.compile(r"^" + _PREFIX + r"(?P<exc>[A-Za-z_][\w.]{0,80}(?:Error|Exception|Interrupt))"
                        r"(?::[ \t]{0,4}(?P<msg>[^\n]{0,300}))?$")
_PYTHON = knowledge.load("python_exceptions")
# Inside a sentence or a title ("... throws ValueError: invalid literal for int()") only Python's own
# built-in classes, and a module-qualified class (torch.cuda.OutOfMemoryError): a capitalised word
# ending in "Error:" in prose is too often not Python's. Markdown's "_" may open the name ("**_RuntimeError").
_INLINE = re.compile(r"(?<![A-Za-z0-9.])(?P<exc>" + "|".join(sorted(_PYTHON["builtins"]["names"], key=len, reverse=True))
                     + r"|[a-z_][a-z0-9_]{0,40}(?:\.[A-Za-z_][\w]{0,40}){1,6}(?:Error|Exception)): (?P<msg>\S[^\n]{3,300})")
# What every in-line name ends with, as a literal: the in-line pattern is tried only where one is.
_INLINE_ENDS = ("Error: ", "Exception: ", "Interrupt: ", "Group: ")


def _names_inline(line: str) -> bool:
    return any(end in line for end in _INLINE_ENDS)


_SIGNAL = re.compile(r"(?:Segmentation fault|Bus error|Illegal instruction|Aborted)(?: \(core dumped\))?\s{0,8}$")
# A program's failure told in its own words at the start of a line ("Cannot get access to MSRs.",
# "Can't open cache DB: ...", "prog: unable to ...") or shouted ("CUDA ERROR ...: invalid device
# symbol"): the shapes of a message, not a sentence; a line that speaks in the first person or asks,
# and a Markdown heading (a ticket's title, in the user's words), is left alone.
_FAILURE_LINE = re.compile(r"^" + _PREFIX + r"(?:[\w./-]{1,60}: ){0,2}(?:Cannot|Can't|Can not|Could not|Couldn't|"
                           r"Unable to|Failed to|Failure) \S[^\n]{2,300}$")
_FAILURE_NEEDLES = ("cannot ", "can't ", "can not ", "could not ", "couldn't ", "unable to ", "failed to ", "failure ")
_SHOUTED = re.compile(r"(?<![\w-])(?:ERROR|FATAL)(?![\w-])")
# "I" but not "I/O" (a device error's own words)
_FIRST_PERSON = re.compile(r"(?<![\w'/])(?:I|i|I'm|I've|[Mm]y|[Ww]e|[Oo]ur|[Mm]e|[Uu]s)(?![\w'/])|\?\s{0,4}$")
# A program's message names what failed: a path, a quoted name, a code, an acronym ("MSRs"), a
# "key: value"; a sentence about a failure ("Failed to start the training on the new nodes, but it
# works on the old ones") names none. torch's collect_env prints "Could not collect" for every item it
# cannot find (torch/utils/collect_env.py): its own placeholder, no failure.
_NAMES_A_THING = re.compile(r"[:'\"/`(=<\[]|[A-Z]{2,}|[0-9]")
_NOT_A_FAILURE = ("Could not collect",)


def _raised(line: str) -> bool:
    return any(rx.search(line) for rx in (_EXCEPTION, _INLINE) if rx is not _INLINE or _names_inline(line))


def _not_prose(line: str) -> bool:
    return not line.lstrip().startswith("#") and not any(n in line for n in _NOT_A_FAILURE) \
        and not _FIRST_PERSON.search(line)


def _failure_shaped(line: str) -> bool:
    return bool(_FAILURE_LINE.search(line)) and bool(_NAMES_A_THING.search(line)) and _not_prose(line)


def _shouted(line: str) -> bool:
    return bool(_SHOUTED.search(line)) and _not_prose(line)
# A traceback's first line: Python's own, or IPython's, which names the class on the same line. A
# paste cut before the last line still shows that a Python program raised, and which class.
_HEADER = _PYTHON["tracebacks"]["header"]
_IPYTHON_HEADER = re.compile(r"^[\s>|*_`#-]{0,12}(?P<exc>[A-Za-z_][\w.]{0,80}) {2,120}" + re.escape(_HEADER) + r"\s{0,8}$")


# How far below its header a traceback's exception line is looked for: a deep stack of a few
# hundred frames, each two or three lines, and not the rest of a 16 MiB log.
_TRACEBACK_LINES = 2000
_RAISED = re.compile(r"^" + _PREFIX + r"(?:[A-Za-z_][\w.]{0,80}:(?: |$)|(?:[A-Za-z_][\w.]{0,80})?(?:Error|Exception|Interrupt|Exit|Iteration)\s{0,8}$)")


def _raised_after(text: str, start: int, end: int) -> bool:
    """Whether a line below a traceback's header names what was raised. A log's prefix on the
    header's line ("face_1  | ", vLLM's "ERROR 03-26 05:25:01 engine.py:389] ", pip's indentation)
    is set aside on the lines that carry the same prefix; then the raised line is the one indented
    less than the frames ("  File ..."), or any such line where the paste lost the indentation."""
    prefix = _skeleton_of(text[start:end][:text[start:end].find(_HEADER)]) if _HEADER in text[start:end] else ""
    frames: Optional[int] = None
    at = end
    for _ in range(_TRACEBACK_LINES):
        nxt = text.find("\n", at + 1)
        line = text[at + 1:len(text) if nxt == -1 else nxt][:1024]
        at = nxt
        if prefix and _skeleton_of(line[:len(prefix)]) == prefix:
            line = line[len(prefix):]
        body = line.lstrip()
        indent = len(line) - len(body)
        if body.startswith("File "):
            frames = indent if frames is None else min(frames, indent)
        elif body and (frames is None or frames == 0 or indent < frames) and (_RAISED.search(body) or _INLINE.search(body)):
            return True
        elif _HEADER in line:
            return False   # the next traceback began: this one had no exception line
        if nxt == -1:
            return False
    return False


def _skeleton_of(s: str) -> str:
    return re.sub(r"[0-9]", "#", s)


def find_unlisted_errors(text: str, read: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """Error lines that nothing already ``read`` (the catalogued messages and symptoms found) covers,
    on their line or by their words (a traceback repeats its message on the raise line and on the
    last line): quoted back as not in hpcdoctor's catalogue, never silently passed over. A traceback
    whose last line is not in the paste is quoted back by its first."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    low = lower(text)
    read = list(read)
    taken = {s.get("line") for s in read}
    said = {lower(str(w)) for s in read for w in (s.get("matched"), s.get("message")) if w and len(str(w)) >= 12}
    out: List[Dict[str, Any]] = []

    def quote(tests, record: Dict[str, str]) -> bool:
        """Quote back each line holding a needle that its test accepts and nothing read covers;
        True once MAX_UNLISTED lines are quoted."""
        for needle, accept in tests:
            for line_no, start, end in lines_holding(text, low, needle):
                if len(out) >= MAX_UNLISTED:
                    return True
                if line_no in taken:
                    continue
                line = text[start:end][:1024]
                if accept(line) and not any(w in low[start:start + 1024] for w in said):
                    taken.add(line_no)
                    out.append({"id": "unlisted-error", "line": line_no, "text": line.strip()[:300], **record})
        return False

    if quote([(n, _raised) for n in ("error", "exception", "interrupt")]
             + [(n, _SIGNAL.search) for n in ("segmentation fault", "bus error", "illegal instruction", "aborted")],
             {"means": "an error line that is not in hpcdoctor's catalogue"}) \
            or quote([(n, _failure_shaped) for n in _FAILURE_NEEDLES] + [(n, _shouted) for n in ("error", "fatal")],
                     {"emitter": "a line shaped like a program's failure message",
                      "means": "a program's failure message that is not in hpcdoctor's catalogue"}):
        return sorted(out, key=lambda s: s["line"])
    # One traceback cut before its last line is enough to say so: the first header followed by no
    # exception line (read by a catalogue, quoted above, or covered by words read elsewhere).
    for line_no, start, end in lines_holding(text, low, _HEADER.lower()):
        if line_no in taken or len(out) >= MAX_UNLISTED or _raised_after(text, start, end):
            continue
        line = text[start:end][:1024]
        ip = _IPYTHON_HEADER.search(line)
        what = f"a Python traceback of {ip.group('exc')} (IPython's header)" if ip else "a Python traceback"
        out.append({"id": "unlisted-error", "line": line_no, "text": line.strip()[:300],
                    "emitter": f"{what} with no exception line after it in the paste",
                    "means": f"{what}; the paste holds no exception line after it (cut before it?)"})
        break
    return sorted(out, key=lambda s: s["line"])


def kept_for(text: str, families: Sequence[str]) -> str:
    """What a recording keeps of ``text`` for the families named: every line their forms and
    entries could read, the rest blanked (hpcdoctor.triage.scan.keep_windows)."""
    needles = [n.lower() for fam in messages.families(tuple(sorted(families)))
               for n in [f.needle for f in fam.forms] + [x for e in fam.entries if e.pattern is not None for x in e.needles]]
    kept = keep_windows(text, needles)
    if text.strip() and not kept.strip():
        # A readable log with nothing to read must not replay as a log that printed nothing.
        kept += "\n" + KEPT_NOTHING
    return kept


KEPT_NOTHING = "(hpcdoctor: no line of this output is one it reads; each was blanked when it was recorded)"
