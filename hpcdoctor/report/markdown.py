"""Markdown for a ticket reply: the diagnosis first (findings ranked, each with the command that fixes
it), then what was read, the node summary, and one line on what could not be checked."""

from __future__ import annotations

from typing import Any, Dict, List

from hpcdoctor import knowledge
from hpcdoctor.report.safe import md_block, md_code, md_text
from hpcdoctor.report.summary import failed_checks, node_lines, paste_gpu_line, skipped_by_fact


# Every value below may come from the user's node or paste: it goes through md_text, md_code or
# md_block so that it can neither close its code block nor become a link, an image or HTML.
def _cell(text: str) -> str:
    return md_text(text)


def render(doc: Dict[str, Any]) -> str:
    facts = doc.get("facts", {})
    host = (facts.get("system") or {}).get("hostname") or "the node"
    out: List[str] = [f"## hpcdoctor report for {md_code(host)}", ""]
    findings = doc.get("findings", [])
    unchecked = doc.get("unchecked") or []
    if not findings:
        out += ["No problems found in what could be checked." if unchecked else "No problems found.", ""]
    if unchecked:
        out += ["**Could not be checked** (the verdict is open for these):", ""]
        out += [f"- {md_text(u['area'])} ({md_text(u['what'])}): {md_text(u['reason'])}" for u in unchecked] + [""]
    for f in findings:
        subject = f" ({md_text(f['subject'])})" if f.get("subject") else ""
        out += [
            f"### {f['severity'].upper()}: {md_text(f['title'])}{subject}",
            "",
            f"{md_text(f['message'])}.",
            "",
            "**Fix:**",
            "",
            md_block(f["fix"], f.get("fix_lang") or "bash"),
            "",
            f"Rule {md_code(f['code'])} {md_code(f['symbol'])}; see {md_code('hpcdoctor explain ' + f['code'])}.",
        ]
        refs = [knowledge.reference_title(r) for r in f.get("references", [])]
        if refs:
            out += [""] + [f"- {md_text(r)}" for r in refs]
        out.append("")
    if doc.get("source", {}).get("mode") == "paste":
        src = doc["source"]
        out += ["### What was read", ""] + [f"- {md_text(r)}" for r in src.get("recognised", [])]
        out += [f"- note: {md_text(n)}" for n in src.get("notes", [])] + [""]
    paste = doc.get("source", {}).get("mode") == "paste"
    out += ["### Node", "", "| | |", "|---|---|"]
    out += [f"| {_cell(label)} | {_cell(paste_gpu_line(text) if paste and label == 'GPUs' else text)} |"
            for label, text in node_lines(doc)]
    out.append("")
    problems = failed_checks(doc)
    skipped = doc.get("skipped", [])
    if problems or skipped:
        out += [_not_checked(problems, skipped), ""]
    src = doc.get("source", {})
    out.append(f"<sub>hpcdoctor {doc['tool']['version']}, {src.get('mode', 'live')}"
               f"{' of ' + md_text(src['path']) if src.get('path') else ''}, {doc.get('depth', 'fast')} depth, "
               f"schema {doc['schema_version']}</sub>")
    return "\n".join(out) + "\n"


def _not_checked(problems: List[str], skipped: List[Dict[str, Any]]) -> str:
    """One line: how many rules could not run, and the facts they lacked (each rule's reason is in
    the JSON report and in ``hpcdoctor explain``)."""
    lacking = ", ".join(f"{k} ({len(syms)})" for k, syms, _ in skipped_by_fact(skipped))
    parts = [f"{len(skipped)} rules" if skipped else "", f"{len(problems)} checks" if problems else ""]
    return (f"**Not checked:** {' and '.join(p for p in parts if p)}, for lack of "
            f"{md_text(lacking) if lacking else 'data'} (the JSON report gives each reason).")


