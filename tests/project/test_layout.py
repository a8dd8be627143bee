"""The repository's top level holds checks/ and rules/, installed as hpcdoctor.checks and
hpcdoctor.rules. These tests build the real wheel and run it from outside the repository, so a
package that the wheel forgets (or a path computed from the old layout) fails here."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT


def _build_wheel(dest: Path) -> Path:
    # --no-build-isolation: the build must not need the network; setuptools is already installed.
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          "-w", str(dest), str(ROOT)], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    (wheel,) = dest.glob("hpcdoctor-*.whl")
    return wheel


def _installed_wheel(tmp_path: Path) -> Path:
    """The real wheel, installed into a folder of its own (to put on PYTHONPATH)."""
    target = tmp_path / "site"
    res = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                          str(_build_wheel(tmp_path / "dist"))], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return target


@pytest.mark.slow  # builds the real wheel with pip
def test_wheel_maps_top_level_folders_into_the_package(tmp_path):
    wheel = _build_wheel(tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "hpcdoctor/checks/cpu.py" in names and "hpcdoctor/rules/torch_build.py" in names
    assert "hpcdoctor/payload/torch_probe.py" in names and "hpcdoctor/payload/bench_probe.py" in names
    assert "hpcdoctor/knowledge/gpus.toml" in names and "hpcdoctor/schema/report.schema.json" in names
    # Nothing at the top level of site-packages but the package itself and its metadata.
    tops = {n.split("/", 1)[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"hpcdoctor"}


@pytest.mark.slow  # builds the real wheel with pip
def test_installed_wheel_runs_from_outside_the_repository(tmp_path):
    target = _installed_wheel(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(target))
    probe = ("import hpcdoctor, hpcdoctor.checks.cpu, hpcdoctor.rules, importlib.util;"
             "print(hpcdoctor.checks.cpu.__file__);"
             "print(importlib.util.find_spec('checks'), importlib.util.find_spec('rules'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.splitlines()
    assert first.startswith(str(target)), first
    assert second == "None None"
    rules = subprocess.run([sys.executable, "-m", "hpcdoctor", "rules"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=60)
    assert rules.returncode == 0, rules.stderr
    assert "THR001" in rules.stdout and "omp-threads-unset" in rules.stdout
    # A payload found through the installed package, not the checkout: the fast torch probe runs.
    check = subprocess.run([sys.executable, "-m", "hpcdoctor", "check", "--format", "json", "--python",
                            sys.executable], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert check.returncode in (0, 1), check.stderr
    assert '"payload failed' not in check.stdout and "can't open file" not in check.stdout


@pytest.mark.slow  # builds the real wheel with pip
def test_checkout_root_runs_after_a_plain_install(tmp_path):
    """`pip install .` then `python -m hpcdoctor` from the checkout's root: the checkout's hpcdoctor/
    shadows the installed package there, and must still find its checks and rules."""
    target = _installed_wheel(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(target))
    # As `python -m hpcdoctor rules` where only the wheel is installed: this test environment's own
    # editable install is taken off the import path first.
    plain = ("import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()];"
             "sys.argv = ['hpcdoctor', 'rules']; runpy.run_module('hpcdoctor', run_name='__main__', alter_sys=True)")
    rules = subprocess.run([sys.executable, "-c", plain], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert rules.returncode == 0, rules.stderr
    assert "THR001" in rules.stdout
