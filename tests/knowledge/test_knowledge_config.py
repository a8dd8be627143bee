"""The site's [knowledge] overrides (config.toml) as the resolver and the rules read them, their
file:line errors, and `hpcdoctor knowledge`, which shows how current each table is."""

from __future__ import annotations

import json

import pytest

from conftest import run_main
from rulekit import facts, fired
from hpcdoctor import config

SITE = """[knowledge]
index_url = "https://pypi.site.example/torch"

[[knowledge.wheel]]
torch = ">=2.15,<2.16"
cuda = "13.0"
arch = ["sm_80", "sm_90", "sm_100", "sm_120"]
source = "torch.cuda.get_arch_list() of our 2.15.0+cu130, 2026-11-20"
"""


def _cfg(tmp_path, text):
    p = tmp_path / "site.toml"
    p.write_text(text)
    return str(p)


def test_site_wheel_and_index_reach_the_fix(tmp_path):
    cfg = config.load(_cfg(tmp_path, SITE.replace(">=2.15,<2.16", ">=2.16,<2.17")))
    g = facts("h100-kvm-1gpu", **{"torch.build": "cpu", "torch.version": "2.15.0+cpu", "torch.cuda": None,
                                  "torch.pip": {"torch": "2.15.0"}})
    # 2.16 is past the shipped tables, and so are its Pythons (the table reads 2.14 and 2.15 in
    # PyPI's file lists): on this node (Python 3.12) the site's entry is offered only where it names them.
    (f,) = fired("torch-cpu-only", g, cfg)
    assert '"torch>=2.14,<2.15" --index-url https://pypi.site.example/torch/cu13' in f.fix, f.fix
    cfg = config.load(_cfg(tmp_path, SITE))  # 2.15: arch list from the site, Pythons from the table
    (f,) = fired("torch-cpu-only", g, cfg)
    assert '"torch>=2.15,<2.16" --index-url https://pypi.site.example/torch/cu130' in f.fix, f.fix
    cfg = config.load(_cfg(tmp_path, SITE + 'python = ["3.11", "3.12"]\n'))
    (f,) = fired("torch-cpu-only", g, cfg)
    assert '"torch>=2.15,<2.16" --index-url https://pypi.site.example/torch/cu130' in f.fix, f.fix
    assert not fired("torch-cpu-only", facts("h100-kvm-1gpu"), cfg)


@pytest.mark.parametrize("text,needle", [
    (SITE.replace('cuda = "13.0"', 'cuda = "cu130"'), r"site.toml:4: cuda must be like"),
    (SITE.replace('arch = ["sm_80"', 'arch = ["gfx942"'), r"site.toml:4: arch entries"),
    (SITE.replace('torch = ">=2.15,<2.16"', 'torch = "2.15"'), r"site.toml:4: torch"),
    (SITE.replace('source =', 'sauce ='), r"site.toml:4: unknown key 'sauce'"),
    (SITE.replace('https://pypi', 'pypi'), r"site.toml:2: index_url must be"),
    (SITE + '\n[knowledge.release_driver]\n"10.2" = 440\n', r"site.toml:11: release_driver maps"),
])
def test_knowledge_config_errors_name_file_and_line(tmp_path, text, needle):
    with pytest.raises(config.ConfigError, match=needle):
        config.load(_cfg(tmp_path, text))


def test_knowledge_command_shows_dates_and_sources(tmp_path):
    res = run_main("knowledge", "--format", "json", "--config", _cfg(tmp_path, SITE))
    assert res.returncode == 0, res.stderr
    tables = {t["table"]: t for t in json.loads(res.stdout)}
    assert "2026-11-22" in tables["torch_wheels"]["dates"] and "2026-11-22" in tables["cuda"]["dates"]
    assert any("build_cuda.sh" in s for s in tables["torch_wheels"]["sources"])
    site = tables["site config [knowledge]"]
    assert site["entries"] == 1 and "2026-11-20" in site["dates"] and site["undated"] == 0
    text = run_main("knowledge").stdout
    assert "torch_wheels" in text and "no read date recorded" not in text  # every shipped table is dated
    undated = run_main("knowledge", "--config", _cfg(tmp_path, SITE.replace(", 2026-11-20", ""))).stdout
    assert "no read date recorded" in undated  # a site entry with no date says so


def test_knowledge_command_bad_config_is_one_line_exit_2(tmp_path):
    res = run_main("knowledge", "--config", _cfg(tmp_path, SITE.replace('cuda = "13.0"', 'cuda = 13')))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "site.toml:4" in res.stderr


def test_one_dated_entry_does_not_make_a_table_look_current(tmp_path, monkeypatch):
    from hpcdoctor import knowledge

    (tmp_path / "mixed.toml").write_text(
        '[a]\nsource = "vendor page"\nread = "2026-11-23"\n\n[b]\nsource = "from memory"\n\n'
        '[c]\nsource = "https://example.org/notes, read 2026-11-20"\n')
    (tmp_path / "whole.toml").write_text('date = "2026-11-21"\n\n[[x]]\nsource = "build script"\n')
    monkeypatch.setattr(knowledge, "KNOWLEDGE_DIR", tmp_path)
    knowledge.load.cache_clear()
    try:
        tables = {t["table"]: t for t in knowledge.provenance()}
    finally:
        knowledge.load.cache_clear()
    assert tables["mixed"]["entries"] == 3 and tables["mixed"]["undated"] == 1
    assert tables["mixed"]["dates"] == ["2026-11-20", "2026-11-23"]
    assert tables["whole"]["undated"] == 0  # a table-wide date covers its entries


def test_knowledge_command_counts_undated_entries():
    tables = json.loads(run_main("knowledge", "--format", "json").stdout)
    text = run_main("knowledge").stdout
    for t in tables:
        line = next(ln for ln in text.splitlines() if ln.startswith(t["table"] + " "))
        if t["dates"] and t["undated"]:
            assert f"{t['undated']} of them with no read date" in line, line
        else:
            assert "of them with no read date" not in line, line


def test_a_failed_search_is_not_a_read_date(tmp_path, monkeypatch):
    """gpus.toml records entries whose datasheet could not be found again as 'not re-read
    2026-11-23: <what was searched>'; the date in that sentence is when the search failed, so the
    entry still counts as undated until it carries a read date of its own."""
    from hpcdoctor import knowledge

    (tmp_path / "t.toml").write_text(
        '[[sku]]\nsource = "not re-read 2026-11-23: no datasheet found; from https://example.org/ds.pdf"\n\n'
        '[[sku]]\nsource = "vendor page; not re-read 2026-11-23: tdp_w"\nread = "2026-11-23"\n')
    monkeypatch.setattr(knowledge, "KNOWLEDGE_DIR", tmp_path)
    knowledge.load.cache_clear()
    try:
        (t,) = knowledge.provenance()
    finally:
        knowledge.load.cache_clear()
    assert t["entries"] == 2 and t["undated"] == 1


def test_gpu_table_reports_the_entries_not_re_read():
    """Every [[sku]] whose source says 'not re-read' and has no read date is counted undated by
    'hpcdoctor knowledge', so a support engineer sees how much of the GPU table is unchecked."""
    from hpcdoctor import knowledge

    skus = knowledge.load("gpus")["sku"]
    unread = [s["id"] for s in skus if "not re-read" in s["source"] and not s.get("read")]
    assert "t4" in unread and "mi100" not in unread
    (t,) = [t for t in knowledge.provenance() if t["table"] == "gpus"]
    assert t["undated"] >= len(unread)


# How a source was found (the research tools and their vocabulary) belongs in the TOML comments:
# a user reading `hpcdoctor knowledge` sees what was read and when, not the search that led there.
_SEARCH_WORDS = ("find_string", "find_files", "read_file", "search index", "code index", "index id", "corpus",
                 "corpora", "stored version", "searched", "search tool")


def test_knowledge_command_shows_no_search_tool_vocabulary():
    tables = json.loads(run_main("knowledge", "--format", "json").stdout)
    shown = [(t["table"], s) for t in tables for s in t["sources"]]
    assert len(shown) > 100  # every shipped table's sources were read, not an empty listing
    leaks = [(table, word, s[:120]) for table, s in shown for word in _SEARCH_WORDS if word in s.lower()]
    assert leaks == []
    text = run_main("knowledge").stdout
    assert not [w for w in _SEARCH_WORDS if w in text.lower()]
