"""Runs the checks in parallel, each under its timeout, all under one budget.

A check runs in a daemon thread: if it hangs in a C call (an NVML call into a wedged driver) the
runner stops waiting, records a timeout, and the process can still exit, since daemon threads
never block interpreter shutdown. Commands started by checks carry their own timeouts and are
killed with their process group.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Dict, List, Optional, Sequence, Tuple

from hpcdoctor import budgets
from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SnapshotError, SysRoot

# One check's result is written once, by whichever of the check's thread and the runner's timeout
# comes first; a check that ended past its limit is a timeout either way.
_PUBLISH = threading.Lock()

@dataclass
class Options:
    python: Optional[str] = None      # the interpreter a job would run; None: python3 on PATH
    depth: str = "fast"                # fast: no torch import; deep: import torch, init CUDA
    bench: Optional[str] = None        # None, "quick" or "full"
    budget: float = budgets.CHECK_DEFAULT
    deadline: Optional[float] = None   # time.monotonic() the budget ends at, when it began earlier
    site_gpus: Tuple[Dict[str, Any], ...] = ()  # the site config's [[gpu]] entries, before the shipped table


@dataclass
class CheckContext:
    options: Options
    deadline: float

    def remaining(self, cap: Optional[float] = None) -> float:
        left = max(0.0, self.deadline - time.monotonic())
        return min(left, cap) if cap is not None else left


@dataclass
class CheckResult:
    name: str
    status: str = "pending"            # ok, unknown, error, timeout
    duration_s: float = 0.0
    reason: Optional[str] = None
    facts: Dict[str, Any] = field(default_factory=dict)
    provides: tuple = ()
    finished: Optional[float] = None   # time.monotonic() the check's own thread ended at


def _run_one(mod: ModuleType, root: SysRoot, ctx: CheckContext, res: CheckResult) -> None:
    start = time.monotonic()
    facts: Dict[str, Any] = {}
    reason: Optional[str] = None
    try:
        facts = mod.collect(root, ctx)
        if not isinstance(facts, dict):
            raise TypeError(f"check {res.name} returned {type(facts).__name__}, not a dict")
        status = "ok"
    except Missing as exc:
        facts, status, reason = {}, "unknown", str(exc)
    except SnapshotError as exc:
        facts, status, reason = {}, "error", str(exc)
    except Exception as exc:  # a bug in one check must cost only that check's facts
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" at {last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno}" if last else ""
        facts, status, reason = {}, "error", f"{exc.__class__.__name__}: {exc}{where}"
    with _PUBLISH:
        # A check that finishes after the runner gave up on it keeps its timeout: its late facts
        # would otherwise replace the "stopped by the budget" the report was about to show.
        if res.status == "pending":
            res.facts, res.status, res.reason = facts, status, reason
            res.finished = time.monotonic()
            res.duration_s = round(res.finished - start, 4)


def run_checks(root: SysRoot, checks: Sequence[ModuleType], options: Options) -> Dict[str, CheckResult]:
    """Run the checks in parallel, then the EXCLUSIVE ones (benchmarks) one at a time: a
    measurement that shares the CPUs with a concurrent torch import measures the import."""
    started = time.monotonic()
    ctx = CheckContext(options=options, deadline=options.deadline or started + options.budget)
    root.deadline = ctx.deadline
    results: Dict[str, CheckResult] = {}
    parallel = [m for m in checks if not getattr(m, "EXCLUSIVE", False)]
    exclusive = [m for m in checks if getattr(m, "EXCLUSIVE", False)]
    _run_batch(root, parallel, options, ctx, results)
    for mod in exclusive:
        _run_batch(root, [mod], options, ctx, results)
    return results


def _run_batch(root: SysRoot, checks: Sequence[ModuleType], options: Options, ctx: CheckContext,
               results: Dict[str, CheckResult]) -> None:
    started = time.monotonic()
    threads: List[tuple] = []
    for mod in checks:
        name = getattr(mod, "NAME", mod.__name__.rsplit(".", 1)[-1])
        res = CheckResult(name=name, provides=tuple(getattr(mod, "PROVIDES", (name,))))
        results[name] = res
        t = threading.Thread(target=_run_one, args=(mod, root, ctx, res), name=f"check-{name}", daemon=True)
        t.start()
        threads.append((t, res, check_timeout(mod, options)))
    for t, res, timeout in threads:
        limit = min(started + timeout, ctx.deadline)
        t.join(max(0.0, limit - time.monotonic()))
        with _PUBLISH:
            # Past its limit is a timeout however soon the runner looks: on a loaded node the
            # runner may reach this thread late, and the verdict must not depend on that.
            if res.status == "pending" or (res.finished is not None and res.finished > limit):
                res.status = "timeout"
                res.duration_s = round(time.monotonic() - started, 4)
                res.reason = (f"did not finish within {timeout:.1f}s"
                              if limit < ctx.deadline else f"stopped by the {options.budget:g}s budget")
                res.facts = {}


def check_timeout(mod: ModuleType, options: Options) -> float:
    """A check's own limit: ``timeout(options)`` where depth changes it (a torch import, a
    benchmark), else its TIMEOUT constant."""
    fn = getattr(mod, "timeout", None)
    return float(fn(options)) if callable(fn) else float(getattr(mod, "TIMEOUT", 5.0))


def merge_facts(results: Dict[str, CheckResult]) -> Dict[str, Any]:
    """Top-level fact sections from every check. Lists that several checks provide (``gpus``, one
    per vendor) are concatenated. A vendor's Unknown stands only when no vendor found a GPU: "AMD
    tools not recorded" says nothing against eight NVIDIA GPUs that were read, and that vendor's
    own section keeps its error. Any other clash is a bug in a check; the first section wins."""
    facts: Dict[str, Any] = {}
    for res in results.values():
        for key, value in res.facts.items():
            have = facts.get(key, None)
            if key not in facts:
                facts[key] = value
            elif isinstance(have, list) and isinstance(value, list):
                facts[key] = have + value
            elif isinstance(value, Unknown) and have == []:
                facts[key] = value
            elif isinstance(have, Unknown) and isinstance(value, list) and value:
                facts[key] = value
    for res in results.values():
        if res.status != "ok":
            for key in res.provides:
                # Another vendor's "no GPUs" says nothing about the one whose probe never finished.
                if facts.get(key, None) == []:
                    del facts[key]
                facts.setdefault(key, Unknown(res.reason or res.status))
    return facts
