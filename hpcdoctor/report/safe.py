"""Rendering untrusted values: data, never terminal control, markup or code.

Host names, GPU names, environment values, pasted text and other ranks' reports come from outside.
A GPU name carrying OSC 52 would write the reader's clipboard, ``ESC[2J`` would clear their
screen, bidirectional overrides would make a fix read differently from what runs, and a code
fence in an environment value would close the Markdown block a support engineer pastes. Every
reporter routes such values through these functions; they run in linear time.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the line and paragraph separators, and the bidirectional controls
# (Trojan Source) are shown escaped, and so are the zero-width characters, which make two
# different names look the same (issue 27). Newline and tab are controls too inside one value.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2060-\u2064\ufeff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# In a whole block of plain text the reporter's own line breaks are kept.
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2060-\u2064\ufeff\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _visible(m: "re.Match[str]") -> str:
    code = ord(m.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def term(value: object) -> str:
    """One value for a terminal or a log line: every control character shown as an escape."""
    text = _SURROGATE.sub(_visible, str(value))
    return _CONTROL.sub(_visible, text)


def term_block(text: str) -> str:
    """A whole plain-text report (diff, nhc, cluster, quiet lines): controls escaped, lines kept."""
    return _CONTROL_BUT_NEWLINE.sub(_visible, _SURROGATE.sub(_visible, text))


def markup(value: object) -> str:
    """A value inside rich markup: controls escaped, then rich's own markup escaped."""
    from rich.markup import escape

    return escape(term(value))


# Characters that start Markdown or HTML constructs inside a line of text or a table cell.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~&])")


def md_text(value: object) -> str:
    """A value inside Markdown prose or a table cell: no links, images, HTML, emphasis or cell
    breaks. A backslash before each special character makes it literal in CommonMark and GFM; a
    cell's pipe needs it too, and a pasted ``\\|`` becomes ``\\\\\\|``, which stays one cell."""
    return _MD_SPECIAL.sub(r"\\\1", term(value))


def md_code(value: object) -> str:
    """A value as inline code: the fence is one backtick longer than any run inside it."""
    text = term(value)
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(body: str, lang: str = "") -> str:
    """A fenced code block that its content cannot close: the fence is longer than any backtick
    or tilde run in the body (CommonMark closes a fence only with one at least as long)."""
    body = term_block(body)
    longest = max((len(r) for r in re.findall(r"`{3,}", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body}\n{fence}"
