"""An uncorrected machine check: the CPU's machine-check architecture reporting a hardware error it
could not correct, as mcelog decodes it (knowledge/messages/mcelog.toml), as rasdaemon records it
(rasdaemon_mce.toml) and as the kernel prints it (kernel_hwerr.toml), in a paste or in this node's
kernel log since boot (checks/kernel_log.py). Corrected errors are read and left alone."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text

SYMBOL = "host-machine-check-uncorrected"
# MCi_STATUS bit 61, UC: "uncorrected error" (andikleen/mcelog @ v208 mcelog.h MCI_STATUS_UC; Linux
# arch/x86/include/asm/mce.h MCI_STATUS_UC BIT_ULL(61)).
_UC = 1 << 61
# The lines that carry the raw status register: whether they are uncorrected is the register's to say.
_STATUS_READ = frozenset({"kernel_hwerr:mce-record", "mcelog:status-registers", "rasdaemon_mce:mce-event",
                          "rasdaemon_mce:mce-trace-record"})
# rasdaemon @ v0.8.5 mce-amd.c decode_amd_errcode: the texts it gives an error with MCI_STATUS_UC set.
_AMD_UNCORRECTED = frozenset({"System Fatal error.", "Uncorrected, software restartable error.",
                              "Uncorrected, software containable error."})
_FIX = ("mcelog --client 2>/dev/null || ras-mc-ctl --errors   # the decoded records: CPU, bank, and whether each was "
        "corrected (Uncorrected error / Uncorrected_error)\n"
        "journalctl -k | grep -i 'hardware error'   # or dmesg: the kernel's own machine-check records since boot\n"
        "scontrol update nodename=$(hostname -s) state=drain reason=\"uncorrected machine check\"   # administrators, "
        "under Slurm (or your scheduler's drain); then the vendor's hardware diagnostics and the BMC's event log")


def _uncorrected(s: dict) -> Optional[str]:
    """Why the message ``s`` states an uncorrected error, or None where it does not."""
    sid = s.get("id")
    if sid in _STATUS_READ:
        try:
            status = int(str(s.get("status", "")), 16)
        except ValueError:
            return None
        return f"MCi_STATUS {s.get('status')} has bit 61 (UC) set" if status & _UC else None
    if sid == "rasdaemon_mce:mce-summary":
        return f"rasdaemon counted {s.get('count')} \"{s.get('error')}\"" if s.get("error") in _AMD_UNCORRECTED else None
    return _SAYS.get(str(sid), "the report names an uncorrected error")


# What each message that states the fact itself says, in the words of its source.
_SAYS = {
    "mcelog:uncorrected-error": "mcelog prints \"Uncorrected error\" when MCi_STATUS bit 61 (UC) is set",
    "mcelog:processor-context-corrupt": "mcelog prints \"Processor context corrupt\" for MCi_STATUS bit 57 (PCC): "
                                        "the kernel grades it a panic",
    "mcelog:memdb-uncorrected-threshold": "mcelog's DIMM database counted uncorrected memory errors past its threshold",
    "kernel_hwerr:mce-fatal-panic": "the kernel panicked on a machine check it could not recover from",
    "kernel_hwerr:mce-panic-reason": "the kernel's severity grader's reason for its machine-check panic",
    "kernel_hwerr:mce-uncorrected-memory-user": "the kernel read memory with an uncorrectable error",
    "kernel_hwerr:mce-memory-error-not-recovered": "the kernel could not isolate a page with an uncorrectable error",
}


@rule("CPU008", SYMBOL, "error", "an uncorrected machine check reported by the CPU", impact=9)
def host_machine_check_uncorrected(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A machine check the CPU could not correct: mcelog's decoded "Uncorrected error" or
        "Processor context corrupt" (p4.c decode_mci), its raw "STATUS <hex> MCGSTATUS <hex>" line,
        the kernel's record "mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 4: <status>" or
        rasdaemon's event (ras-mc-ctl --errors "status=0x<hex>") whose MCi_STATUS has bit 61 (UC)
        set, rasdaemon's AMD texts ("Uncorrected, software containable error."), mcelog's DIMM count
        of uncorrected memory errors past its threshold, and the kernel's machine-check panic
        ("Kernel panic - not syncing: Fatal machine check", "Machine check: Processor context
        corrupt") or its uncorrected memory error in user access. Read in a paste and in this
        node's kernel log since boot. A report of corrected errors only is read and not answered:
        mcelog's manual says a small number of corrected errors is usually not a cause for worry;
        their rate is host-dram-ecc-errors' (EDAC counts) and mcelog's own thresholds' business.

    Why it matters:
        Uncorrected errors cause machine check exceptions which may kill processes or panic the
        machine (mcelog.8): data in a cache, in memory or on an interconnect was lost. Jobs on the
        node crash or compute wrong results in ways that look like software bugs, and the part
        (a DIMM, a CPU) usually fails again.

    How to fix:
        Drain the node and have the administrators run the vendor's hardware diagnostics: the
        decoded records (mcelog --client, ras-mc-ctl --errors) and the kernel's own lines name the
        CPU, the bank and, for memory, the channel and DIMM; the BMC's event log often has the
        same error. Rerun the job elsewhere.

    References:
        - https://github.com/andikleen/mcelog/blob/v208/mcelog.8
        - https://github.com/andikleen/mcelog/blob/v208/p4.c
        - https://github.com/mchehab/rasdaemon/blob/v0.8.5/util/ras-mc-ctl.in
        - https://www.kernel.org/doc/html/latest/admin-guide/ras.html
        - https://github.com/andikleen/mcelog/issues/63 (an mcelog "Uncorrected error": the maintainer, mcelog reports what the CPU reports)
    """
    logged = f.get("kernel_log.messages")
    for s in list(f.get("ticket.symptoms") or []) + list(logged or []):
        if not isinstance(s, dict) or SYMBOL not in (s.get("rules") or []):
            continue
        why = _uncorrected(s)
        if why is None:
            continue
        where = "this node's kernel log" if s.get("source") else "the paste"
        yield Hit(message=f"{where}, line {s.get('line')}: \"{told_text(s)}\": an uncorrected machine check ({why}): "
                          "the CPU reported a hardware error it could not correct, and data was lost; the node "
                          "should be drained and its hardware checked",
                  fix=_FIX, evidence=told_evidence(s))
        return
