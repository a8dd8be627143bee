"""Score triage of pasted tickets on the real ticket corpus (tests/fixtures/tickets/).

    python bench/triage_score.py [--verbose] [--json] [--json-out FILE] [--jobs N] [--timeout S] [--corpus DIR]

Each paste goes through the installed CLI as a support engineer runs it,
`hpcdoctor check --from <paste> --format json`, in a fresh process with a time limit. Printed:
- recall: expected symbols (`must` of the manifest) that fired, catalogue symbols and the
  proposed ones (not in the catalogue yet) counted apart;
- false positives: a `must_not` symbol firing, or any error/warning finding on a healthy control;
- refusals: exit 2 or no report on a paste that holds a diagnosis (healthy pastes hpcdoctor
  declines, such as prose alone, are listed apart and are not false positives);
- tracebacks: an internal error, a Python traceback, a timeout or an unknown exit status.
Targets (issue 13): recall >= 95 %, 0 false positives, 0 refusals, 0 tracebacks.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "tickets"
ALARM = ("error", "warning")


def load_manifest(corpus: Path = CORPUS) -> List[dict]:
    with open(corpus / "tickets.toml", "rb") as fh:
        return tomllib.load(fh)["ticket"]


def cli_command() -> List[str]:
    # The script beside this interpreter first, so a venv's python runs the venv's hpcdoctor.
    beside = Path(sys.executable).with_name("hpcdoctor")
    if beside.exists():
        return [str(beside)]
    found = shutil.which("hpcdoctor")
    return [found] if found else [sys.executable, "-m", "hpcdoctor"]


def run_ticket(ticket: dict, corpus: Path = CORPUS, timeout: float = 60.0) -> dict:
    """One paste through the CLI: exit status, findings (symbol -> severity), stderr."""
    paste = corpus / f"{ticket['id']}.txt"
    env = dict(os.environ, HPCDOCTOR_DEBUG="1", NO_COLOR="1")
    cmd = cli_command() + ["check", "--from", str(paste), "--format", "json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"rc": None, "findings": {}, "stderr": f"timed out after {timeout:g} s", "report": False}
    findings: Dict[str, str] = {}
    report = False
    try:
        data = json.loads(proc.stdout)
        report = True
        for f in data.get("findings", []):
            findings[f["symbol"]] = f["severity"]
    except (ValueError, KeyError, TypeError):
        pass
    return {"rc": proc.returncode, "findings": findings, "stderr": proc.stderr, "report": report}


def aliases() -> Dict[str, str]:
    """Proposed symbols later built under another name (bench/proposed_aliases.toml)."""
    with open(Path(__file__).with_name("proposed_aliases.toml"), "rb") as fh:
        return dict(tomllib.load(fh).get("alias", {}))


def judge(ticket: dict, run: dict) -> dict:
    """What one run means against the manifest."""
    must = list(ticket.get("must", []))
    proposed = set(ticket.get("proposed", []))
    fired = dict(run["findings"])
    for wanted, built in aliases().items():  # a proposal found under the name it was built with
        if wanted in proposed and built in fired:
            fired.setdefault(wanted, fired[built])
    err = run["stderr"] or ""
    traceback = (run["rc"] not in (0, 1, 2) or "Traceback (most recent call last)" in err
                 or "internal error:" in err)
    refused = not run["report"] or run["rc"] == 2
    fp = [s for s in ticket.get("must_not", []) if s in fired]
    if ticket.get("healthy"):
        fp += [s for s, sev in fired.items() if sev in ALARM and s not in fp]
    return {
        "id": ticket["id"],
        "class": ticket.get("class", ""),
        "healthy": bool(ticket.get("healthy")),
        "rc": run["rc"],
        "fired": fired,
        "hit": [s for s in must if s in fired],
        "missed": [s for s in must if s not in fired and s not in proposed],
        "missed_proposed": [s for s in must if s not in fired and s in proposed],
        "expected": [s for s in must if s not in proposed],
        "expected_proposed": [s for s in must if s in proposed],
        "false_positives": fp,
        "refused": refused and not ticket.get("healthy"),
        "healthy_declined": refused and bool(ticket.get("healthy")),
        "traceback": traceback,
        "stderr_tail": err.strip().splitlines()[-1] if err.strip() else "",
    }


def score(corpus: Path = CORPUS, jobs: Optional[int] = None, timeout: float = 60.0) -> dict:
    tickets = load_manifest(corpus)
    jobs = jobs or max(2, min(8, (os.cpu_count() or 2) * 2))
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = list(pool.map(lambda t: run_ticket(t, corpus, timeout), tickets))
    results = [judge(t, r) for t, r in zip(tickets, runs)]
    return {**totals(results), "results": results}


def totals(results: List[dict]) -> dict:
    """The aggregate figures of judged tickets (what a sealed set's reader may see)."""
    exp = sum(len(r["expected"]) for r in results)
    hit = sum(len(r["expected"]) - len(r["missed"]) for r in results)
    exp_p = sum(len(r["expected_proposed"]) for r in results)
    hit_p = exp_p - sum(len(r["missed_proposed"]) for r in results)
    by_class: Dict[str, Dict[str, int]] = {}
    for r in results:
        for s in r["missed"] + r["missed_proposed"]:
            by_class.setdefault(r["class"], {}).setdefault(s, 0)
            by_class[r["class"]][s] += 1
    return {
        "tickets": len(results),
        "healthy": sum(r["healthy"] for r in results),
        "expected": exp,
        "hit": hit,
        "recall": (hit / exp) if exp else None,
        "expected_proposed": exp_p,
        "hit_proposed": hit_p,
        "false_positives": sum(len(r["false_positives"]) for r in results),
        "refusals": sum(r["refused"] for r in results),
        "healthy_declined": sum(r["healthy_declined"] for r in results),
        "tracebacks": sum(r["traceback"] for r in results),
        # A hit below the alarm severities (info: the usual cause of a symptom in the user's words;
        # advice) is counted in recall and shown apart, so a hint never passes for a diagnosis.
        "hit_hint": sum(1 for r in results for h in r["hit"] if h in r["expected"] and r["fired"].get(h) not in ALARM),
        "healthy_with_hint": sum(1 for r in results if r["healthy"] and any(v not in ALARM for v in r["fired"].values())),
        "missed_by_class": by_class,
    }


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.1f} %)" if b else "n/a"


def print_text(s: dict, verbose: bool) -> None:
    if verbose:
        print(f"{'ticket':58} {'rc':>3}  hit/missed  fired (severity)")
        for r in s["results"]:
            flags = []
            if r["refused"]:
                flags.append("REFUSED")
            if r["traceback"]:
                flags.append("TRACEBACK")
            if r["false_positives"]:
                flags.append("FP:" + ",".join(r["false_positives"]))
            if r["healthy_declined"]:
                flags.append("healthy-declined")
            missed = r["missed"] + [m + "*" for m in r["missed_proposed"]]
            fired = ",".join(f"{k}({v[0]})" for k, v in sorted(r["fired"].items())) or "-"
            print(f"{r['id'][:58]:58} {str(r['rc']):>3}  +{','.join(r['hit']) or '-'} "
                  f"-{','.join(missed) or '-'}  {fired} {' '.join(flags)}")
        print()
    print(f"tickets: {s['tickets']} ({s['healthy']} healthy controls)")
    print(f"recall of expected symbols: {_pct(s['hit'], s['expected'])}")
    print(f"recall of proposed symbols (not in the catalogue yet): {_pct(s['hit_proposed'], s['expected_proposed'])}")
    print(f"false positives: {s['false_positives']}")
    print(f"refusals of a paste with a diagnosis: {s['refusals']}")
    print(f"healthy controls declined (not scored): {s['healthy_declined']}")
    print(f"tracebacks: {s['tracebacks']}")
    print(f"expected symbols found only as a hint (info or advice): {s['hit_hint']} of {s['hit']}")
    print(f"healthy controls given a hint (info or advice; not false positives): {s['healthy_with_hint']}")
    if s["missed_by_class"]:
        print("missed, by class (* = proposed symbol):")
        for cls, miss in sorted(s["missed_by_class"].items()):
            props = {p for r in s["results"] if r["class"] == cls for p in r["missed_proposed"]}
            items = ", ".join(f"{k}{'*' if k in props else ''} x{v}" for k, v in sorted(miss.items()))
            print(f"  {cls}: {items}")


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verbose", action="store_true", help="a line per ticket")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    ap.add_argument("--jobs", type=int, default=None, help="pastes run at once")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per paste")
    ap.add_argument("--corpus", type=Path, default=CORPUS)
    ap.add_argument("--json-out", metavar="FILE", help="write the totals, machine and date as JSON")
    args = ap.parse_args(argv)
    s = score(args.corpus, args.jobs, args.timeout)
    if args.json:
        print(json.dumps(s, indent=2, sort_keys=True))
    else:
        print_text(s, args.verbose)
    if args.json_out:
        import result  # beside this script; imported here so tests can load the module alone

        result.write(args.json_out, "triage_score", result.invocation(),
                     {k: v for k, v in s.items() if k != "results"})
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # piped into head
        sys.exit(0)
