"""What every pasted environment report needs before it is read: a paste indented or quoted as a
whole by Markdown, full-width colons from CJK input methods, and the words reports print for yes and no."""

from __future__ import annotations

import re
import textwrap

BOOL = {"True": True, "False": False, "Yes": True, "No": False}


def normalise_colons(text: str) -> str:
    """Full-width colons ("GPU 0：", from Chinese and Japanese input methods and locales) read as ":"."""
    return re.sub(r"\uff1a ?", ": ", text) if "\uff1a" in text else text


def dedent_paste(text: str) -> str:
    """A report pasted inside an indented Markdown block, every line shifted by the same amount,
    or quoted ("> ") as a whole."""
    text = normalise_colons(text.replace("\r\n", "\n"))
    lines = text.split("\n")
    filled = [l for l in lines if l.strip()]
    if filled and all(re.match(r"^\s*>", l) for l in filled):
        text = "\n".join(re.sub(r"^\s*> ?", "", l) for l in lines)
    return textwrap.dedent(text)
