"""What hpcdoctor knows, drawn for a person: the rule list, one rule's page, the knowledge tables."""

from __future__ import annotations

from typing import Any, Dict, IO, List, Optional, Sequence

from hpcdoctor.report.terminal import make_console


def rules_table(rules: Sequence[Any], stream: IO[str]) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for col in ("code", "symbol", "severity", "title"):
        table.add_column(col)
    for r in rules:
        table.add_row(r.code, r.symbol, "/".join([r.severity, *r.also]), escape(r.title))
    make_console(stream).print(table)


def rule_page(rule: Any, headings: Sequence[str], reference_title: Any, stream: IO[str]) -> None:
    """One rule's documentation, under the engine's headings, its references by title."""
    from rich.markup import escape

    con = make_console(stream)
    con.print(f"[bold]{rule.code} {rule.symbol}[/] ({escape(rule.severity_story())}, {rule.status}): "
              f"{escape(rule.title)}")
    for head in headings:
        con.print(f"\n[bold]{head}[/]")
        con.print(escape(rule.docs.get(head, "")))
    con.print("\n[bold]References[/]")
    for ref in rule.references:
        con.print(f"- {escape(reference_title(ref))}")


def knowledge_tables(tables: List[Dict[str, Any]], stream: IO[str], shown: Optional[int] = 3) -> None:
    """Each table's entry count, read dates and first ``shown`` sources (all where None)."""
    from rich.markup import escape

    con = make_console(stream)
    for t in tables:
        dates = ("read " + ", ".join(t["dates"])) if t["dates"] else "no read date recorded"
        if t["dates"] and t.get("undated"):
            # One dated entry must not make a whole table look current.
            dates += f"; {t['undated']} of them with no read date"
        con.print(f"[bold]{escape(t['table'])}[/] ({escape(t['file'])}): {t['entries']} sourced entries; {dates}")
        for src in t["sources"][:shown]:
            con.print(f"  - {escape(src)}")
        if shown is not None and len(t["sources"]) > shown:
            con.print(f"  ... {len(t['sources']) - shown} more (--all)")
