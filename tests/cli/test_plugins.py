"""Site plugin directories: a site's own checks and rules, loaded by the same mechanism."""

from __future__ import annotations

import json

from conftest import NODES, run_cli

CHECK = '''
NAME = "site_scratch"
TIMEOUT = 1.0


def collect(root, ctx):
    text = root.read_or("/proc/meminfo") or ""
    return {"site_scratch": {"meminfo_lines": len(text.splitlines())}}
'''

RULE = '''
from hpcdoctor.engine import Hit, rule


@rule("SITE001", "site-scratch-check", "warning", "a site's own rule")
def site_scratch(f):
    """
    What it detects:
        Whatever the site wants.
    Why it matters:
        Sites know their systems.
    How to fix:
        Ask the site.
    References:
        - https://example.org/site-guide
    """
    yield Hit(message=f"{f['site_scratch.meminfo_lines']} meminfo lines", fix="nothing")
'''


def test_site_checks_and_rules_from_hpcdoctor_path(tmp_path):
    (tmp_path / "checks").mkdir()
    (tmp_path / "rules").mkdir()
    (tmp_path / "checks" / "scratch.py").write_text(CHECK)
    (tmp_path / "rules" / "scratch.py").write_text(RULE)
    (tmp_path / "rules" / "broken.py").write_text("import no_such_module_here\n")
    res = run_cli("check", "--from", str(NODES / "cpu-kvm-2core"), "--format", "json", env={"HPCDOCTOR_PATH": str(tmp_path)})
    doc = json.loads(res.stdout)
    assert doc["facts"]["site_scratch"]["meminfo_lines"] > 10
    (hit,) = [f for f in doc["findings"] if f["code"] == "SITE001"]
    assert hit["severity"] == "warning" and "meminfo lines" in hit["message"]
    assert any("broken.py" in e and "ModuleNotFoundError" in e for e in doc["plugin_errors"])
    listing = json.loads(run_cli("rules", "--format", "json", env={"HPCDOCTOR_PATH": str(tmp_path)}).stdout)
    assert "site-scratch-check" in {r["symbol"] for r in listing}
