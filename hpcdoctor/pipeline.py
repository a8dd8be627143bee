"""One diagnosis: checks -> facts -> rules -> the report document."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Optional, Sequence

from hpcdoctor import __version__, engine, plugins, verdict
from hpcdoctor.facts import SCHEMA_VERSION, FactView, flatten_unknowns
from hpcdoctor.runner import Options, merge_facts, run_checks
from hpcdoctor.knowledge.systems import recognise
from hpcdoctor.sysroot import SysRoot


def gather(root: SysRoot, options: Options) -> Dict[str, Any]:
    """Run the checks (built-in and site); return the facts half of the document (facts,
    unknown, checks) and the site plugins that failed to load."""
    checks, errors = plugins.load("hpcdoctor.checks", "checks")
    results = run_checks(root, checks, options)
    facts, unknown = flatten_unknowns(merge_facts(results))
    checks = {
        name: {k: v for k, v in {"status": r.status, "duration_s": r.duration_s, "reason": r.reason}.items()
               if v is not None}
        for name, r in sorted(results.items())
    }
    return {"facts": facts, "unknown": unknown, "checks": checks, "plugin_errors": errors}


def judge(gathered: Dict[str, Any], rules: Sequence[engine.Rule], config: Optional[Dict[str, Any]] = None):
    view = FactView(gathered["facts"], gathered["unknown"], config)
    return engine.evaluate(rules, view)


def document(root: SysRoot, options: Options, rules: Sequence[engine.Rule],
             config: Optional[Dict[str, Any]] = None, source: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    gathered = gather(root, options)
    findings, skipped = judge(gathered, rules, config)
    systems = recognise(FactView(gathered["facts"], gathered["unknown"]))
    counts = {s: sum(1 for f in findings if f.severity == s) for s in engine.SEVERITIES}
    doc: Dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "hpcdoctor", "version": __version__},
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source or {"mode": root.mode},
        "depth": options.depth,
        "facts": gathered["facts"],
        "unknown": gathered["unknown"],
        "checks": gathered["checks"],
        "findings": [f.to_json() for f in findings],
        "skipped": skipped,
        "summary": counts,
        "recognised_systems": [{"id": s["id"], "name": s["name"]} for s in systems],
    }
    if gathered["plugin_errors"]:
        doc["plugin_errors"] = gathered["plugin_errors"]
    doc["unchecked"] = verdict.unchecked(doc, python_named=bool(options.python))
    return doc
