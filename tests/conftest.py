from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hpcdoctor import engine as _engine

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
NODES = FIXTURES / "nodes"
CPUINFO = FIXTURES / "cpuinfo"
PUBLIC = FIXTURES / "public"
ROOT = HERE.parent
# The real ticket corpus; HPCDOCTOR_TICKETS points the ticket tests at another copy of it.
TICKETS = Path(os.environ.get("HPCDOCTOR_TICKETS", FIXTURES / "tickets"))
# Paste triage keeps the parsed catalogues in the user's cache (hpcdoctor/knowledge/message_cache.py):
# the tests' own, one per worker, never the home of whoever runs them.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="hpcdoctor-test-cache-")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """How many worker processes pyproject's `-n auto` starts (pytest-xdist). The default run (the
    whole suite, slow tests left out): two, where two CPUs are ours. Anything else runs in one
    process: a run that names files or tests, because each worker starts its own interpreter and
    collects, which costs more than it saves on a few hundred tests; and any run with slow tests,
    whose cost is the thing they test (peak memory, budgets, real daemons, a benchmark's lock), so
    they get the machine to themselves. Two, not one per CPU: two on two cores is what was
    measured (pyproject's addopts). `-n N` on the command line, or PYTEST_XDIST_AUTO_NUM_WORKERS,
    decides instead."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own reading of it
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    here = config.invocation_params.dir
    whole = all((here / str(arg).split("::")[0]).resolve() in (ROOT, HERE) for arg in config.args)
    fast_only = " ".join(config.option.markexpr.split()) == "not slow"
    return 2 if whole and fast_only and cpus >= 2 else 0


# .ci/run runs the slow tests from the files that hold this mark (grep -E with the same expression),
# not by collecting all 17,000 tests again; a slow test marked any other way would be left out there.
SLOW_MARK_IN_FILE = r"mark\.slow|pytestmark *= *.*slow"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Fail the collection where a test is marked slow in a file .ci/run's slow list would not name."""
    found = re.compile(SLOW_MARK_IN_FILE)
    texts: dict = {}
    for item in items:
        if item.get_closest_marker("slow") is None:
            continue
        path = Path(item.path)
        if path not in texts:
            texts[path] = bool(found.search(path.read_text(encoding="utf-8", errors="replace")))
        if not texts[path]:
            raise pytest.UsageError(f"{item.nodeid} is marked slow, but its file does not say '{SLOW_MARK_IN_FILE}', "
                                    "which .ci/run looks for to run the slow tests")


def ticket(name: str) -> Path:
    """The paste of one corpus ticket, by its manifest id."""
    path = TICKETS / f"{name}.txt"
    if not path.exists():
        pytest.skip(f"ticket corpus not in this checkout ({path})")
    return path


def run_cli(*args: str, env=None, timeout: float = 60, input: str = None):
    """Run the installed CLI as a user would (a fresh process, real exit code and streams)."""
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "hpcdoctor", *args], capture_output=True, text=True,
                          env=full_env, timeout=timeout, input=input)


def run_main(*args: str, env=None, input: str = None):
    """`run_cli` in this process: the same arguments through the CLI's own entry point
    (hpcdoctor.cli.main), with stdin, stdout and stderr as UTF-8 byte streams like a pipe's, the
    environment run_cli gives a child, and the exit status SystemExit or main() gives. For tests of
    what a command prints and returns; what only a process has (signals, hangs, peak memory, a
    closed pipe, the interpreter run_cli starts) stays with run_cli. No timeout: never use it for
    a live check that can hang."""
    import contextlib
    import io
    import traceback

    from hpcdoctor import cli

    saved_env = dict(os.environ)
    os.environ.pop("NO_COLOR", None)
    os.environ.update(env or {})
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode()), encoding="utf-8")
    out, err = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True) for _ in range(2))
    saved_stdin, sys.stdin = sys.stdin, stdin
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = cli.main(list(args))
            except SystemExit as exc:  # argparse's --help, --version and usage errors
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if isinstance(exc.code, str):
                    err.write(exc.code + "\n")
            except Exception:  # what a child would print before exiting 1
                rc = 1
                err.write(traceback.format_exc())
    finally:
        sys.stdin = saved_stdin
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["hpcdoctor", *args], rc, out.buffer.getvalue().decode("utf-8"),
                                       err.buffer.getvalue().decode("utf-8"))


def measured(*args: str, env=None, timeout: float = 120, input: bytes = None):
    """Run the CLI in a fresh child through a small wrapper that reports the child's own
    getrusage(RUSAGE_CHILDREN): (CompletedProcess, peak RSS in MB, wall seconds)."""
    wrapper = ("import resource,subprocess,sys,json;"
               "r=subprocess.run(sys.argv[1:],stdin=sys.stdin,stdout=sys.stdout,stderr=sys.stderr);"
               "u=resource.getrusage(resource.RUSAGE_CHILDREN);"
               "sys.stderr.write('\\nRUSAGE '+json.dumps([u.ru_maxrss])+'\\n');sys.exit(r.returncode)")
    full_env = dict(os.environ, **(env or {}))
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-c", wrapper, sys.executable, "-m", "hpcdoctor", *args],
                         capture_output=True, env=full_env, timeout=timeout, input=input)
    wall = time.monotonic() - t0
    err = res.stderr.decode("utf-8", "replace")
    head, _, tail = err.rpartition("\nRUSAGE ")
    peak_mb = json.loads(tail)[0] / 1024
    res.stderr = head
    return res, peak_mb, wall


def report_of(*args: str, **kw) -> dict:
    """The JSON report of a command. `check --from PATH` (with `--fail-on never` at most) runs in
    this process through the CLI's entry point (conftest's triage); anything else, or any
    environment, input or timeout of its own, runs in a fresh process."""
    extra = args[3:]
    if not kw and args[:2] == ("check", "--from") and len(args) >= 3 and extra in ((), ("--fail-on", "never")):
        res = check_from(args[2], *extra)
        assert res["rc"] in (0, 1), res["stderr"]
        return res["doc"]
    res = run_cli(*args, "--format", "json", **kw)
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def alarms(path) -> dict:
    """The error and warning findings of `check --from <path>`, by symbol."""
    doc = report_of("check", "--from", str(path))
    return {f["symbol"]: f for f in doc["findings"] if f["severity"] in ("error", "warning")}


_CHECKED: dict = {}
_PARSER: list = []
# check_from runs the engine as it ships, not under _fixes_run_as_printed below: a memoised
# report is made once, inside whichever test asks first, and must not depend on which one that
# was. (Run out of process before, these reports were never under that check either.)
_SHIPPED_EVALUATE = _engine.evaluate


def _fingerprint(path: Path) -> tuple:
    """What a report of PATH depends on: its files' names, sizes and times, so a file a test
    rewrites in place is read again, never answered from the memo."""
    try:
        if path.is_dir():
            return tuple(sorted((str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns)
                                for p in path.rglob("*") if p.is_file()))
        st = path.stat()
        return (st.st_size, st.st_mtime_ns)
    except OSError:
        return ()


def check_from(path, *extra: str) -> dict:
    """`hpcdoctor check --from PATH --format json [EXTRA]`, run in this process through the CLI's
    own entry point (hpcdoctor.cli.main: argument parsing, open_paste or open_snapshot, the
    pipeline, the JSON writer, the exit code), memoised by path, content and arguments.

    Returns {"rc", "doc" (the parsed report or None), "stdout", "stderr"}. An exception escaping
    the CLI is kept as the traceback a fresh process prints with HPCDOCTOR_DEBUG=1 (rc None), so
    no "internal error" line can pass for a clean refusal."""
    import contextlib
    import io
    import traceback

    from hpcdoctor import cli, engine

    key = (str(path), _fingerprint(Path(path)), extra)
    if key in _CHECKED:
        return _fresh(_CHECKED[key])
    if not _PARSER:
        _PARSER.append(cli.build_parser())  # reusable; building one costs ~20 ms of gettext lookups
    out, err = io.StringIO(), io.StringIO()
    saved_parser, saved_debug, saved_evaluate = cli.build_parser, os.environ.get("HPCDOCTOR_DEBUG"), engine.evaluate
    cli.build_parser = lambda: _PARSER[0]
    engine.evaluate = _SHIPPED_EVALUATE
    os.environ["HPCDOCTOR_DEBUG"] = "1"
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(["check", "--from", str(path), "--format", "json", *extra])
    except Exception:  # what HPCDOCTOR_DEBUG=1 lets through: a crash, never a verdict
        rc = None
        err.write(traceback.format_exc())
    finally:
        cli.build_parser, engine.evaluate = saved_parser, saved_evaluate
        if saved_debug is None:
            os.environ.pop("HPCDOCTOR_DEBUG", None)
        else:
            os.environ["HPCDOCTOR_DEBUG"] = saved_debug
    try:
        doc = json.loads(out.getvalue())
    except ValueError:
        doc = None
    _CHECKED[key] = {"rc": rc, "doc": doc, "stdout": out.getvalue(), "stderr": err.getvalue()}
    return _fresh(_CHECKED[key])


def _fresh(run: dict) -> dict:
    # A test may change the report it is given (a node made to differ): each caller gets its own.
    return dict(run, doc=json.loads(run["stdout"]) if run["doc"] is not None else None)


@pytest.fixture(scope="session")
def triage():
    """check_from for the ticket corpus: every paste once per session, whichever test asks
    first (hundreds of pastes: a fresh interpreter each cost minutes). Tests of exit codes and
    streams use run_cli."""
    return check_from


@pytest.fixture
def cpuinfo_snapshot(tmp_path):
    """Build a snapshot folder holding only one real /proc/cpuinfo."""

    def make(name: str) -> Path:
        dest = tmp_path / name
        (dest / "fs" / "proc").mkdir(parents=True)
        shutil.copy(CPUINFO / name, dest / "fs" / "proc" / "cpuinfo")
        return dest

    return make


def real_shell(name: str) -> str:
    """The path of a real shell the test runs (.ci/run installs zsh, fish and tcsh): skipped
    where it is missing outside CI, a failure in CI."""
    path = shutil.which(name)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{name} is not installed: .ci/run installs it for these tests")
        pytest.skip(f"{name} not installed")
    return path


def torch_python() -> str:
    """An interpreter with the CPU build of torch, for the payload tests. .ci/run sets
    HPCDOCTOR_TEST_TORCH_PYTHON; in CI its absence is a failure, never a skip."""
    py = os.environ.get("HPCDOCTOR_TEST_TORCH_PYTHON") or sys.executable
    ok = subprocess.run([py, "-c", "import importlib.util,sys; sys.exit(importlib.util.find_spec('torch') is None)"],
                        capture_output=True).returncode == 0
    if not ok:
        if os.environ.get("CI"):
            pytest.fail(f"{py} has no torch: the payload tests need the CPU build (see README)")
        pytest.skip("no torch in this interpreter (CI installs the CPU build)")
    return py


@pytest.fixture(autouse=True)
def _fixes_run_as_printed(monkeypatch):
    """Every finding fired in-process, by any test, carries a fix that runs as printed."""
    from fixcheck import fix_problem
    from hpcdoctor import engine

    real = engine.evaluate

    def checked(rules, view):
        findings, skipped = real(rules, view)
        for f in findings:
            problem = fix_problem(f.fix, f.fix_lang)
            assert problem is None, f"{f.code} {f.symbol}: fix {f.fix!r}: {problem}"
        return findings, skipped

    monkeypatch.setattr(engine, "evaluate", checked)


@pytest.fixture(scope="session")
def slurm(tmp_path_factory):
    """A real one-node Slurm (tests/slurm_cluster.py), started once for the session and stopped by
    PID at its end. Skipped where it cannot start outside CI; in CI (CI=true) that is a failure."""
    import slurm_cluster

    cluster = slurm_cluster.SlurmCluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except slurm_cluster.Unavailable as exc:
        cluster.stop()
        if os.environ.get("CI") == "true":
            pytest.fail(f"a real Slurm is required in CI: {exc}")
        pytest.skip(f"no real Slurm here: {exc}")
    except BaseException:
        cluster.stop()
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
