"""The documentation site builds with `mkdocs build --strict`: a broken link, a missing anchor or
a page left out of the navigation fails it, and the generated pages (rules, knowledge tables,
measured figures) are built from what ships. Outside CI a checkout without MkDocs skips, saying so;
in CI (CI=true, where .ci/run installs the docs extra) a missing MkDocs is a failure."""

from __future__ import annotations

import html
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # a few seconds of Markdown rendering and a knowledge subprocess


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        if os.environ.get("CI"):
            pytest.fail("mkdocs and mkdocs-material are not installed: pip install -e '.[docs]'")
        pytest.skip("mkdocs or mkdocs-material not installed (pip install -e '.[docs]'; CI installs them)")
    out = tmp_path_factory.mktemp("site")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=300, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert res.returncode == 0, res.stderr[-3000:]
    return out


def test_every_rule_has_its_page_from_its_docstring(site):
    from hpcdoctor import engine, plugins

    rules = engine.collect_rules(plugins.builtin_modules("hpcdoctor.rules"))
    assert len(rules) > 40
    for r in rules:
        page = (site / "rules" / r.symbol / "index.html").read_text(encoding="utf-8")
        assert r.code in page and "How to fix" in page, r.symbol
        assert html.escape(r.title, quote=False) in page, (r.symbol, r.title)
        # The docstring's own words, as a paragraph joins them (line breaks become spaces).
        words = " ".join(r.docs["How to fix"].split()[:3])
        assert html.escape(words, quote=False) in " ".join(page.split()), (r.symbol, words)


def test_the_knowledge_page_is_the_cli_s_tables(site):
    tables = json.loads(subprocess.run([sys.executable, "-m", "hpcdoctor", "knowledge", "--format", "json"],
                                       capture_output=True, text=True, check=True).stdout)
    page = (site / "knowledge" / "index.html").read_text(encoding="utf-8")
    for t in tables:
        assert f'id="{t["table"]}"' in page, t["table"]
        for date in t["dates"]:
            assert date in page, (t["table"], date)


def test_measured_figures_come_from_the_bench_result_files(site):
    results = sorted((ROOT / "bench" / "results").glob("*.json"))
    assert results, "bench/results/ holds the result files the performance page is built from"
    page = (site / "performance" / "index.html").read_text(encoding="utf-8")
    for path in results:
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["date"] in page and doc["machine"]["uname"] in page, path.name
