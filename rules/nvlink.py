"""NVLink and NVSwitch faults (GPU039): the links between a node's GPUs, and the switches between them,
as the driver's Xids, DCGM's diagnostic and the NVSwitch driver report them, read through the message
catalogues (hpcdoctor/knowledge/messages/ xid.toml, dcgm_diag.toml, nvrm.toml)."""

from __future__ import annotations

import re
from typing import Dict, Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "nvlink-errors"

# The NVLink5 Xids (144-150) name their own fatality after the unit ("NETIR_LINK_EVT Fatal",
# "RLW_RXPIPE Nonfatal"); Xid 74 needs its registers decoded (NVIDIA's WORKFLOW_NVLINK_ERR: some bits
# are benign or sympathetic), and a code written in prose says neither.
_NONFATAL = re.compile(r"\bNon-?fatal\b", re.IGNORECASE)
_FATAL = re.compile(r"(?<![Nn]on)(?<![Nn]on-)\bFatal\b")


def _grade(s: Dict) -> str:
    if s.get("family") != "xid":
        return "error"  # DCGM's isolate and triage reports, the NVSwitch driver's own
    detail = str(s.get("detail") or "")
    if s.get("code") in range(144, 151) and _FATAL.search(detail) and not _NONFATAL.search(detail):
        return "error"
    return "warning"


def _what(s: Dict) -> str:
    if s.get("family") == "xid":
        return f"Xid {s.get('code')} ({str(s.get('means', '')).split(' (')[0]})"
    return f"{s.get('key')} ({str(s.get('means', '')).split(':')[0]})"


_FIX = ("nvidia-smi nvlink --status   # each GPU's links: an inactive or missing link is the fault's place\n"
        "nvidia-smi nvlink --errorcounters   # the CRC, replay and recovery counts per link\n"
        "scontrol update nodename=$(hostname -s) state=drain reason=\"NVLink fault\"   # Slurm administrators; or "
        "your scheduler's drain\n"
        "dcgmi diag -r 3   # administrators, once drained: DCGM's NVLink and fabric checks; a failure there goes to "
        "the vendor with sudo nvidia-bug-report.sh")


@rule("GPU039", SYMBOL, "error", "a fault on the NVLink links or NVSwitches between the node's GPUs", impact=9,
      also={"warning": "Xid 74, or an NVLink5 Xid (144-150) the driver marks Nonfatal: a link error that NVIDIA's "
                       "workflow decodes before acting"})
def nvlink_errors(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log or the node's kernel log: Xid 74 (NVLink error) and the NVLink5 Xids
        144-150 (SAW, RLW, TLW, TREX, NVLPW_CTRL, NETIR, MSE errors), at error where the driver's
        line says Fatal, else a warning. DCGM's diagnostic reports of the links: NVLink errors past
        their threshold or on a counter that must stay 0, CRC errors over 100 a second, an effective
        or symbol bit error rate past its limit, a link down or fewer links up than expected (of a
        GPU or an NVSwitch), a fatal NVSwitch error or SXid, a peer-to-peer write over NVLink that
        failed. The NVSwitch driver meeting an unrecoverable error in its interrupt handler. Not the NVSwitch driver's
        "Blacklisted nvswitch device": an administrator's exclusion prints the same words. Not
        CUDA's "uncorrectable NVLink error detected during the execution" alone: programs whose
        error went away with a newer PyTorch print it too (quanpn90/NMTGMinor#28).

    Why it matters:
        On HGX and DGX nodes every collective and peer-to-peer copy between the GPUs runs over
        NVLink: a link down or erring fails the job (NCCL, CUDA's uncorrectable NVLink error) or slows it
        to PCIe speed, on every job scheduled there, until the link is repaired. A job cannot work
        around it; reinstalling the framework changes nothing.

    How to fix:
        Read the links' state and error counters (nvidia-smi nvlink), drain the node, run DCGM's
        diagnostic, and send a failing link (a GPU, an NVSwitch tray, a cable or bridge) to the
        vendor with nvidia-bug-report.sh. An Xid 74 is decoded first: NVIDIA's workflow names the
        register bits that are benign.

    References:
        - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Xid 74 WORKFLOW_NVLINK_ERR; 144-150 WORKFLOW_NVLINK5_ERR)
        - https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/dcgm_errors.h (DCGM_FR_NVLINK_*, DCGM_FR_NVSWITCH_*)
        - https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/index.html (NVSwitch errors, SXids)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    told = sorted(told, key=lambda s: _grade(s) != "error")
    s, grade = told[0], _grade(told[0])
    others = sorted({_what(x) for x in told[1:] if _what(x) != _what(s)})[:3]
    also = f"; also {', '.join(others)}" if others else ""
    node = f" on {s['host']}" if s.get("host") else ""
    pci = f" (GPU {s['pci']})" if s.get("pci") else ""
    said = ("a link error whose registers NVIDIA's workflow decodes before acting (some bits are benign)"
            if grade == "warning" else "the links between the GPUs failed")
    yield Hit(message=f"{_what(s)}{pci}{node} (line {s.get('line')}: \"{told_text(s)}\"): an NVLink fault, {said}{also}",
              fix=_FIX, severity=None if grade == "error" else grade,
              evidence={**told_evidence(s), "events": [x.get("id") for x in told[:8]]})
