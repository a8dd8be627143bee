"""msr-module-not-loaded: performance tools that cannot open /dev/cpu/<n>/msr, from LIKWID's,
Intel PCM's and the kernel tools' own messages. A real paste from set Y (unsealed); the other
wordings are the emitters' format strings filled in, as the catalogue says."""

from __future__ import annotations

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule

LIKWID = "../tickets_blind_y/likwid-318-msr-module-not-loaded.txt"


def test_likwid_perfctr_without_msr_access_names_both_causes_and_the_access_daemon():
    (f,) = fired("msr-module-not-loaded", recorded_paste_facts(LIKWID))
    assert f.severity == "error" and "line 12" in f.message
    assert "not loaded" in f.message and "root-only" in f.message
    assert f.fix.startswith("ls -l /dev/cpu/0/msr") and "likwid-accessD" in f.fix and "sudo modprobe msr" in f.fix


@pytest.mark.parametrize("text, cause", [
    ("Cannot access MSR device file /dev/cpu/0/msr: No such file or directory.\n", "module is not loaded"),
    ("Cannot access MSR device file /dev/cpu/3/msr: Permission denied.\n", "root-only"),
    ('turbostat: no /dev/cpu/0/msr, Try "# modprobe msr" : No such file or directory\n', "module is not loaded"),
    ("Failed to find the daemon '/usr/local/sbin/likwid-accessD'\n", "access daemon"),
])
def test_the_words_decide_which_cause(tmp_path, text, cause):
    (f,) = fired("msr-module-not-loaded", paste_facts(tmp_path, text))
    assert cause in f.message


def test_pcm_is_not_sent_to_likwids_daemon(tmp_path):
    (f,) = fired("msr-module-not-loaded", paste_facts(
        tmp_path, "Can not access CPUs Model Specific Registers (MSRs).\nTry to execute 'modprobe msr' as root user and then\n"))
    assert "likwid" not in f.fix


def test_perf_events_refused_is_not_the_msr_module(tmp_path):
    facts = paste_facts(tmp_path, "Error: Access to performance monitoring and observability operations is limited.\n")
    assert run_rule("msr-module-not-loaded", facts)[0] == []
    assert not fired("msr-module-not-loaded", facts)
