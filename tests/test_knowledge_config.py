"""The site's [knowledge] overrides (config.toml) as the resolver and the rules read them, their
file:line errors, and `hpcdoctor knowledge`, which shows how current each table is."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli
from rulekit import facts, fired
from hpcdoctor import config

SITE = """[knowledge]
index_url = "https://pypi.site.example/torch"

[[knowledge.wheel]]
torch = ">=2.12,<2.13"
cuda = "13.0"
arch = ["sm_80", "sm_90", "sm_100", "sm_120"]
source = "torch.cuda.get_arch_list() of our 2.12.0+cu130, 2026-11-20"
"""


def _cfg(tmp_path, text):
    p = tmp_path / "site.toml"
    p.write_text(text)
    return str(p)


def test_site_wheel_and_index_reach_the_fix(tmp_path):
    cfg = config.load(_cfg(tmp_path, SITE))
    g = facts("h100-kvm-1gpu", **{"torch.build": "cpu", "torch.version": "2.11.0+cpu", "torch.cuda": None})
    (f,) = fired("torch-cpu-only", g, cfg)
    assert '"torch>=2.9,<2.13" --index-url https://pypi.site.example/torch/cu130' in f.fix
    assert not fired("torch-cpu-only", facts("h100-kvm-1gpu"), cfg)


@pytest.mark.parametrize("text,needle", [
    (SITE.replace('cuda = "13.0"', 'cuda = "cu130"'), r"site.toml:4: cuda must be like"),
    (SITE.replace('arch = ["sm_80"', 'arch = ["gfx942"'), r"site.toml:4: arch entries"),
    (SITE.replace('torch = ">=2.12,<2.13"', 'torch = "2.12"'), r"site.toml:4: torch"),
    (SITE.replace('source =', 'sauce ='), r"site.toml:4: unknown key 'sauce'"),
    (SITE.replace('https://pypi', 'pypi'), r"site.toml:2: index_url must be"),
    (SITE + '\n[knowledge.release_driver]\n"10.2" = 440\n', r"site.toml:11: release_driver maps"),
])
def test_knowledge_config_errors_name_file_and_line(tmp_path, text, needle):
    with pytest.raises(config.ConfigError, match=needle):
        config.load(_cfg(tmp_path, text))


def test_knowledge_command_shows_dates_and_sources(tmp_path):
    res = run_cli("knowledge", "--format", "json", "--config", _cfg(tmp_path, SITE))
    assert res.returncode == 0, res.stderr
    tables = {t["table"]: t for t in json.loads(res.stdout)}
    assert "2026-11-22" in tables["torch_wheels"]["dates"] and "2026-11-22" in tables["cuda"]["dates"]
    assert any("build_cuda.sh" in s for s in tables["torch_wheels"]["sources"])
    site = tables["site config [knowledge]"]
    assert site["entries"] == 1 and "2026-11-20" in site["dates"] and site["undated"] == 0
    text = run_cli("knowledge").stdout
    assert "torch_wheels" in text and "no read date recorded" in text  # undated tables say so


def test_knowledge_command_bad_config_is_one_line_exit_2(tmp_path):
    res = run_cli("knowledge", "--config", _cfg(tmp_path, SITE.replace('cuda = "13.0"', 'cuda = 13')))
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
    tables = json.loads(run_cli("knowledge", "--format", "json").stdout)
    text = run_cli("knowledge").stdout
    for t in tables:
        line = next(ln for ln in text.splitlines() if ln.startswith(t["table"] + " "))
        if t["dates"] and t["undated"]:
            assert f"{t['undated']} of them with no read date" in line, line
        else:
            assert "of them with no read date" not in line, line
