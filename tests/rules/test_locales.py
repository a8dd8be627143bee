"""locale-not-available on verbatim public pastes and on outputs recorded on the development VM
(tests/fixtures/pastes, SOURCES.md there): Perl's, bash's, glibc's, Python's and click's own words."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rulekit import PASTES, facts, fired, paste_facts, recorded_paste_facts, run_rule
from hpcdoctor.checks import locales


@pytest.mark.parametrize("paste", ["warp-265-perl-locale-lc-ctype-utf8.txt", "warp-265-bash-setlocale-lc-ctype-utf8.txt"])
def test_macos_bare_codeset_forwarded_by_ssh_is_named(paste):
    (f,) = fired("locale-not-available", recorded_paste_facts(paste))
    # Perl's block lists LC_ALL (unset) before LC_CTYPE = "UTF-8": the set one is named
    assert 'LC_CTYPE=UTF-8 names a locale this machine does not have ("UTF-8" is a bare codeset' in f.message
    assert "export LC_ALL=C.UTF-8 LANG=C.UTF-8" in f.fix and "SendEnv" in f.fix


@pytest.mark.parametrize("paste, named", [
    ("debian12-perl-setting-locale-failed.txt", "LC_ALL=de_DE.UTF-8"),
    ("debian12-bash-setlocale-lc-all.txt", "LC_ALL=xx_YY.UTF-8"),
    ("debian12-locale-cannot-set.txt", None),
    ("debian12-python-unsupported-locale.txt", None),
])
def test_recorded_here(paste, named):
    (f,) = fired("locale-not-available", recorded_paste_facts(paste))
    if named:
        assert f"{named} names a locale this machine does not have" in f.message
        assert "bare codeset" not in f.message   # a full locale name, only not generated here
    assert f.fix.startswith("locale -a")


def test_clicks_refusal_says_python_encodes_as_ascii_and_ignores_its_own_advice_as_environment():
    (f,) = fired("locale-not-available", recorded_paste_facts("click-8.0.4-ascii-environment.txt"))
    assert "Python's text encoding is ASCII" in f.message
    # click's advice ("export LC_ALL=C.UTF-8") is read as export lines, and is not this node's environment
    assert "here" not in f.message


@pytest.mark.parametrize("paste, line", [("debian12-python-c-locale-ascii-print.txt", 3),
                                         ("python-3.11-c-locale-ascii-print-characters.txt", 3),
                                         ("python-2.7-c-locale-ascii-print.txt", 3)])
def test_an_ascii_codec_error_alone_is_only_the_usual_cause(paste, line):
    # code that encodes to ASCII itself (or Python 2 writing to a pipe) fails the same way under any locale
    (f,) = fired("locale-not-available", recorded_paste_facts(paste))
    assert f.severity == "info" and f"line {line}" in f.message and "getpreferredencoding" in f.fix


def test_an_ascii_codec_error_under_the_c_locale_the_paste_sets_is(tmp_path):
    text = "export LC_ALL=C\n" + (PASTES / "debian12-python-c-locale-ascii-print.txt").read_text()
    (f,) = fired("locale-not-available", paste_facts(tmp_path, text))
    assert "Python's text encoding is ASCII" in f.message and "line 4" in f.message


def test_the_live_locale_sharpens_a_pasted_message():
    g = facts("cpu-kvm-2core", **{"env.vars.LANG": "en_US.UTF-8"})
    g["facts"]["ticket"] = recorded_paste_facts("debian12-bash-setlocale-lc-all.txt")["facts"]["ticket"]
    (f,) = fired("locale-not-available", g)
    assert f.message.endswith("; here LANG=en_US.UTF-8")


def test_a_live_node_alone_says_nothing():
    assert not fired("locale-not-available", facts("cpu-kvm-2core", **{"env.vars.LANG": "C"}))


def test_silent_without_a_locale_message():
    # a paste without a locale message: the node's own locales are not in it, so they are not judged
    findings, skipped = run_rule("locale-not-available", recorded_paste_facts("pytorch-35646-pip-and-conda-same-torch-healthy.txt"))
    assert not findings and [s["reason"] for s in skipped] == ["needs locales: the environment was not recorded"]


def test_bash_warning_names_the_forwarded_variable_and_the_missing_locale():
    # tailscale/tailscale#18315: bash's "setlocale: %s: cannot change locale (%s): %s" on ssh login
    (f,) = fired("locale-not-available", recorded_paste_facts("tailscale-18315-bash-setlocale-sv-se.txt"))
    assert f.severity == "error" and "LC_CTYPE=sv_SE.UTF-8" in f.message
    assert f.fix.startswith("locale -a | grep -i 'sv_SE'") and "unset LC_CTYPE" in f.fix
    assert "locale-gen sv_SE.UTF-8" in f.fix and "glibc-langpack-sv" in f.fix


def test_bash_warning_retyped_without_the_locale_names_the_variable():
    # akinomyoga/ble.sh#81's title drops bash's "(pt_PT.UTF-8)"; the variable is still the one to look at
    (f,) = fired("locale-not-available", recorded_paste_facts("ble-sh-81-bash-setlocale-lc-ctype-retyped.txt"))
    assert f.severity == "error" and f.message.startswith("LC_CTYPE names a locale this machine does not have")
    assert "unset LC_CTYPE" in f.fix and "export LC_ALL=C.UTF-8" in f.fix and "locale-gen" not in f.fix


# --- on a node: checks/locales.py asks the C library (newlocale) for each locale the environment names

def _recorded_node_locales():
    rec = json.loads((PASTES / "newlocale-debian12-vm-macos-forwarded.json").read_text())
    return locales.facts_of(rec["environ"], rec["answers"])


def test_a_forwarded_macos_locale_on_a_node_is_a_warning():
    # recorded on the development VM: LC_CTYPE=UTF-8 (macOS Terminal's) and LANG=en_US.UTF-8 load nowhere
    # here, LC_TIME=C.UTF-8 does
    (f,) = fired("locale-not-available", facts("cpu-kvm-2core", locales=_recorded_node_locales()))
    assert f.severity == "warning"
    assert f.message.startswith("LC_CTYPE=UTF-8, LANG=en_US.UTF-8: the C library cannot load these locales")
    assert "bare codeset" in f.message and "LC_TIME" not in f.message
    assert f.fix.startswith("locale -a   #") and "unset LC_CTYPE" in f.fix and "export LC_ALL=C.UTF-8" in f.fix


def test_lc_all_that_loads_overrides_the_rest():
    got = _recorded_node_locales()
    got["LC_ALL"] = {"value": "C.UTF-8", "loads": True}
    assert not fired("locale-not-available", facts("cpu-kvm-2core", locales=got))


def test_a_locale_not_asked_is_not_judged():
    got = locales.facts_of({"LC_ALL": "/opt/locales/xx"}, {})
    findings, skipped = run_rule("locale-not-available", facts("cpu-kvm-2core", locales=got))
    assert not findings and skipped


def test_newlocale_answers_here_for_the_c_locale_and_an_impossible_name():
    # C and POSIX are built into every C library; no system holds a locale by this name
    assert locales.loads("C") == {"loads": True} and locales.loads("POSIX") == {"loads": True}
    assert locales.loads("zz_QQ.NOT-A-CODESET")["loads"] is False


def test_the_check_reads_the_environment_as_the_shell_gave_it():
    # Python coerces a C or unloadable LC_CTYPE to C.UTF-8 in its own environment (PEP 538) before
    # hpcdoctor runs; the live root undoes that from /proc/self/environ, so the user's value is judged
    code = ("from hpcdoctor.sysroot.live import LiveSysRoot; from hpcdoctor.checks import locales; "
            "import json; print(json.dumps(locales.collect(LiveSysRoot(), None)))")
    env = {"PATH": os.environ.get("PATH", "/usr/bin"), "LC_CTYPE": "UTF-8", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    got = json.loads(out.stdout)["locales"]
    assert got["LC_CTYPE"] == {"value": "UTF-8", "loads": False}
