"""Command line: ``hpcdoctor check | snapshot | rules | explain | env | knowledge``.

Contract: stdout carries the report or data, stderr progress and errors; exit 0 when nothing is
at or above ``--fail-on``, 1 when something is, 2 for usage errors, bad input or internal errors,
3 when nothing is at or above ``--fail-on`` but a probe that matters on this node could not give
its facts (see hpcdoctor.verdict; ``--fail-on never`` exits 0).
Every error is one line; a traceback is shown only with HPCDOCTOR_DEBUG=1.
"""

from __future__ import annotations

import argparse
import errno
import json
import math
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional, Sequence

from hpcdoctor import __version__
from hpcdoctor.report.safe import term, term_block

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3
FORMATS = ("terminal", "json", "markdown", "prometheus")


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


def strict_json(doc: Any, **kw: Any) -> str:
    """JSON that strict parsers accept: NaN and infinities become null, and where the document
    has an ``unknown`` map, the reason is recorded there."""
    from hpcdoctor.facts import finite

    unknown = doc.get("unknown") if isinstance(doc, dict) else None
    more: Optional[Dict[str, str]] = dict(unknown) if isinstance(unknown, dict) else None
    clean = finite(doc, more)
    if more is not None:
        clean["unknown"] = more
    return json.dumps(clean, allow_nan=False, default=str, **kw)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hpcdoctor", description="Diagnose and tune HPC and AI compute nodes.")
    p.add_argument("--version", action="version", version=f"hpcdoctor {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    c = sub.add_parser("check", help="inspect this node (or a snapshot) and report findings")
    c.add_argument("--from", dest="sources", action="append", metavar="PATH",
                   help="replay a snapshot folder or .tar.gz instead of inspecting this node")
    c.add_argument("--python", metavar="PATH", help="the interpreter your job runs (default: python3 on PATH)")
    c.add_argument("--deep", action="store_true", help="import torch and initialise the GPU runtime (~5 s)")
    c.add_argument("--bench", choices=("quick", "full"), help="run micro-benchmarks (implies --deep)")
    c.add_argument("--format", choices=FORMATS, default="terminal")
    c.add_argument("--output", "-o", metavar="FILE", help="write the --format output to FILE")
    c.add_argument("--fail-on", choices=("error", "warning", "advice", "never"), default="error",
                   help="exit 1 when a finding is at or above this severity (default: error)")
    c.add_argument("--select", action="append", metavar="RULES", help="only these rules (codes, prefixes or symbols)")
    c.add_argument("--ignore", action="append", metavar="RULES", help="skip these rules")
    c.add_argument("--config", metavar="FILE", help="site expectations (default: $HPCDOCTOR_CONFIG, /etc/hpcdoctor/config.toml)")
    c.add_argument("--budget", type=_seconds, default=None, metavar="SECONDS",
                   help="hard limit for all probes (default 30; 20 with --bench quick, 120 with --bench full)")
    c.add_argument("--quiet", "-q", action="store_true", help="print only blocking findings, one line each")
    c.add_argument("--verbose", "-v", action="store_true", help="also list skipped rules and why")
    c.add_argument("--rank-report", action="store_true", help="one line about this task's placement (run under srun)")
    c.add_argument("--cluster", action="store_true",
                   help="every rank checks its node; rank 0 prints one report for all (run under srun or torchrun)")
    c.add_argument("--cluster-timeout", type=_seconds, default=60.0, metavar="SECONDS",
                   help="how long rank 0 waits for the other ranks (default 60)")

    n = sub.add_parser("nhc", help="health check for Slurm/NHC: one drain-reason line and exit 1 on errors")
    n.add_argument("--from", dest="sources", action="append", metavar="PATH")
    n.add_argument("--python", metavar="PATH")
    n.add_argument("--config", metavar="FILE")
    n.add_argument("--select", action="append", metavar="RULES")
    n.add_argument("--ignore", action="append", metavar="RULES")
    n.add_argument("--budget", type=_seconds, default=20.0, metavar="SECONDS")
    n.add_argument("--deep", action="store_true")

    d = sub.add_parser("diff", help="compare two snapshots or JSON reports (good node against bad node)")
    d.add_argument("a", metavar="A")
    d.add_argument("b", metavar="B")
    d.add_argument("--format", choices=("terminal", "json"), default="terminal")

    s = sub.add_parser("snapshot", help="record what the checks read into a folder or .tar.gz")
    s.add_argument("out", metavar="OUT", help="folder to create, or a name ending in .tar.gz")
    s.add_argument("--python", metavar="PATH")
    s.add_argument("--deep", action="store_true")
    s.add_argument("--budget", type=_seconds, default=60.0, metavar="SECONDS")
    s.add_argument("--redact", action="store_true", help="also hide host names, serials, GPU UUIDs and user names")

    v = sub.add_parser("env", help="print export lines for findings an environment variable fixes")
    v.add_argument("--shell", choices=("bash", "zsh", "fish", "csh"), default="bash")
    v.add_argument("--from", dest="sources", action="append", metavar="PATH")
    v.add_argument("--python", metavar="PATH")
    v.add_argument("--select", action="append", metavar="RULES")
    v.add_argument("--ignore", action="append", metavar="RULES")
    v.add_argument("--config", metavar="FILE", help="site expectations (default: $HPCDOCTOR_CONFIG, /etc/hpcdoctor/config.toml)")
    v.add_argument("--budget", type=_seconds, default=30.0, metavar="SECONDS")
    v.add_argument("--deep", action="store_true")

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


class Stopped(BaseException):
    """SIGTERM or SIGHUP (Slurm at a time limit, a closed terminal): unwound like Ctrl-C, so that
    temporary folders are removed and child process groups ended, then exit 128 + the signal.
    A BaseException, so that no ``except Exception`` in a check swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: Any) -> None:
    # Later signals are ignored so that the clean-up they interrupt can finish.
    for sig in _STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signum)


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _install_signal_handlers() -> Dict[int, Any]:
    """Handlers for the stop signals; returns the previous ones (main() restores them, for
    callers that run it in their own process)."""
    previous: Dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for sig in _STOP_SIGNALS:
        old = signal.getsignal(sig)
        # A signal ignored by whoever started us (nohup's SIGHUP) stays ignored.
        if old is not signal.SIG_IGN:
            previous[sig] = old
            signal.signal(sig, _on_signal)
    return previous


def _stopped(code: int, message: str) -> int:
    from hpcdoctor.sysroot import kill_children

    kill_children(final=True)
    _err(message)
    return code


def silence_stdout() -> None:
    """The reader closed the pipe (``| head -1``): that is not a failure. Point stdout at
    /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _err(message: str) -> None:
    # Messages name paths and values from the input: shown, never obeyed by the terminal.
    sys.stderr.write(f"hpcdoctor: error: {term_block(message)}\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        try:  # a lone surrogate in a hostile snapshot's text is printed escaped, never fatal
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            pass
    if not args_list or (args_list[0].startswith("-") and args_list[0] not in ("-h", "--help", "--version")):
        args_list.insert(0, "check")
    previous = _install_signal_handlers()
    try:
        return _main(args_list)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _main(args_list: List[str]) -> int:
    try:
        args = build_parser().parse_args(args_list)
        commands = {"check": cmd_check, "snapshot": cmd_snapshot, "rules": cmd_rules, "env": cmd_env,
                    "nhc": cmd_nhc, "diff": cmd_diff, "explain": cmd_explain,
                    "knowledge": cmd_knowledge}
        if args.command not in commands:
            raise UsageError("no command given (see 'hpcdoctor --help')")
        return commands[args.command](args)
    except UsageError as exc:
        _err(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        return _stopped(128 + signal.SIGINT, "interrupted")
    except Stopped as exc:
        return _stopped(128 + exc.signum, f"stopped by {signal.Signals(exc.signum).name}")
    except BrokenPipeError:
        silence_stdout()
        return EXIT_OK
    except Exception as exc:
        from hpcdoctor.config import ConfigError
        from hpcdoctor.engine import RuleError
        from hpcdoctor.sysroot import SnapshotError

        if isinstance(exc, (SnapshotError, RuleError, ConfigError)):
            _err(str(exc))
            return EXIT_ERROR
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EMFILE):
            # The machine's state, not a bug: a full or read-only TMPDIR, a quota, no descriptors left.
            where = f" ({exc.filename})" if exc.filename else ""
            hint = "; free space in TMPDIR or point TMPDIR elsewhere" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
            _err(f"cannot go on: {exc.strerror}{where}{hint}")
            return EXIT_ERROR
        if os.environ.get("HPCDOCTOR_DEBUG"):
            raise
        _err(f"internal error: {exc.__class__.__name__}: {exc} (set HPCDOCTOR_DEBUG=1 for the traceback)")
        return EXIT_ERROR


# The benchmark tiers' whole-run limits (torch import included), as checks/bench.py documents.
DEFAULT_BUDGET = {None: 30.0, "quick": 20.0, "full": 120.0}


def _options(args: argparse.Namespace):
    from hpcdoctor.runner import Options

    bench = getattr(args, "bench", None)
    budget = args.budget if args.budget is not None else DEFAULT_BUDGET[bench]
    if not math.isfinite(budget) or budget <= 0:
        raise UsageError("--budget must be a positive number of seconds")
    deep = args.deep or bool(bench)
    return Options(python=args.python, depth="deep" if deep else "fast", bench=bench, budget=budget)


def _write_output(path: str, text: str) -> None:
    """Write atomically: a pre-job record is either complete or absent, never half a file."""
    target = Path(path)
    # A lone surrogate (from a hostile snapshot's JSON) cannot be UTF-8: written escaped, not fatal.
    data = text.encode("utf-8", errors="backslashreplace")
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            # mkstemp makes 0600: a file replaced keeps its mode, a new one gets the umask's, as
            # the shell's ">" would give it.
            try:
                mode = os.stat(target).st_mode & 0o7777
            except FileNotFoundError:
                mask = os.umask(0o077)
                os.umask(mask)
                mode = 0o666 & ~mask
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _write_prometheus(path: str, doc: Dict[str, Any]) -> None:
    """The Prometheus client's own atomic writer (temporary file, then rename), which node_exporter's
    textfile collector needs: it may read the file at any moment."""
    from hpcdoctor.report import prometheus

    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        prometheus.write(doc, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def diagnose(args: argparse.Namespace) -> Dict[str, Any]:
    """Run checks and rules as the arguments say (live, a snapshot, or pasted text); the report
    document."""
    from hpcdoctor import config as site_config
    from hpcdoctor import engine, pipeline
    from hpcdoctor.knowledge import gpus
    from hpcdoctor.snapshot.bundle import open_snapshot
    from hpcdoctor.sysroot import LiveSysRoot

    started = time.monotonic()
    options = _options(args)
    site = site_config.find(args.config) or {}
    gpus.set_site(site.get("gpu") or [])  # the site's [[gpu]] entries, before the shipped table
    rules, rule_errors = engine.load_rules()
    site_rules = site.get("rules") or {}
    rules = engine.select(rules, _csv(args.select) or [str(x) for x in site_rules.get("select", [])],
                          _csv(args.ignore) + [str(x) for x in site_rules.get("ignore", [])])
    sources = args.sources or []
    snapshot_like = [s for s in sources if s != "-" and (os.path.isdir(s) or s.endswith((".tar.gz", ".tgz")))]
    if snapshot_like and len(sources) > 1:
        raise UsageError("--from takes one snapshot, or one or more pasted texts, not both")
    # Unpacking a bundle and reading a paste count against the budget too, and the checks get
    # what is left of it: one --budget for the whole run, not one per stage.
    options.deadline = started + options.budget
    if snapshot_like:
        with open_snapshot(sources[0], deadline=options.deadline) as root:
            doc = pipeline.document(root, options, rules, site, source={"mode": "replay", "path": sources[0]})
    elif sources:
        from hpcdoctor.triage.paste import open_paste

        with open_paste(sources, deadline=options.deadline) as (root, recognised, notes):
            doc = pipeline.document(root, options, rules, site, source={
                "mode": "paste", "path": ", ".join(sources), "recognised": recognised, "notes": notes})
    else:
        doc = pipeline.document(LiveSysRoot(), options, rules, site, source={"mode": "live"})
    if site.get("_path"):
        doc["config"] = site["_path"]
    if rule_errors:
        doc.setdefault("plugin_errors", []).extend(rule_errors)
    doc["elapsed_s"] = round(time.monotonic() - started, 3)
    return doc


def cmd_nhc(args: argparse.Namespace) -> int:
    """Exit 0 and print nothing on a healthy node; print the drain reason and exit 1 otherwise.
    A run that cannot judge (an internal error) exits 2, which NHC and Slurm treat as a failure."""
    from hpcdoctor import config as site_config
    from hpcdoctor.report import nhc

    doc = diagnose(args)
    site = site_config.find(args.config)
    line = nhc.health_line(doc, site)
    # NHC wrappers capture stderr with stdout: a note beside a drain reason would garble it.
    for note in ([] if line else nhc.health_notes(doc, site)):
        sys.stderr.write(note + "\n")
    if line:
        sys.stdout.write(line + "\n")
        return EXIT_FINDINGS
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    from hpcdoctor.snapshot import diff

    result = diff.compare(diff.load_report(args.a), diff.load_report(args.b))
    if args.format == "json":
        sys.stdout.write(strict_json(result, indent=2) + "\n")
    else:
        sys.stdout.write(term_block(diff.render_text(result, args.a, args.b)))
    return EXIT_FINDINGS if result["facts"] or result["only_a"] or result["only_b"] else EXIT_OK


def cmd_env(args: argparse.Namespace) -> int:
    from hpcdoctor.report import envlines

    doc = diagnose(args)
    user_env = (doc["facts"].get("env") or {}).get("vars") or {}
    sys.stdout.write(envlines.render(doc, args.shell, user_env))
    if args.shell in ("fish", "csh"):
        # Their eval idioms cannot carry comments: the reasons go where a person reads them.
        for note in envlines.render_parts(doc, args.shell, user_env)[1]:
            sys.stderr.write(f"hpcdoctor: {note}\n")
    if doc.get("unchecked"):
        from hpcdoctor import verdict

        sys.stderr.write(term(f"hpcdoctor: warning: could not check {verdict.summary_line(doc['unchecked'])}; "
                              "these exports may be incomplete") + "\n")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from hpcdoctor import engine

    if args.cluster:
        return cluster_step(args)  # only node leaders check their node; rank 0 writes the report
    if args.format == "prometheus" and not args.sources:
        from hpcdoctor.nodescope import node_environment

        with node_environment():  # node metrics: the same from a Prolog as from a timer
            doc = diagnose(args)
    else:
        doc = diagnose(args)
    elapsed = doc["elapsed_s"]
    blocking = engine.at_or_above(doc["findings"], args.fail_on)
    text = render(doc, args.format, verbose=args.verbose, elapsed=elapsed) if args.output or args.format != "terminal" else None
    if args.output and args.format == "prometheus":
        _write_prometheus(args.output, doc)
    elif args.output:
        _write_output(args.output, text or "")
    try:
        _print_check(doc, args, blocking, text, elapsed)
    except BrokenPipeError:
        silence_stdout()  # the verdict stands whether or not all of it was read
    return exit_code(doc, blocking, args.fail_on)


def _print_check(doc: Dict[str, Any], args: argparse.Namespace, blocking: List[Dict[str, Any]],
                 text: Optional[str], elapsed: float) -> None:
    if args.rank_report:
        from hpcdoctor.report import rank

        if args.format == "json":
            sys.stdout.write(json.dumps(rank.record(doc), default=str) + "\n")
        else:
            sys.stdout.write(term(rank.line(doc)) + "\n")
    elif args.quiet:
        from hpcdoctor import verdict

        for f in blocking:
            subject = f"{f['subject']}: " if f.get("subject") else ""
            sys.stdout.write(term(f"hpcdoctor: {f['severity']} {f['code']} {f['symbol']}: {subject}{f['message']}") + "\n")
        if doc.get("unchecked") and args.fail_on != "never":
            sys.stdout.write(term(f"hpcdoctor: incomplete: could not check {verdict.summary_line(doc['unchecked'])}") + "\n")
    elif args.format == "terminal" or args.output:
        from hpcdoctor.report import terminal

        terminal.render(doc, sys.stdout, verbose=args.verbose, elapsed=elapsed)
    else:
        sys.stdout.write(text or "")


def exit_code(doc: Dict[str, Any], blocking: List[Dict[str, Any]], fail_on: str) -> int:
    """1 for findings at or above --fail-on; else 3 when a probe that matters is unknown, so an
    unchecked node never passes a pre-job script; ``--fail-on never`` always exits 0."""
    if blocking:
        return EXIT_FINDINGS
    if doc.get("unchecked") and fail_on != "never":
        return EXIT_INCOMPLETE
    return EXIT_OK


def cluster_reports(gathered: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    """Each node's own report, once per node (the rank that checked it), keyed by host name."""
    from hpcdoctor.report import cluster

    reports = gathered.get("nodes") or gathered.get("reports") or {}
    return {host: reports[rank] for host, (rank, _) in cluster._nodes(gathered).items()
            if isinstance(reports.get(rank), dict)}


def cluster_step(args: argparse.Namespace) -> int:
    """This rank's part of a cluster check; on rank 0, the cluster report (exit 2 if ranks are
    missing or posts were rejected)."""
    from hpcdoctor import cluster as orchestrate
    from hpcdoctor import engine
    from hpcdoctor.report import cluster

    if args.format not in ("terminal", "json", "prometheus"):
        raise UsageError(f"--cluster writes --format terminal, json or prometheus, not {args.format}")
    try:
        gathered = orchestrate.gather(args, diagnose)
    except orchestrate.ClusterError as exc:
        raise UsageError(str(exc)) from None
    if gathered is None:
        return EXIT_OK  # not rank 0: rank 0 prints the report
    result = cluster.analyse(gathered)
    if args.format == "json":
        text = strict_json(result, indent=2) + "\n"
    else:
        text = term_block(cluster.render(result))  # other ranks' values are untrusted
    if args.format == "prometheus":
        # One textfile for the whole allocation, every sample labelled by node.
        from hpcdoctor.report import prometheus

        registry = prometheus.registry_for_nodes(cluster_reports(gathered))
        if args.output:
            try:
                Path(args.output).parent.mkdir(parents=True, exist_ok=True)  # as the one-node path does
                prometheus.write_registry(registry, args.output)
            except OSError as exc:
                raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
        else:
            text = prometheus.exposition(registry)
    elif args.output:
        _write_output(args.output, text)
    sys.stdout.write(text)
    if result["missing_ranks"] or result["rejected_posts"]:
        if result["missing_ranks"]:
            _err(f"{len(result['missing_ranks'])} of {result['world_size']} rank(s) never reported; the report is partial")
        if result["rejected_posts"]:
            _err(f"{len(result['rejected_posts'])} post(s) to the cluster store were rejected (not signed with this job's key)")
        return EXIT_ERROR
    bad = engine.at_or_above(result["findings"], args.fail_on)
    return EXIT_FINDINGS if bad or result["divergent"] else EXIT_OK


def render(doc: Dict[str, Any], fmt: str, verbose: bool = False, elapsed: Optional[float] = None) -> str:
    if fmt == "json":
        return strict_json(doc, indent=2, sort_keys=False) + "\n"
    if fmt == "markdown":
        from hpcdoctor.report import markdown

        return markdown.render(doc)
    if fmt == "prometheus":
        from hpcdoctor.report import prometheus

        return prometheus.render(doc)
    import io

    from hpcdoctor.report import terminal

    buf = io.StringIO()
    terminal.render(doc, buf, verbose=verbose, elapsed=elapsed)
    return buf.getvalue()


OTHER_ARCHIVES = (".zip", ".tar", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst", ".gz", ".7z", ".rar")


def cmd_snapshot(args: argparse.Namespace) -> int:
    import shutil

    from hpcdoctor import pipeline
    from hpcdoctor.snapshot.bundle import is_archive, write_archive
    from hpcdoctor.sysroot import RecordingSysRoot

    options = _options(args)
    out = args.out
    archive = is_archive(out)
    other = next((x for x in OTHER_ARCHIVES if out.lower().endswith(x)), None)
    if other and not archive:
        # Never a folder named like an archive: ask for the one archive form replays read.
        stem = out[: -len(other)]
        raise UsageError(f"{out}: snapshots are written as a folder or a .tar.gz archive, not {other} "
                         f"(try '{stem}.tar.gz')")
    if os.path.exists(out) and (archive or os.listdir(out)):
        raise UsageError(f"{out} already exists; choose a new name")
    folder = Path(tempfile.mkdtemp(prefix="hpcdoctor-snap-")) / "snapshot" if archive else Path(out)
    try:
        root = RecordingSysRoot(folder)
        gathered = pipeline.gather(root, options)
        root.finish({
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "hpcdoctor": __version__,
            "depth": options.depth,
            "redactions": ["secret-looking environment variables", "credentials in URLs",
                           "environment variables not relevant to diagnosis"],
            "probes": gathered["probes"],
        })
        if args.redact:
            from hpcdoctor.snapshot import redact

            red = redact.sensitive_values(gathered["facts"], root.environ())
            redact.redact_tree(folder, red)
            redact.record_in_meta(folder, ["host names", "serial numbers", "GPU UUIDs", "user names"])
        if archive:
            write_archive(folder, out)
    except OSError as exc:
        raise UsageError(f"cannot write snapshot {out}: {exc.strerror or exc}") from None
    finally:
        if archive:
            shutil.rmtree(folder.parent, ignore_errors=True)
    failed = [n for n, p in gathered["probes"].items() if p["status"] != "ok"]
    sys.stderr.write(f"hpcdoctor: snapshot written to {out}"
                     + (f" ({len(failed)} probe(s) incomplete: {', '.join(failed)})" if failed else "") + "\n")
    return EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    from hpcdoctor import engine

    rules, _ = engine.load_rules()
    if args.format == "json":
        sys.stdout.write(json.dumps([r.to_json() for r in rules], indent=2) + "\n")
        return EXIT_OK
    from rich.markup import escape
    from rich.table import Table

    from hpcdoctor.report.terminal import make_console

    con = make_console(sys.stdout)
    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for col in ("code", "symbol", "severity", "title"):
        table.add_column(col)
    for r in rules:
        table.add_row(r.code, r.symbol, "/".join([r.severity, *r.also]), escape(r.title))
    con.print(table)
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    from hpcdoctor import engine, knowledge

    rules, _ = engine.load_rules()
    r = engine.find_rule(rules, args.rule)
    if r is None:
        raise UsageError(f"no rule {args.rule!r} (see 'hpcdoctor rules')")
    if args.format == "json":
        sys.stdout.write(json.dumps(r.to_json(), indent=2) + "\n")
        return EXIT_OK
    from rich.markup import escape

    from hpcdoctor.report.terminal import make_console

    con = make_console(sys.stdout)
    con.print(f"[bold]{r.code} {r.symbol}[/] ({escape(r.severity_story())}, {r.status}): {escape(r.title)}")
    for head in engine.HEADINGS[:-1]:
        con.print(f"\n[bold]{head}[/]")
        con.print(escape(r.docs.get(head, "")))
    con.print("\n[bold]References[/]")
    for ref in r.references:
        con.print(f"- {escape(knowledge.reference_title(ref))}")
    return EXIT_OK


def cmd_knowledge(args: argparse.Namespace) -> int:
    from hpcdoctor import config as site_config, knowledge

    tables = knowledge.provenance(site_config.find(args.config))
    if args.format == "json":
        sys.stdout.write(json.dumps(tables, indent=2) + "\n")
        return EXIT_OK
    from rich.markup import escape

    from hpcdoctor.report.terminal import make_console

    con = make_console(sys.stdout)
    shown = None if args.all else 3
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
    return EXIT_OK
