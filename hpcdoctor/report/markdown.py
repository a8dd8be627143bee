"""Markdown for a ticket reply: findings first, each with its fix, then the node summary."""

from __future__ import annotations

from typing import Any, Dict, List

from hpcdoctor import knowledge
from hpcdoctor.report.safe import md_block, md_code, md_text
from hpcdoctor.report.summary import failed_probes, node_lines


# Every value below may come from the user's node or paste: it goes through md_text, md_code or
# md_block so that it can neither close its code block nor become a link, an image or HTML.
def _cell(text: str) -> str:
    return md_text(text)


def render(doc: Dict[str, Any]) -> str:
    facts = doc.get("facts", {})
    host = (facts.get("system") or {}).get("hostname") or "the node"
    out: List[str] = [f"## hpcdoctor report for {md_code(host)}", ""]
    findings = doc.get("findings", [])
    if not findings:
        out += ["No problems found.", ""]
    for f in findings:
        subject = f" ({md_text(f['subject'])})" if f.get("subject") else ""
        out += [
            f"### {f['severity'].upper()}: {md_text(f['title'])}{subject}",
            "",
            f"{md_text(f['message'])}.",
            "",
            "**Fix:**",
            "",
            md_block(f["fix"], "bash"),
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
    out += ["### Node", "", "| | |", "|---|---|"]
    out += [f"| {_cell(label)} | {_cell(text)} |" for label, text in node_lines(doc)]
    out.append("")
    problems = failed_probes(doc)
    skipped = doc.get("skipped", [])
    if problems or skipped:
        out += ["<details><summary>What could not be checked</summary>", ""]
        out += [f"- probe {md_text(p)}" for p in problems]
        out += [f"- rule {md_code(s['code'])} {md_text(s['symbol'])}: {md_text(s['reason'])}" for s in skipped]
        out += ["", "</details>", ""]
    src = doc.get("source", {})
    out.append(f"<sub>hpcdoctor {doc['tool']['version']}, {src.get('mode', 'live')}"
               f"{' of ' + md_text(src['path']) if src.get('path') else ''}, {doc.get('depth', 'fast')} depth, "
               f"schema {doc['schema_version']}</sub>")
    return "\n".join(out) + "\n"
