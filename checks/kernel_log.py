"""This node's kernel log since boot (dmesg, or the journal's copy of the kernel's messages where the
ring buffer is closed to users), read through the catalogues of what the kernel and the NVIDIA driver
print there about the hardware (hpcdoctor/knowledge/messages/): NVIDIA's Xid reports (xid.toml), the
driver's other NVRM notices (nvrm.toml: a GPU that stopped answering on PCIe, a VBIOS it cannot read),
amdgpu's bad-page reports of an AMD GPU (amdgpu_ras.toml), its scheduler's ring timeouts and VM page
faults (amdgpu_job.toml),
the kernel's hardware-error families (kernel_hwerr.toml: machine checks, PCIe AER and DPC, APEI/GHES,
IOMMU hardware errors), EDAC's host-memory reports (edac.toml) and the kernel refusing a module for its
signature under Secure Boot or lockdown (kernel_modsign.toml). A GPU that fell off the bus, one
that NVIDIA says needs a reset or support, or failing DIMMs are found on the node itself and not only
in a pasted log."""

from __future__ import annotations

from typing import Any, Dict, List

from hpcdoctor.facts import Unknown
from hpcdoctor.sysroot import Missing, SysRoot
from hpcdoctor.triage.messages import find_messages, kept_for

NAME = "kernel_log"
# dmesg itself gets 2 s (below); the rest is reading a log of some thousand lines through the
# catalogues, and, when a snapshot is recorded, blanking what they do not read. It was 8 s while
# NVRM's 600 needles were searched for one by one (about 4 s for 11,000 lines on a loaded 2-core
# machine); with the needle index (hpcdoctor.triage.scan.NeedleIndex) 1,432 lines took 0.18 s on
# that machine under a load of 10, so 3 s still holds a log of some 20,000 lines there, and a
# `check` stays an answer in seconds.
TIMEOUT = 3.0

# dmesg reads the ring buffer, which kernel.dmesg_restrict=1 keeps to root; journalctl -k reads
# the journal's copy of this boot's kernel messages, open to the systemd-journal and adm groups.
SOURCES = (["dmesg"], ["journalctl", "-k", "-b", "-q", "--no-pager", "-o", "short"])
FAMILIES = ("xid", "nvrm", "amdgpu_ras", "amdgpu_job", "kernel_hwerr", "edac", "kernel_modsign")


def _read_lines(text: str) -> str:
    # A snapshot keeps of the log only what the catalogues read: the rest names network
    # interfaces by MAC and IP, disks and USB devices by serial, and goes to support staff.
    return kept_for(text, FAMILIES)


def collect(root: SysRoot, ctx: Any) -> Dict[str, Any]:
    tried: List[str] = []
    for argv in SOURCES:
        try:
            res = root.run(argv, timeout=2.0, keep=_read_lines)
        except Missing as exc:
            tried.append(str(exc))
            continue
        if res.ok and res.stdout.strip():
            found = [dict(m, source=" ".join(argv)) for m in find_messages(res.stdout, families=FAMILIES)]
            return {"kernel_log": {"source": " ".join(argv), "messages": found}}
        tried.append(res.why_failed() if not res.ok else f"{argv[0]} printed nothing")
    return {"kernel_log": Unknown("the kernel log could not be read: " + "; ".join(tried))}
