"""What hpcdoctor does, without a command line: a ``Request`` in, a report document out.

``diagnose(request)`` is the one way to a report, live, from a snapshot or from pasted text; the
command line, the cluster mode and tests build a ``Request`` and call it. ``record(request, out)``
is the other use: a snapshot of this node for a ticket. Nothing here knows
argparse or prints: a request hpcdoctor cannot serve raises ``RequestError`` with one line.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from hpcdoctor import __version__, budgets


class RequestError(Exception):
    """A request that cannot be served as asked: one line for the person who asked."""


@dataclass(frozen=True)
class Request:
    command: str = "check"               # whose default budget applies (budgets.COMMAND)
    sources: Tuple[str, ...] = ()         # a snapshot folder or bundle, or pasted texts ("-": stdin)
    python: Optional[str] = None          # the interpreter a job runs; None: python3 on PATH
    deep: bool = False                    # import torch and initialise the GPU runtime
    bench: Optional[str] = None           # "quick" or "full" micro-benchmarks (implies deep)
    budget: Optional[float] = None        # seconds for the whole run; None: budgets.default
    config: Optional[str] = None          # the site config file; None: the usual places
    select: Tuple[str, ...] = ()          # rule codes, prefixes or symbols
    ignore: Tuple[str, ...] = ()
    cluster_timeout: float = 60.0         # how long rank 0 waits for the others (cluster mode)


def options(request: Request):
    """The runner's options for ``request``; the deadline is set when the run starts."""
    from hpcdoctor.runner import Options

    budget = request.budget if request.budget is not None else budgets.default(request.command, request.bench)
    if not math.isfinite(budget) or budget <= 0:
        raise RequestError("--budget must be a positive number of seconds")
    deep = request.deep or bool(request.bench)
    return Options(python=request.python, depth="deep" if deep else "fast", bench=request.bench, budget=budget)


def site(request: Request) -> Dict[str, Any]:
    """The site config ``request`` names (or finds in the usual places); {} where there is none."""
    from hpcdoctor import config as site_config

    return site_config.find(request.config) or {}


def rules_for(request: Request, site_config: Dict[str, Any]) -> Tuple[list, List[str]]:
    """The rules to judge with (the request's --select/--ignore, else the site's), and the errors
    of site rule plugins that did not load."""
    from hpcdoctor import engine

    rules, errors = engine.load_rules()
    site_rules = site_config.get("rules") or {}
    chosen = engine.select(rules, list(request.select) or [str(x) for x in site_rules.get("select", [])],
                           list(request.ignore) + [str(x) for x in site_rules.get("ignore", [])])
    return chosen, errors


def _snapshot_like(source: str) -> bool:
    return source != "-" and (os.path.isdir(source) or source.endswith((".tar.gz", ".tgz")))


def diagnose(request: Request, site_config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """Run checks and rules as ``request`` says (live, a snapshot, or pasted text): the report
    document, with ``elapsed_s`` the whole run's time. ``site_config``: the config already loaded
    for ``request`` (a caller that reads it too loads it once), else loaded here."""
    from hpcdoctor import pipeline
    from hpcdoctor.snapshot.bundle import open_snapshot
    from hpcdoctor.sysroot import LiveSysRoot

    started = time.monotonic()
    opts = options(request)
    if site_config is None:
        site_config = site(request)
    opts.site_gpus = tuple(site_config.get("gpu") or ())
    rules, rule_errors = rules_for(request, site_config)
    sources = list(request.sources)
    snapshots = [s for s in sources if _snapshot_like(s)]
    if snapshots and len(sources) > 1:
        raise RequestError("--from takes one snapshot, or one or more pasted texts, not both")
    # Unpacking a bundle and reading a paste count against the budget too, and the checks get
    # what is left of it: one --budget for the whole run, not one per stage.
    opts.deadline = started + opts.budget
    if snapshots:
        with open_snapshot(sources[0], deadline=opts.deadline) as root:
            doc = pipeline.document(root, opts, rules, site_config, source={"mode": "replay", "path": sources[0]})
    elif sources:
        from hpcdoctor.triage.paste import open_paste

        with open_paste(sources, deadline=opts.deadline) as (root, recognised, notes):
            doc = pipeline.document(root, opts, rules, site_config, source={
                "mode": "paste", "path": ", ".join(sources), "recognised": recognised, "notes": notes})
    else:
        doc = pipeline.document(LiveSysRoot(), opts, rules, site_config, source={"mode": "live"})
    if site_config.get("_path"):
        doc["config"] = site_config["_path"]
    if rule_errors:
        doc.setdefault("plugin_errors", []).extend(rule_errors)
    doc["elapsed_s"] = round(time.monotonic() - started, 3)
    return doc


# Archive forms people reach for that replays do not read: named, so the refusal can say which.
OTHER_ARCHIVES = (".zip", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".gz", ".7z", ".rar")


def record(request: Request, out: str, redact: bool = False) -> List[str]:
    """Record this node into ``out`` (a new folder, or a name ending in .tar.gz); returns the
    checks that could not give all their facts."""
    from hpcdoctor import pipeline
    from hpcdoctor.snapshot.bundle import is_archive, write_archive
    from hpcdoctor.sysroot import RecordingSysRoot

    opts = options(request)
    archive = is_archive(out)
    other = next((x for x in OTHER_ARCHIVES if out.lower().endswith(x)), None)
    if other and not archive:
        # Never a folder named like an archive: ask for the one archive form replays read.
        stem = out[: -len(other)]
        raise RequestError(f"{out}: snapshots are written as a folder or a .tar.gz archive, not {other} "
                           f"(try '{stem}.tar.gz')")
    if os.path.exists(out) and (archive or os.listdir(out)):
        raise RequestError(f"{out} already exists; choose a new name")
    folder = Path(tempfile.mkdtemp(prefix="hpcdoctor-snap-")) / "snapshot" if archive else Path(out)
    try:
        root = RecordingSysRoot(folder)
        gathered = pipeline.gather(root, opts)
        root.finish({
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "hpcdoctor": __version__,
            "depth": opts.depth,
            "redactions": ["secret-looking environment variables", "credentials in URLs",
                           "environment variables not relevant to diagnosis"],
            "checks": gathered["checks"],
        })
        if redact:
            from hpcdoctor.snapshot import redact as redaction

            red = redaction.sensitive_values(gathered["facts"], root.environ())
            redaction.redact_tree(folder, red)
            redaction.record_in_meta(folder, ["host names", "serial numbers", "GPU UUIDs", "user names"])
        if archive:
            write_archive(folder, out)
    except OSError as exc:
        raise RequestError(f"cannot write snapshot {out}: {exc.strerror or exc}") from None
    finally:
        if archive:
            shutil.rmtree(folder.parent, ignore_errors=True)
    return [n for n, p in gathered["checks"].items() if p["status"] != "ok"]
