"""The terminal report: rich when stdout is a terminal, plain text otherwise or under NO_COLOR."""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, IO, Optional

from hpcdoctor.report.summary import failed_checks, node_lines, paste_gpu_line, paste_gpu_sources, skipped_by_fact

ICONS = {"error": ("✖", "bold red"), "warning": ("▲", "bold yellow"), "advice": ("●", "cyan"), "info": ("○", "dim")}


def make_console(stream: IO[str], plain: Optional[bool] = None):
    from rich.console import Console

    is_tty = stream.isatty() if hasattr(stream, "isatty") else False
    if plain is None:
        plain = not is_tty or bool(os.environ.get("NO_COLOR"))
    # Plain output is for logs and pipes: no colour, no hard wrapping, no terminal tricks.
    con = Console(file=stream, highlight=False, no_color=plain, soft_wrap=not is_tty,
                  force_terminal=False if plain else None, emoji=False, width=None if is_tty else 200)
    con.on_broken_pipe = _broken_pipe  # rich would exit 1; the CLI decides what a closed pipe means
    return con


def _broken_pipe() -> None:
    raise BrokenPipeError("stdout closed by the reader")


def render(doc: Dict[str, Any], verbose: bool = False) -> str:
    """The terminal report as text (the reporter registry's entry), timed by the run's elapsed_s."""
    import io

    buf = io.StringIO()
    write(doc, buf, verbose=verbose, elapsed=doc.get("elapsed_s"))
    return buf.getvalue()


def write(doc: Dict[str, Any], stream: IO[str] = sys.stdout, verbose: bool = False,
          elapsed: Optional[float] = None) -> None:
    # Values come from the node, a paste or a bundle: controls are shown escaped, never obeyed.
    from hpcdoctor.report.safe import markup as escape

    con = make_console(stream)
    facts = doc.get("facts", {})
    src = doc.get("source", {})
    host = (facts.get("system") or {}).get("hostname") or ("pasted text" if src.get("mode") == "paste" else "this node")
    where = src.get("path") or src.get("mode", "live")
    timing = f" in {elapsed:.2f}s" if elapsed is not None else ""
    con.print(f"[bold]hpcdoctor[/] {escape(doc['tool']['version'])} · [bold]{escape(str(host))}[/] · "
              f"{escape(str(where))} · {escape(doc.get('depth', 'fast'))} depth{timing}")
    paste = src.get("mode") == "paste"
    for label, text in node_lines(doc):
        con.print(f"[bold]{label:<7}[/] {escape(paste_gpu_line(text) if paste and label == 'GPUs' else text)}")
    if paste:
        for item in src.get("recognised", []):
            con.print(f"[dim]read:   {escape(item)}[/]")
        for note in src.get("notes", []):
            con.print(f"[yellow]note:   {escape(note)}[/]")
    con.print()

    findings = doc.get("findings", [])
    unchecked = doc.get("unchecked") or []
    if not findings and unchecked:
        con.print("[yellow]? no findings in what could be checked[/]")
    elif not findings and paste and doc.get("skipped"):
        # A paste shows part of a machine: silence on what it does not show is not a pass.
        con.print(f"[yellow]? no findings in what the paste shows; {len(doc['skipped'])} rule(s) not judged (below)[/]")
    elif not findings:
        con.print("[green]✓ no findings[/]")
    else:
        n = doc.get("summary", {})
        counts = ", ".join(f"{n.get(s, 0)} {s}" for s in ("error", "warning", "advice", "info") if n.get(s))
        con.print(f"[bold]Findings[/] ({counts})")
        for f in findings:
            icon, style = ICONS.get(f["severity"], ("•", ""))
            subject = f"{escape(f['subject'])}: " if f.get("subject") else ""
            con.print(f"[{style}]{icon} {f['severity']:<7}[/] [bold]{escape(f['code'])} {escape(f['symbol'])}[/]  {subject}"
                      f"{escape(f['message'])}")
            # A fix is copied into a shell: never broken mid-command, whatever the width (the
            # terminal may fold the line on screen; a copy still gives the whole command).
            for i, fix_line in enumerate(str(f["fix"]).splitlines() or [""]):
                label = "[dim]fix:[/] " if i == 0 else "     "
                con.print(f"            {label}{escape(fix_line)}", soft_wrap=True)
    if unchecked:
        con.print()
        con.print("[bold yellow]Could not check[/] (the verdict is open for these)")
        for u in unchecked:
            con.print(f"[yellow]? {escape(u['area'])}[/]: {escape(u['what'])}: {escape(u['reason'])}")
    problems = failed_checks(doc)
    skipped = doc.get("skipped", [])
    if problems or skipped:
        con.print()
    for line in problems:
        con.print(f"[yellow]? check {escape(line)}[/]")
    if skipped:
        if paste and not verbose:
            # Support staff triaging a paste see what could not be judged, one line per missing fact.
            for fact, symbols, why in skipped_by_fact(skipped):
                if fact == "gpus":  # the probe's reason names only the vendor tried last
                    why = "needs gpus: " + paste_gpu_sources()
                names = ", ".join(symbols[:6]) + (f" and {len(symbols) - 6} more" if len(symbols) > 6 else "")
                con.print(f"[dim]- not judged ({len(symbols)}): {escape(names)}: {escape(why)}[/]")
        elif verbose:
            for s in skipped:
                con.print(f"[dim]- skipped {escape(s['code'])} {escape(s['symbol'])}: {escape(s['reason'])}[/]")
        else:
            con.print(f"[dim]{len(skipped)} rule(s) skipped for missing facts (--verbose lists them)[/]")
    if doc.get("plugin_errors"):
        for e in doc["plugin_errors"]:
            con.print(f"[yellow]! plugin not loaded: {escape(e)}[/]")
