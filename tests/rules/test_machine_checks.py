"""host-machine-check-uncorrected (CPU008): an uncorrected machine check as mcelog, rasdaemon and the
kernel report it, from real public pastes; a corrected-only report is read and stays silent."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts, told_facts, told_paste_facts
from hpcdoctor.triage.messages import find_messages

SYM = "host-machine-check-uncorrected"


def test_mcelogs_uncorrected_error_fires_though_a_corrected_record_follows():
    # set AE's ticket: one "Uncorrected error" record and one "Corrected error" record (issue 63)
    (f,) = fired("host-machine-check-uncorrected", recorded_paste_facts("mcelog-63-uncorrected-machine-check-hardware.txt"))
    assert f.severity == "error" and '"Uncorrected error"' in f.message and "bit 61" in f.message
    assert "state=drain" in f.fix and "ras-mc-ctl --errors" in f.fix and "mcelog --client" in f.fix


def test_an_uncorrected_record_with_a_corrupt_context_fires():
    g = recorded_paste_facts("mcelog-73-uncorrected-processor-context-corrupt.txt")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"mcelog:uncorrected-error", "mcelog:processor-context-corrupt", "mcelog:status-registers",
            "mcelog:internal-unclassified-error", "mcelog:error-overflow"} <= ids
    (f,) = fired("host-machine-check-uncorrected", g)
    assert "line 11" in f.message


def test_the_kernels_record_fires_on_its_uc_bit():
    # "CPU 0: Machine Check: 0 Bank 4: a600000000020408": bit 61 set (the maintainer: a hardware issue)
    (f,) = fired("host-machine-check-uncorrected", recorded_paste_facts("mcelog-70-machine-check-events-logged.txt"))
    assert "a600000000020408 has bit 61 (UC) set" in f.message


def test_a_corrected_mcelog_report_through_syslog_is_read_and_silent():
    g = told_paste_facts("mcelog-51-corrected-memory-controller-syslog.txt")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"mcelog:corrected-error", "mcelog:memory-controller", "mcelog:status-registers",
            "mcelog:hardware-event"} <= ids
    assert not fired("host-machine-check-uncorrected", g)


def test_rasdaemons_corrected_events_are_each_read_and_silent():
    g = told_paste_facts("nixos-infra-523-ras-mc-ctl-corrected-only.txt")
    events = [s for s in g["facts"]["ticket"]["symptoms"] if s["id"] == "rasdaemon_mce:mce-event"]
    assert len(events) == 3 and {s["status"] for s in events} == {"9c2040000000011b"}
    assert not fired("host-machine-check-uncorrected", g)


def test_a_later_uncorrected_rasdaemon_event_fires():
    # the pull request's first event, then the same line with UC (bit 61) set: the format filled in
    text = (PASTE_523_LINE + "\n" + PASTE_523_LINE.replace("1 2024-12-19", "2 2024-12-21")
            .replace("Corrected error, no action required.", "Uncorrected, software containable error.")
            .replace("status=0x9c2040000000011b", "status=0xbc2040000000011b") + "\n")
    (f,) = fired("host-machine-check-uncorrected", told_facts(text))
    assert "bc2040000000011b" in f.message and "line 2" in f.message


PASTE_523_LINE = ("1 2024-12-19 03:52:38 +0000 error: Corrected error, no action required., CPU 2, bank Unified Memory "
                  "Controller (bank=17), mcg mcgstatus=0, mci CECC, memory_channel=0,csrow=1, mcgcap=0x0000011c, "
                  "status=0x9c2040000000011b, addr=0x319deb440, misc=0xd01b0fff01000000, walltime=0x67639886, "
                  "cpuid=0x00870f10, bank=0x00000011")


def test_rasdaemons_summary_of_amd_uncorrected_errors_fires_and_corrected_does_not():
    # ras-mc-ctl --summary's format (issue 121's line, and mce-amd.c's uncorrected text filled in)
    assert not fired("host-machine-check-uncorrected", told_facts("MCE records summary:\n\t1 Corrected error, no action required. errors\n"))
    (f,) = fired("host-machine-check-uncorrected", told_facts("MCE records summary:\n\t2 Uncorrected, software containable error. errors\n"))
    assert "rasdaemon counted 2" in f.message


def test_a_corrected_kernel_record_is_silent():
    # rasdaemon issue 95's kernel line: dc2040000000011b has bit 61 clear (a corrected AMD DRAM error)
    text = "[    0.644338] mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 17: dc2040000000011b\n"
    assert not fired("host-machine-check-uncorrected", told_facts(text))


def test_the_kernels_panic_reason_fires():
    # Linux core.c mce_panic's format with a severity.c reason, filled in
    text = ("mce: [Hardware Error]: Machine check: Processor context corrupt\n"
            "Kernel panic - not syncing: Fatal machine check\n")
    ids = [s["id"] for s in find_messages(text)]
    assert "kernel_hwerr:mce-panic-reason" in ids and "kernel_hwerr:mce-fatal-panic" in ids
    (f,) = fired("host-machine-check-uncorrected", told_facts(text))
    assert "Processor context corrupt" in f.message


def test_prose_about_uncorrected_errors_is_not_a_report():
    text = "Is an Uncorrected error from mcelog something to worry about? We saw Processor context corrupt once\n"
    assert not fired("host-machine-check-uncorrected", told_facts(text))


def test_read_from_the_nodes_kernel_log():
    lines = find_messages("[    0.064265] mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 4: a600000000020408\n",
                          families=("kernel_hwerr",))
    g = facts("h100-kvm-1gpu", **{"kernel_log.messages": [dict(m, source="dmesg") for m in lines]})
    (f,) = fired("host-machine-check-uncorrected", g)
    assert f.message.startswith("this node's kernel log") and f.evidence.get("kernel_log.line") == 1
    corrected = find_messages("[    0.644338] mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 17: dc2040000000011b\n",
                              families=("kernel_hwerr",))
    assert not fired("host-machine-check-uncorrected", facts("h100-kvm-1gpu", **{"kernel_log.messages": [dict(m, source="dmesg") for m in corrected]}))
