"""The rule engine: rules declared in plugin modules, selected, run over facts, ranked.

A rule is a plain function of a FactView, decorated with ``@rule``; it yields ``Hit``s. The
engine adds the rule's identity (code, symbol, severity, references) to each hit and turns a
``MissingFact`` into a skipped entry carrying the reason, so a rule never has to handle an
Unknown by hand and a missing fact never reads as a pass.
"""

from __future__ import annotations

import functools
import inspect
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from hpcdoctor.facts import FactView, MissingFact

# "info": a finding read from a user's words alone (a symptom a project's FAQ answers with its usual
# cause), below advice: it tells support staff where to look, never that the node was seen at fault.
SEVERITIES = ("error", "warning", "advice", "info")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
HEADINGS = ("What it detects", "Why it matters", "How to fix", "References")
CODE_RE = re.compile(r"^[A-Z]{2,4}\d{3}$")
SYMBOL_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass
class Hit:
    """What a rule returns for one problem it found."""

    message: str
    fix: str
    evidence: Dict[str, Any] = field(default_factory=dict)
    subject: Optional[str] = None            # "GPU 0", "rank 3": what the finding is about
    severity: Optional[str] = None           # overrides the rule's default where the case is worse
    env: Dict[str, str] = field(default_factory=dict)  # variables that fix it, for `hpcdoctor env`
    fix_lang: str = "bash"                   # what the fix runs in: "bash" or "python"


FIX_LANGS = ("bash", "python")


@dataclass
class Rule:
    code: str
    symbol: str
    severity: str
    title: str
    impact: int
    func: Callable[[FactView], Iterable[Hit]]
    docs: Dict[str, str]
    references: List[str]
    status: str = "stable"
    module: str = ""
    also: Dict[str, str] = field(default_factory=dict)  # other severity -> the case that gives it

    def severity_story(self) -> str:
        """'advice (warning when several ranks share this node)': the same words wherever shown."""
        if not self.also:
            return self.severity
        return f"{self.severity} ({'; '.join(f'{s} when {why}' for s, why in self.also.items())})"

    def to_json(self) -> Dict[str, Any]:
        out = {
            "code": self.code, "symbol": self.symbol, "severity": self.severity, "title": self.title,
            "impact": self.impact, "status": self.status, "references": self.references,
            "docs": self.docs,
        }
        if self.also:
            out["also"] = dict(self.also)
        return out


@dataclass
class Finding:
    code: str
    symbol: str
    severity: str
    title: str
    message: str
    fix: str
    evidence: Dict[str, Any]
    references: List[str]
    impact: int
    subject: Optional[str] = None
    env: Dict[str, str] = field(default_factory=dict)
    fix_lang: str = "bash"

    def to_json(self) -> Dict[str, Any]:
        out = {
            "code": self.code, "symbol": self.symbol, "severity": self.severity, "title": self.title,
            "message": self.message, "fix": self.fix, "fix_lang": self.fix_lang, "evidence": self.evidence,
            "references": self.references, "impact": self.impact,
        }
        if self.subject:
            out["subject"] = self.subject
        if self.env:
            out["env"] = self.env
        return out


class RuleError(Exception):
    """A rule declaration or a selection that is wrong; the message says which and where."""


def parse_docs(doc: Optional[str]) -> Dict[str, str]:
    """Split a rule docstring into its fixed headings ("What it detects:" ...)."""
    text = inspect.cleandoc(doc or "")
    sections: Dict[str, List[str]] = {}
    current: Optional[str] = None
    for line in text.splitlines():
        head = line.strip().rstrip(":")
        if line.strip().endswith(":") and head in HEADINGS:
            current = head
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {k: inspect.cleandoc("\n".join(v)) for k, v in sections.items()}


def parse_references(section: str) -> List[str]:
    """Reference items: '- 001_dd2fe1913b91ca0a.txt (what it says)' or '- https://...'."""
    refs = []
    for line in section.splitlines():
        line = line.strip()
        if line.startswith("- "):
            refs.append(line[2:].strip())
    return refs


def rule(code: str, symbol: str, severity: str, title: str, impact: int = 5, status: str = "stable",
         also: Optional[Dict[str, str]] = None):
    """Declare a rule. ``impact`` (1-10) orders findings of one severity: how much time or
    correctness the problem typically costs. ``also``: any other severity a hit may carry, with
    the case that gives it, so ``rules`` and ``explain`` tell the same story as the findings."""
    for s in [severity, *(also or {})]:
        if s not in SEVERITIES:
            raise RuleError(f"{code}: severity {s!r} is not one of {', '.join(SEVERITIES)}")

    def wrap(func: Callable[[FactView], Iterable[Hit]]) -> Callable[[FactView], Iterable[Hit]]:
        docs = parse_docs(func.__doc__)
        func._hpcdoctor_rule = Rule(  # type: ignore[attr-defined]
            code=code, symbol=symbol, severity=severity, title=title, impact=impact, func=func,
            docs=docs, references=parse_references(docs.get("References", "")), status=status,
            module=func.__module__, also=dict(also or {}),
        )
        return func

    return wrap


def collect_rules(modules: Sequence[Any]) -> List[Rule]:
    return list(_collected(tuple(modules)))


# A site's modules are loaded afresh on each load (their files may change), so a cache keyed by the
# module objects serves the built-in set, the same objects every time, and lets a site's new ones pass.
@functools.lru_cache(maxsize=8)
def _collected(modules: Tuple[Any, ...]) -> Tuple[Rule, ...]:
    rules: List[Rule] = []
    seen_codes: Dict[str, str] = {}
    seen_symbols: Dict[str, str] = {}
    for mod in modules:
        for obj in vars(mod).values():
            r = getattr(obj, "_hpcdoctor_rule", None)
            if not isinstance(r, Rule) or r.module != mod.__name__:
                continue
            if not CODE_RE.match(r.code) or not SYMBOL_RE.match(r.symbol):
                raise RuleError(f"{mod.__name__}: rule {r.code} {r.symbol!r} has a malformed code or symbol")
            for key, seen in ((r.code, seen_codes), (r.symbol, seen_symbols)):
                if key in seen:
                    raise RuleError(f"{mod.__name__}: rule {key} is already defined in {seen[key]}")
                seen[key] = mod.__name__
            rules.append(r)
    return tuple(sorted(rules, key=lambda r: r.code))


def load_rules() -> Tuple[List[Rule], List[str]]:
    """Built-in and site rules, and one error line per site module that failed to load."""
    from hpcdoctor import plugins

    mods, errors = plugins.load("hpcdoctor.rules", "rules")
    return collect_rules(mods), errors


def find_rule(rules: Sequence[Rule], key: str) -> Optional[Rule]:
    key_l = key.strip().lower()
    for r in rules:
        if r.code.lower() == key_l or r.symbol == key_l:
            return r
    return None


def _matches(r: Rule, token: str) -> bool:
    t = token.strip()
    return r.symbol == t.lower() or r.code.upper().startswith(t.upper())


def select(rules: Sequence[Rule], selected: Sequence[str] = (), ignored: Sequence[str] = ()) -> List[Rule]:
    """``--select``/``--ignore``: codes, code prefixes (``GPU``) or symbols. An unknown token is
    an error, not a silent no-op: a typo in a pre-job script must not disable a check."""
    for opt, tokens in (("--select", selected), ("--ignore", ignored)):
        for t in tokens:
            if not any(_matches(r, t) for r in rules):
                raise RuleError(f"unknown rule {t!r} in {opt} (see 'hpcdoctor rules')")
    chosen = [r for r in rules if not selected or any(_matches(r, t) for t in selected)]
    return [r for r in chosen if not any(_matches(r, t) for t in ignored)]


def evaluate(rules: Sequence[Rule], view: FactView) -> Tuple[List[Finding], List[Dict[str, str]]]:
    findings: List[Finding] = []
    skipped: List[Dict[str, str]] = []
    for r in rules:
        try:
            hits = list(r.func(view) or ())
        except MissingFact as exc:
            skipped.append({"code": r.code, "symbol": r.symbol, "reason": f"needs {exc.path}: {exc.reason}"})
            continue
        except Exception as exc:  # one broken rule must not hide the others' findings
            skipped.append({"code": r.code, "symbol": r.symbol,
                            "reason": f"rule failed: {exc.__class__.__name__}: {exc}"})
            continue
        wrong = [h.severity for h in hits if h.severity not in (None, r.severity) and h.severity not in r.also]
        if wrong:  # a severity the catalogue does not declare would tell users two stories
            skipped.append({"code": r.code, "symbol": r.symbol,
                            "reason": f"rule failed: severity {wrong[0]!r} is not declared by the rule"})
            continue
        for h in hits:
            severity, message = h.severity or r.severity, h.message
            if h.evidence.get("ticket.retold"):
                # read from an error number the user retyped in a sentence, not the program's own
                # line: what the number means, not that this is what happened (at most a warning)
                severity = "warning" if severity == "error" else severity
                message += " [read from an error number the user retyped in a sentence, decoded through its emitter's table]"
            findings.append(Finding(
                code=r.code, symbol=r.symbol, severity=severity, title=r.title,
                message=message, fix=h.fix, evidence=h.evidence, references=r.references,
                impact=r.impact, subject=h.subject, env=dict(h.env),
                fix_lang=h.fix_lang if h.fix_lang in FIX_LANGS else "bash",
            ))
    return rank(findings), skipped


def rank(findings: List[Finding]) -> List[Finding]:
    """Most costly first: severity, then the rule's impact, then a stable order."""
    return sorted(findings, key=lambda f: (SEVERITY_RANK[f.severity], -f.impact, f.code, f.subject or ""))


def at_or_above(findings: Sequence[Dict[str, Any]], level: str) -> List[Dict[str, Any]]:
    """Findings (as in the report document) at or above a --fail-on level."""
    if level == "never":
        return []
    limit = SEVERITY_RANK[level]
    return [f for f in findings if SEVERITY_RANK.get(f["severity"], 99) <= limit]
