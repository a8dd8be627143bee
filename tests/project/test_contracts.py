"""The import structure and lint the code keeps, run as tests so CI holds them: import-linter's
contracts from pyproject.toml ([tool.importlinter]) and ruff's bug classes ([tool.ruff])."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    found = BIN / name if (BIN / name).exists() else shutil.which(name)
    if not found:
        if os.environ.get("CI") == "true" and (name != "lint-imports" or sys.version_info >= (3, 11)):
            pytest.fail(f"{name} is not installed: pip install -e '.[test]'")
        pytest.skip(f"{name} not installed (import-linter needs Python 3.11+)")
    return str(found)


def _package_as_installed(dest: Path) -> Path:
    """hpcdoctor with checks/ and rules/ inside it, as the wheel lays it out: import-linter reads
    packages from the file system, where the checkout keeps those two beside the package."""
    pkg = dest / "hpcdoctor"
    ignore = shutil.ignore_patterns("__pycache__", "*.toml", "*.json", "*.md")
    shutil.copytree(ROOT / "hpcdoctor", pkg, ignore=ignore)
    for top in ("checks", "rules"):
        shutil.copytree(ROOT / top, pkg / top, ignore=ignore)
    return dest


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run([_tool("lint-imports"), str(ROOT / "pyproject.toml")], capture_output=True, text=True,
                          cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree), NO_COLOR="1"), timeout=120)


def test_import_contracts_are_kept(tmp_path):
    res = _lint_imports(_package_as_installed(tmp_path))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def test_an_import_that_breaks_a_contract_is_caught(tmp_path):
    tree = _package_as_installed(tmp_path)
    init = tree / "hpcdoctor" / "knowledge" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\nfrom hpcdoctor import facts  # noqa\n", encoding="utf-8")
    res = _lint_imports(tree)
    assert res.returncode != 0 and "knowledge depends on nothing else in hpcdoctor BROKEN" in res.stdout


def test_ruff_finds_no_bug_class():
    res = subprocess.run([_tool("ruff"), "check", "--no-cache", "hpcdoctor", "checks", "rules", "tests", "bench"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def _imported_modules(path: Path) -> set:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_application_layer_knows_no_argparse():
    """hpcdoctor.app serves a Request; argparse is the command line's business (import-linter
    sees only hpcdoctor's own modules, so this one is read from the source)."""
    used = _imported_modules(ROOT / "hpcdoctor" / "app.py")
    assert "argparse" not in used and not {"hpcdoctor.cli", "hpcdoctor.cli_args"} & used, used
    assert "argparse" in _imported_modules(ROOT / "hpcdoctor" / "cli.py")  # the check can see an import
