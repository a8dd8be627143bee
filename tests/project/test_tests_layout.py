"""tests/ is laid out like the code (docs/development.md, "Where a test goes"): every test file
sits in one of the folders that table names, none in tests/ itself, and no two share a name (the
folders are not packages, so two test_x.py would be one module to pytest's default import mode),
and none imports another (shared helpers live in tests/, which every import mode can import)."""

from __future__ import annotations

import re
from collections import Counter

from conftest import HERE, ROOT


def _documented_folders() -> set:
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    section = text.split("## Where a test goes", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z_]+)/` \|", section, re.M))


def test_no_test_file_in_the_top_folder():
    assert sorted(p.name for p in HERE.glob("test_*.py")) == [], "move it to the folder of what it tests"


def test_every_test_folder_is_a_documented_one():
    folders = {p.parent.relative_to(HERE).parts[0] for p in HERE.rglob("test_*.py") if "fixtures" not in p.parts}
    documented = _documented_folders()
    assert {"parse", "rules", "triage", "cli", "hostile"} <= documented  # the table was found and read
    assert folders - documented == set(), "add the folder to docs/development.md or use a listed one"
    assert documented - folders == set(), "a documented folder holds no tests"


def test_test_file_names_are_unique():
    names = Counter(p.name for p in HERE.rglob("test_*.py") if "fixtures" not in p.parts)
    assert [n for n, c in names.items() if c > 1] == []


def test_no_test_module_imports_another():
    importing = [f"{p.relative_to(HERE)}: {m.group(0)}" for p in HERE.rglob("test_*.py") if "fixtures" not in p.parts
                 for m in re.finditer(r"^\s*(from|import) test_\w+", p.read_text(encoding="utf-8"), re.M)]
    assert importing == [], "move the shared helper to conftest.py, rulekit.py or ticketkit.py"
