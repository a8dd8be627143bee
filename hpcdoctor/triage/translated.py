"""Messages printed in the user's language, read back into the English that hpcdoctor's catalogues
hold (hpcdoctor/knowledge/message_translations.toml): GNU ld's and glibc's texts, which gettext
translates under a locale such as zh_CN.UTF-8 ("/usr/bin/ld: 找不到 -lcuda: 没有那个文件或目录").

``to_english`` rewrites each line that holds a translation into its msgid's English (a translated
format's conversions captured, bounded, and put back in the msgid's own order), line for line, so
that the line numbers stay and every catalogue reads the line as if it were printed in English. The
caller keeps the user's own line for what a finding quotes (triage/messages.py)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.triage.scan import NeedleIndex, NeedleSet, lines_holding, lower

TABLE = "message_translations"
KINDS = ("line", "errstring", "strerror")   # read in this order: a line's whole format first, its errno text last
# Lines rewritten per translation: a log that prints one message on every line is that message repeated.
MAX_LINES_PER_READING = 2048
# A printf conversion: %s, %d, %E, %P (binutils' own), %pB (bfd's), and the positional %2$s.
_CONV = re.compile(r"%(?:(?P<pos>\d{1,2})\$)?(?P<conv>p[A-Za-z]|[-+ #0]?\d{0,3}(?:ll|l|z|h)?[A-Za-z])")
# A translator's space may be a no-break or a narrow no-break one (French "%P\u00a0: "); a paste copied
# from a terminal or a browser often holds a plain space there.
_SPACE = "[ \\t\\u00a0\\u202f]{1,3}"
_SPACES = re.compile(r"[ \t\u00a0\u202f]+")
# What a conversion captures, by its letter: bounded, never past the line.
_ARG = {"P": r"[^\s:：]{1,200}", "E": r"[^\n]{1,200}"}
_OTHER_ARG = r"[^\n]{1,300}?"


@dataclass(frozen=True)
class Reading:
    """One translation of one msgid, in one language."""
    domain: str
    kind: str
    lang: str
    msgid: str
    msgstr: str
    needle: str   # the msgstr's longest literal run, lower case: a line is tried only where it is

    @functools.cached_property
    def _compiled(self) -> Tuple["re.Pattern[str]", List[Tuple[str, Optional[int]]]]:
        return _compile(self.kind, self.msgid, self.msgstr)

    def rewrite(self, line: str) -> str:
        pattern, english = self._compiled
        if self.kind != "line":
            return pattern.sub(lambda m: english[0][0], line)

        def back(m: "re.Match[str]") -> str:
            return "".join(text if pos is None else (m.group(f"a{pos}") or "") for text, pos in english)
        return pattern.sub(back, line, count=1)


def _literal(piece: str) -> str:
    return _SPACE.join(re.escape(p) for p in _SPACES.split(piece))


def _parts(fmt: str) -> List[Tuple[str, Optional[Tuple[int, str]]]]:
    """A format as (literal, None) and ("", (argument number, conversion letter)) pieces, in order."""
    out: List[Tuple[str, Optional[Tuple[int, str]]]] = []
    at, n = 0, 0
    for m in _CONV.finditer(fmt):
        if m.start() > at:
            out.append((fmt[at:m.start()], None))
        n += 1
        out.append(("", (int(m.group("pos")) if m.group("pos") else n, m.group("conv")[-1])))
        at = m.end()
    if at < len(fmt):
        out.append((fmt[at:], None))
    return out


def _compile(kind: str, msgid: str, msgstr: str):
    msgid, msgstr = msgid.rstrip("\n").rstrip(), msgstr.rstrip("\n").rstrip()
    if kind == "errstring":
        # dlerror(): "<object>: " + the translated text
        return re.compile(r"(?<=: )" + _literal(msgstr)), [(msgid, None)]
    if kind == "strerror":
        # ld's "%s: %E", dlerror()'s ": %m", and errno's "(<text>)"
        return re.compile(r"(?:(?<=: )|(?<=：)|(?<=\())" + _literal(msgstr)), [(msgid, None)]
    parts = _parts(msgstr)
    regex, seen = [], set()
    for i, (text, conv) in enumerate(parts):
        if conv is None:
            regex.append(_literal(text))
            continue
        pos, letter = conv
        last = i == len(parts) - 1
        body = _ARG.get(letter, _OTHER_ARG)
        if pos in seen:   # a translation that repeats an argument matches it the second time as text
            regex.append(body)
            continue
        seen.add(pos)
        regex.append(f"(?P<a{pos}>{body})" + (r"(?=[ \t]{0,8}$)" if last and body == _OTHER_ARG else ""))
    english = [(text, None) if conv is None else ("", conv[0]) for text, conv in _parts(msgid)]
    return re.compile("".join(regex)), english


def _needle(msgstr: str) -> str:
    runs = [r.strip() for text, conv in _parts(msgstr.rstrip("\n")) if conv is None
            for r in re.split(r"[\u00a0\u202f]", text)]
    return lower(max(runs, key=len)) if runs else ""


@functools.lru_cache(maxsize=1)
def readings() -> Tuple[Reading, ...]:
    """Every translation in the table, the line formats first, the longest first within a kind. Two
    languages that print the same words (zh_CN and zh_TW's "找不到 %s") are one reading of both."""
    langs: Dict[Tuple[str, str, str, str], List[str]] = {}
    for msg in knowledge.load(TABLE)["message"]:
        for lang, said in msg["msgstr"].items():
            for msgstr in ([said] if isinstance(said, str) else said):
                langs.setdefault((msg["domain"], msg["kind"], msg["msgid"], msgstr), []).append(lang)
    out = [Reading(domain, kind, " or ".join(sorted(names)), msgid, msgstr, _needle(msgstr))
           for (domain, kind, msgid, msgstr), names in langs.items()]
    return tuple(sorted((r for r in out if r.needle), key=lambda r: (KINDS.index(r.kind), -len(r.msgstr))))


@functools.lru_cache(maxsize=1)
def _reading_needles() -> NeedleSet:
    """The readings' needles filed once, so a paste's index answers for all of them at once (as
    find_messages asks for the catalogues' own)."""
    return NeedleSet(r.needle for r in readings())


def to_english(text: str, present: Optional[NeedleIndex] = None, low: Optional[str] = None
               ) -> Tuple[str, str, Dict[int, Tuple[str, str]]]:
    """``text`` with every translated GNU ld / glibc message read back into English, its lower case
    (scan.lower; ``low`` is the text's, where the caller has it), and for each line rewritten (numbered
    from 1): (the language, the user's own line)."""
    if low is None:
        low = lower(text)   # a paste of CJK text takes seconds here at 16 MiB: pass the caller's
    if present is None:
        present = NeedleIndex("\n".join(dict.fromkeys(low.split("\n"))))
    lines: Dict[int, List] = {}   # line number -> [start, end, text now, the languages it may be]
    held = present.held(_reading_needles())
    for r in readings():
        if r.needle not in held:
            continue
        for n, (line_no, start, end) in enumerate(lines_holding(text, low, r.needle)):
            if n >= MAX_LINES_PER_READING:
                break
            now = lines[line_no][2] if line_no in lines else text[start:end]
            new = r.rewrite(now)
            if new != now:
                said = set(r.lang.split(" or "))
                if line_no in lines:
                    # a second reading of the line narrows its language: ld's "找不到 %s" is zh_CN's and
                    # zh_TW's, the errno text after it 没有那个文件或目录 zh_CN's alone
                    lines[line_no][2] = new
                    lines[line_no][3] = (lines[line_no][3] & said) or lines[line_no][3]
                else:
                    lines[line_no] = [start, end, new, said]
    if not lines:
        return text, low, {}
    out, out_low, at = [], [], 0
    for line_no in sorted(lines):
        start, end, new, _ = lines[line_no]
        out += [text[at:start], new]
        out_low += [low[at:start], lower(new)]
        at = end
    out.append(text[at:])
    out_low.append(low[at:])
    return "".join(out), "".join(out_low), {n: (" or ".join(sorted(v[3])), text[v[0]:v[1]]) for n, v in lines.items()}
