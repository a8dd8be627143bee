"""ENV134 environment-modules-too-old (rules/env_modules.py): Environment Modules 3.2's own error
prefix, "<file>(<line>):<WEIGHT>:<number>: " (knowledge/messages/envmodules3.toml, from the C
modulecmd's error.c at 3.2.10), says the module command is 3.2, whose module returns 0 on errors.
Real pastes (fixtures/pastes, SOURCES.md); Modules 4.x/5.x and Lmod stay silent."""

from __future__ import annotations

import subprocess

from conftest import FIXTURES
from rulekit import fired, paste_facts

PASTES = FIXTURES / "pastes"


def _facts(tmp_path, name):
    return paste_facts(tmp_path, (PASTES / name).read_text(encoding="utf-8"), name)


def test_modules_3_2_load_error_fires_both_the_missing_module_and_the_old_tool(tmp_path):
    facts = _facts(tmp_path, "modules-505-module-load-exit-zero-modules-3-2.txt")
    (old,) = fired("environment-modules-too-old", facts)
    assert "3.2.11 to 3.2.13" in old.message  # ModuleCmd_Load.c(213) is those releases' line
    assert "returns 0" in old.message and "4.0" in old.message
    assert "module_checked load fred || exit 1" in old.fix and "Modules 5.x or Lmod" in old.fix
    assert fired("module-unknown", facts)  # the missing module keeps its own finding


def test_modules_3_2_10_line_names_its_release(tmp_path):
    facts = _facts(tmp_path, "hic-bench-9-modules32-locate-software-path.txt")
    (old,) = fired("environment-modules-too-old", facts)
    assert "Environment Modules 3.2.10" in old.message  # ModuleCmd_Load.c(208)
    assert "module_checked load NAME" in old.fix        # a path, not a module name: no name filled in


def test_modules_4_and_later_and_lmod_do_not_fire(tmp_path):
    for name in ("envmodules-192-unable-to-locate-gcc.txt", "hiop-524-lmod-unknown-and-not-loadable.txt",
                 "lmod-592-unknown-module-name-on-later-line.txt"):
        facts = _facts(tmp_path, name)
        assert not fired("environment-modules-too-old", facts), name
    assert fired("module-unknown", _facts(tmp_path, "envmodules-192-unable-to-locate-gcc.txt"))


def test_the_printed_check_catches_a_failed_load_that_module_itself_reports_as_0(tmp_path):
    """The fix's wrapper, run as printed by sh, under a module function that behaves as 3.2's does
    (eval of modulecmd's empty stdout: status 0, the error on stderr)."""
    facts = _facts(tmp_path, "modules-505-module-load-exit-zero-modules-3-2.txt")
    (old,) = fired("environment-modules-too-old", facts)
    fake = ("module() { eval `echo \"ModuleCmd_Load.c(213):ERROR:105: Unable to locate a modulefile for '$2'\" >&2`; }\n"
            "module load fred || exit 9\n")
    script = fake + "\n".join(line for line in old.fix.splitlines() if not line.startswith("#")) + "\necho went-on\n"
    run = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30)
    assert run.returncode == 1 and "went-on" not in run.stdout  # plain module returned 0; the wrapper 1
