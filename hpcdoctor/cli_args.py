"""The command line's arguments: every command, its options and how a bad value is refused (one
line, exit 2, through ``UsageError``). What the commands do is hpcdoctor.cli's."""

from __future__ import annotations

import argparse
import math
from typing import Dict, List, NoReturn, Optional

from hpcdoctor import __version__, budgets
from hpcdoctor.report import REPORTERS

FORMATS = tuple(REPORTERS)


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line and exits 2."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _csv(values: Optional[List[str]]) -> List[str]:
    out: List[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _seconds(text: str) -> float:
    """A duration: a finite positive number (``nan`` compares false with everything, so a
    budget of nan would bound nothing)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive, finite number of seconds")
    return value


def _shared_options() -> Dict[str, argparse.ArgumentParser]:
    """Option groups that several commands take, written once (argparse parent parsers)."""
    target = argparse.ArgumentParser(add_help=False)
    target.add_argument("--python", metavar="PATH", help="the interpreter your job runs (default: python3 on PATH)")
    target.add_argument("--deep", action="store_true", help="import torch and initialise the GPU runtime (~5 s)")
    judged = argparse.ArgumentParser(add_help=False)
    judged.add_argument("--from", dest="sources", action="append", metavar="PATH",
                        help="replay a snapshot folder or .tar.gz, or read pasted text ('-': stdin), "
                             "instead of inspecting this node")
    judged.add_argument("--select", action="append", metavar="RULES", help="only these rules (codes, prefixes or symbols)")
    judged.add_argument("--ignore", action="append", metavar="RULES", help="skip these rules")
    judged.add_argument("--config", metavar="FILE",
                        help="site expectations (default: $HPCDOCTOR_CONFIG, /etc/hpcdoctor/config.toml)")
    return {"target": target, "judged": judged}


def _budget(parser: argparse.ArgumentParser, command: str, extra: str = "") -> None:
    parser.add_argument("--budget", type=_seconds, default=None, metavar="SECONDS",
                        help=f"hard limit for the whole run (default {budgets.COMMAND[command]:g}{extra})")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hpcdoctor", description="Diagnose and tune HPC and AI compute nodes.")
    p.add_argument("--version", action="version", version=f"hpcdoctor {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    shared = _shared_options()
    node = [shared["target"], shared["judged"]]

    c = sub.add_parser("check", parents=node, help="inspect this node (or a snapshot) and report findings")
    c.add_argument("--bench", choices=tuple(budgets.BENCH), help="run micro-benchmarks (implies --deep)")
    c.add_argument("--format", choices=FORMATS, default="terminal")
    c.add_argument("--output", "-o", metavar="FILE", help="write the --format output to FILE")
    c.add_argument("--fail-on", choices=("error", "warning", "advice", "info", "never"), default="error",
                   help="exit 1 when a finding is at or above this severity (default: error)")
    _budget(c, "check", "; " + ", ".join(f"{v:g} with --bench {k}" for k, v in budgets.BENCH.items()))
    c.add_argument("--quiet", "-q", action="store_true", help="print only blocking findings, one line each")
    c.add_argument("--verbose", "-v", action="store_true", help="also list skipped rules and why")
    c.add_argument("--rank-report", action="store_true", help="one line about this task's placement (run under srun)")
    c.add_argument("--cluster", action="store_true",
                   help="every rank checks its node; rank 0 prints one report for all (run under srun or torchrun)")
    c.add_argument("--cluster-timeout", type=_seconds, default=60.0, metavar="SECONDS",
                   help="how long rank 0 waits for the other ranks (default 60)")

    n = sub.add_parser("nhc", parents=node, help="health check for Slurm/NHC: one drain-reason line and exit 1 on errors")
    _budget(n, "nhc")

    d = sub.add_parser("diff", help="compare two snapshots or JSON reports (good node against bad node)")
    d.add_argument("a", metavar="A")
    d.add_argument("b", metavar="B")
    d.add_argument("--format", choices=("terminal", "json"), default="terminal")

    s = sub.add_parser("snapshot", parents=[shared["target"]], help="record what the checks read into a folder or .tar.gz")
    s.add_argument("out", metavar="OUT", help="folder to create, or a name ending in .tar.gz")
    s.add_argument("--bench", choices=tuple(budgets.BENCH),
                   help="also record the micro-benchmarks' figures (implies --deep); replays judge them")
    _budget(s, "snapshot", "; " + ", ".join(f"{budgets.default('snapshot', k):g} with --bench {k}" for k in budgets.BENCH))
    s.add_argument("--redact", action="store_true", help="also hide host names, serials, GPU UUIDs and user names")

    v = sub.add_parser("env", parents=node, help="print export lines for findings an environment variable fixes")
    v.add_argument("--shell", choices=("bash", "zsh", "fish", "csh"), default="bash")
    _budget(v, "env")

    r = sub.add_parser("rules", help="list the rules")
    r.add_argument("--format", choices=("terminal", "json"), default="terminal")

    k = sub.add_parser("knowledge", help="show how current hpcdoctor's knowledge is: each table's dates and sources")
    k.add_argument("--format", choices=("terminal", "json"), default="terminal")
    k.add_argument("--config", metavar="FILE", help="also show the site config's [knowledge] overrides")
    k.add_argument("--all", action="store_true", help="list every source, not the first few per table")

    e = sub.add_parser("explain", help="show the documentation of one rule")
    e.add_argument("rule", metavar="CODE_OR_SYMBOL")
    e.add_argument("--format", choices=("terminal", "json"), default="terminal")
    return p
