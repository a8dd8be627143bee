"""Micro-benchmarks, only when asked (--bench quick|full): run by the target interpreter through
the benchmark payload, under the tier's budget, with progress on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import hpcdoctor
from typing import Any, Dict

from hpcdoctor.checks.torch_stack import payload_result, target_python
from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot, run_process

NAME = "bench"
PROVIDES = ("bench",)
EXCLUSIVE = True  # runs after the other checks, alone
# The payloads ship inside the hpcdoctor package, wherever the checks folder is mapped from.
PAYLOAD = Path(hpcdoctor.__file__).resolve().parent / "payload" / "bench_probe.py"
TIER_BUDGET = {"quick": 20.0, "full": 120.0}


def timeout(options: Any) -> float:
    return TIER_BUDGET.get(options.bench or "", 0.0) + 10.0


def run_bench(python: str, tier: str, budget: float) -> Dict[str, Any]:
    """Run the payload; its progress lines go to stderr as they come (a live status on a
    terminal, plain lines in a job log), stdout stays the report's."""
    argv = [python, str(PAYLOAD), "--tier", tier, "--budget", f"{budget:.1f}"]
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.markup import escape

        con = Console(stderr=True, highlight=False)
        with con.status(f"hpcdoctor: {tier} benchmarks (at most {budget:.0f}s)") as status:
            def show(line: str) -> None:
                if line.startswith("hpcdoctor bench:"):
                    con.print(f"[dim]{escape(line)}[/]")
                    status.update(escape(line.replace("hpcdoctor bench:", "benchmarking:")))

            res = run_process(argv, timeout=budget + 8.0, on_stderr_line=show)
    else:
        def plain(line: str) -> None:
            if line.startswith("hpcdoctor bench:"):
                sys.stderr.write(line + "\n")
                sys.stderr.flush()

        res = run_process(argv, timeout=budget + 8.0, on_stderr_line=plain)
    if res.rc == 124:
        raise Missing(f"the benchmarks did not finish within {budget + 8:.0f}s")
    return payload_result(res, python, "the benchmark payload")


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    tier = ctx.options.bench
    if root.mode == "replay":
        # A recording made with --bench carries its figures; replaying them needs no flag.
        try:
            return {"bench": root.probe("bench", lambda: {})}
        except Missing:
            return {}
    if not tier:
        return {}
    python = target_python(ctx.options)
    if python is None:
        return {"bench": Unknown("no python3 on PATH (pass --python)")}
    budget = min(TIER_BUDGET[tier], max(1.0, ctx.remaining() - 2.0))
    try:
        return {"bench": root.probe("bench", lambda: run_bench(python, tier, budget))}
    except Missing as exc:
        return {"bench": Unknown(str(exc))}
