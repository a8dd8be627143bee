"""Command line: ``hpcdoctor check | snapshot | rules | explain | env | knowledge``.

Contract: stdout carries the report or data, stderr progress and errors; exit 0 when nothing is
at or above ``--fail-on``, 1 when something is, 2 for usage errors, bad input or internal errors,
3 when nothing is at or above ``--fail-on`` but a check that matters on this node could not give
its facts (see hpcdoctor.verdict; ``--fail-on never`` exits 0).
Every error is one line; a traceback is shown only with HPCDOCTOR_DEBUG=1. The work itself is
hpcdoctor.app's: this module turns arguments into a Request and the result into output.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import signal
import sys
from typing import Any, Dict, List, Optional, Sequence

from hpcdoctor.app import Request, RequestError
from hpcdoctor.cli_args import UsageError, _csv, build_parser
from hpcdoctor.report.files import OutputError, write_atomic, write_with
from hpcdoctor.stopping import Stopped, install_handlers, silence_stdout
from hpcdoctor.report.safe import term, term_block

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR, EXIT_INCOMPLETE = 0, 1, 2, 3
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
    previous = install_handlers()
    try:
        return _main(args_list)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _stopped(code: int, message: str) -> int:
    from hpcdoctor.sysroot import kill_children

    kill_children(final=True)
    _err(message)
    return code


def _main(args_list: List[str]) -> int:
    try:
        args = build_parser().parse_args(args_list)
        commands = {"check": cmd_check, "snapshot": cmd_snapshot, "rules": cmd_rules, "env": cmd_env,
                    "nhc": cmd_nhc, "diff": cmd_diff, "explain": cmd_explain,
                    "knowledge": cmd_knowledge}
        if args.command not in commands:
            raise UsageError("no command given (see 'hpcdoctor --help')")
        return commands[args.command](args)
    except (UsageError, RequestError, OutputError) as exc:
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


def _request(args: argparse.Namespace) -> Request:
    """The request the parsed command line makes (hpcdoctor.app knows nothing of argparse)."""
    return Request(
        command=args.command,
        sources=tuple(getattr(args, "sources", None) or ()),
        python=getattr(args, "python", None),
        deep=bool(getattr(args, "deep", False)),
        bench=getattr(args, "bench", None),
        budget=getattr(args, "budget", None),
        config=getattr(args, "config", None),
        select=tuple(_csv(getattr(args, "select", None))),
        ignore=tuple(_csv(getattr(args, "ignore", None))),
        cluster_timeout=getattr(args, "cluster_timeout", 60.0),
    )


def cmd_nhc(args: argparse.Namespace) -> int:
    """Exit 0 and print nothing on a healthy node; print the drain reason and exit 1 otherwise.
    A run that cannot judge (an internal error) exits 2, which NHC and Slurm treat as a failure."""
    from hpcdoctor import app
    from hpcdoctor.report import nhc

    request = _request(args)
    site_config = app.site(request)
    doc = app.diagnose(request, site_config)
    site = site_config or None
    line = nhc.health_line(doc, site)
    # NHC wrappers capture stderr with stdout: a note beside a drain reason would garble it.
    for note in ([] if line else nhc.health_notes(doc, site)):
        sys.stderr.write(note + "\n")
    if line:
        sys.stdout.write(line + "\n")
        return EXIT_FINDINGS
    return EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    from hpcdoctor.report.json_report import strict_json
    from hpcdoctor.snapshot import diff

    result = diff.compare(diff.load_report(args.a), diff.load_report(args.b))
    if args.format == "json":
        sys.stdout.write(strict_json(result, indent=2) + "\n")
    else:
        sys.stdout.write(term_block(diff.render_text(result, args.a, args.b)))
    return EXIT_FINDINGS if result["facts"] or result["only_a"] or result["only_b"] else EXIT_OK


def cmd_env(args: argparse.Namespace) -> int:
    from hpcdoctor import app
    from hpcdoctor.report import envlines

    doc = app.diagnose(_request(args))
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
    from hpcdoctor import app, engine

    if args.cluster:
        return cmd_cluster(args)  # only node leaders check their node; rank 0 writes the report
    request = _request(args)
    if args.format == "prometheus" and not args.sources:
        from hpcdoctor.nodescope import node_environment

        with node_environment():  # node metrics: the same from a Prolog as from a timer
            doc = app.diagnose(request)
    else:
        doc = app.diagnose(request)
    blocking = engine.at_or_above(doc["findings"], args.fail_on)
    text = _render(doc, args.format, args.verbose) if args.output or args.format != "terminal" else None
    if args.output and args.format == "prometheus":
        from hpcdoctor.report import prometheus

        write_with(args.output, lambda path: prometheus.write(doc, path))
    elif args.output:
        write_atomic(args.output, text or "")
    try:
        _print_check(doc, args, blocking, text)
    except BrokenPipeError:
        silence_stdout()  # the verdict stands whether or not all of it was read
    return exit_code(doc, blocking, args.fail_on)


def _render(doc: Dict[str, Any], fmt: str, verbose: bool) -> str:
    from hpcdoctor import report

    if fmt == "terminal":
        from hpcdoctor.report import terminal

        return terminal.render(doc, verbose=verbose)
    return report.render(doc, fmt)


def _print_check(doc: Dict[str, Any], args: argparse.Namespace, blocking: List[Dict[str, Any]],
                 text: Optional[str]) -> None:
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

        # Written as it is drawn: a terminal gets rich's own rendering, not a captured copy.
        terminal.write(doc, sys.stdout, verbose=args.verbose, elapsed=doc.get("elapsed_s"))
    else:
        sys.stdout.write(text or "")


def exit_code(doc: Dict[str, Any], blocking: List[Dict[str, Any]], fail_on: str) -> int:
    """1 for findings at or above --fail-on; else 3 when a check that matters is unknown, so an
    unchecked node never passes a pre-job script; ``--fail-on never`` always exits 0."""
    if blocking:
        return EXIT_FINDINGS
    if doc.get("unchecked") and fail_on != "never":
        return EXIT_INCOMPLETE
    return EXIT_OK


def cmd_cluster(args: argparse.Namespace) -> int:
    """This rank's part of a cluster check; on rank 0, the cluster report (exit 2 if ranks are
    missing or posts were rejected)."""
    from hpcdoctor import app, engine
    from hpcdoctor.cluster import analysis, orchestrate
    from hpcdoctor.report import cluster as cluster_report
    from hpcdoctor.report.json_report import strict_json

    if args.format not in ("terminal", "json", "prometheus"):
        raise UsageError(f"--cluster writes --format terminal, json or prometheus, not {args.format}")
    try:
        gathered = orchestrate.gather(_request(args), app.diagnose)
    except orchestrate.ClusterError as exc:
        raise UsageError(str(exc)) from None
    if gathered is None:
        return EXIT_OK  # not rank 0: rank 0 prints the report
    result = analysis.analyse(gathered)
    if args.format == "json":
        text = strict_json(result, indent=2) + "\n"
    else:
        text = term_block(cluster_report.render(result))  # other ranks' values are untrusted
    if args.format == "prometheus":
        # One textfile for the whole allocation, every sample labelled by node.
        from hpcdoctor.report import prometheus

        registry = prometheus.registry_for_nodes(analysis.node_reports(gathered))
        if args.output:
            write_with(args.output, lambda path: prometheus.write_registry(registry, path))
        else:
            text = prometheus.exposition(registry)
    elif args.output:
        write_atomic(args.output, text)
    sys.stdout.write(text)
    if result["missing_ranks"] or result["rejected_posts"]:
        if result["missing_ranks"]:
            _err(f"{len(result['missing_ranks'])} of {result['world_size']} rank(s) never reported; the report is partial")
        if result["rejected_posts"]:
            _err(f"{len(result['rejected_posts'])} post(s) to the cluster store were rejected (not signed with this job's key)")
        return EXIT_ERROR
    bad = engine.at_or_above(result["findings"], args.fail_on)
    return EXIT_FINDINGS if bad or result["divergent"] else EXIT_OK


def cmd_snapshot(args: argparse.Namespace) -> int:
    from hpcdoctor import app

    failed = app.record(_request(args), args.out, redact=args.redact)
    sys.stderr.write(f"hpcdoctor: snapshot written to {args.out}"
                     + (f" ({len(failed)} check(s) incomplete: {', '.join(failed)})" if failed else "") + "\n")
    return EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    from hpcdoctor import engine

    rules, _ = engine.load_rules()
    if args.format == "json":
        sys.stdout.write(json.dumps([r.to_json() for r in rules], indent=2) + "\n")
        return EXIT_OK
    from hpcdoctor.report import catalogue

    catalogue.rules_table(rules, sys.stdout)
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
    from hpcdoctor.report import catalogue

    catalogue.rule_page(r, engine.HEADINGS[:-1], knowledge.reference_title, sys.stdout)
    return EXIT_OK


def cmd_knowledge(args: argparse.Namespace) -> int:
    from hpcdoctor import config as site_config, knowledge

    tables = knowledge.provenance(site_config.find(args.config))
    if args.format == "json":
        sys.stdout.write(json.dumps(tables, indent=2) + "\n")
        return EXIT_OK
    from hpcdoctor.report import catalogue

    catalogue.knowledge_tables(tables, sys.stdout, shown=None if args.all else 3)
    return EXIT_OK
