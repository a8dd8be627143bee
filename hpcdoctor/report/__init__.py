"""Reporters: one ``render(doc) -> str`` per output format, looked up by name.

A new format is a module with a ``render(doc)`` function and one line in ``REPORTERS``; the
command line offers whatever is listed here. Modules are imported when used: the terminal
reporter pulls in rich, which a ``--format json`` run in every job step need not pay for.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict

# format name -> module under hpcdoctor.report holding its render(doc) -> str
REPORTERS: Dict[str, str] = {
    "terminal": "terminal",
    "json": "json_report",
    "markdown": "markdown",
    "prometheus": "prometheus",
}


def reporter(fmt: str) -> Callable[[Dict[str, Any]], str]:
    if fmt not in REPORTERS:
        raise KeyError(f"no reporter for format {fmt!r}")
    return importlib.import_module(f"hpcdoctor.report.{REPORTERS[fmt]}").render


def render(doc: Dict[str, Any], fmt: str) -> str:
    return reporter(fmt)(doc)
