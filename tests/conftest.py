from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures"
NODES = FIXTURES / "nodes"
CPUINFO = FIXTURES / "cpuinfo"
PUBLIC = FIXTURES / "public"
ROOT = HERE.parent
# The real ticket corpus; HPCDOCTOR_TICKETS points the ticket tests at another copy of it.
TICKETS = Path(os.environ.get("HPCDOCTOR_TICKETS", FIXTURES / "tickets"))


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


def report_of(*args: str, **kw) -> dict:
    res = run_cli(*args, "--format", "json", **kw)
    assert res.returncode in (0, 1), res.stderr
    return json.loads(res.stdout)


def alarms(path) -> dict:
    """The error and warning findings of `check --from <path>`, by symbol."""
    doc = report_of("check", "--from", str(path))
    return {f["symbol"]: f for f in doc["findings"] if f["severity"] in ("error", "warning")}


@pytest.fixture
def cpuinfo_snapshot(tmp_path):
    """Build a snapshot folder holding only one real /proc/cpuinfo."""

    def make(name: str) -> Path:
        dest = tmp_path / name
        (dest / "fs" / "proc").mkdir(parents=True)
        shutil.copy(CPUINFO / name, dest / "fs" / "proc" / "cpuinfo")
        return dest

    return make


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
