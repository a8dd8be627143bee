"""Hardware that fails on its own: a GPU whose fault its vendor's tools send to support, isolate or
ask to replace (GPU026), and one node of a multi-node job that the failure comes from (GPU027). Read
from pasted messages and, for the GPU, from the node's kernel log (checks/kernel_log.py), through the
message catalogues (hpcdoctor/knowledge/messages/ xid.toml, dcgm_diag.toml, amdgpu_ras.toml,
nccl.toml, prose.toml)."""

from __future__ import annotations

import re
from typing import Dict, Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, stated, told_evidence, told_text, xid_reset_line

# NVIDIA's own words decide the severity: Xid 64 (a row remap NVIDIA could not record, immediate action
# RESET_GPU then CONTACT_SUPPORT) and DCGM's isolate reports (the GPU cannot perform workload) state the
# fault; Xid 92, 121 and 157 (IGNORE now, CONTACT_SUPPORT) report a GPU wearing out, or its C2C link to
# the CPU erring, while it still runs; a user's sentence suggests it.
_WARN_XIDS = frozenset({92, 121, 157})


def _grade(s: Dict) -> str:
    if s.get("family") == "prose":
        return "info"
    if s.get("family") == "xid" and s.get("code") in _WARN_XIDS:
        return "warning"
    if s.get("id") == "amdgpu_ras:ras-records-near-threshold":
        return "warning"
    return "error"


_ORDER = {"error": 0, "warning": 1, "info": 2}


def _reported(s: Dict) -> bool:
    """A user's sentence that reports what it says: not hedged or negated (stated), and not a question
    (the rest of its sentence ends in a question mark)."""
    text, matched = str(s.get("text", "")), str(s.get("matched", ""))
    at = text.find(matched) if matched else -1
    rest = re.split(r"[.!。！]", text[at + len(matched):] if at >= 0 else "")[0]
    return stated(s) and "?" not in rest and "？" not in rest


def _what(s: Dict) -> str:
    if s.get("family") == "xid":
        return f"Xid {s.get('code')} ({str(s.get('means', '')).split(' (')[0]})"
    if s.get("family") == "dcgm_diag":
        return f"DCGM's {s.get('key')} ({s.get('means')})"
    if s.get("family") == "amdgpu_ras":
        return f"amdgpu: {s.get('means')}"
    return "the user says " + str(s.get("means", "")).removeprefix("the user says ")


_AMD_STEPS = ("amd-smi bad-pages   # the GPU's retired (bad) memory pages, as its EEPROM holds them\n"
              "journalctl -k -b | grep -E 'RAS records|bad pages|BAD status'   # amdgpu's count against its threshold")
_VENDOR_STEPS = ("nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT   # the GPU's memory error counters and remap state\n"
                 "dcgmi diag -r 3   # NVIDIA's field check: a failure marked isolate confirms the fault\n"
                 "sudo nvidia-bug-report.sh   # the log NVIDIA's support (or the vendor's RMA) asks for")


@rule("GPU026", "gpu-hardware-faulty", "error", "a GPU whose own fault its vendor's tools say to isolate, replace or report", impact=10,
      also={"warning": "an Xid NVIDIA answers with CONTACT_SUPPORT while the GPU still runs (92, 121, 157)",
            "info": "the user says one GPU fails or stays unusable until a reboot"})
def gpu_hardware_faulty(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log or the node's own (dmesg, journalctl -k): Xid 64, a row remap or
        page retirement the GPU could not record (NVIDIA: reset the GPU, then contact support), and
        Xid 92 (an excessive single-bit ECC error rate), 121 (a C2C link error between a Grace CPU and
        its GPU) or 157 (a resource retirement failure), whose
        investigation NVIDIA's Xid catalog sends to CONTACT_SUPPORT. In a pasted DCGM diagnostic
        (dcgmi diag): a report of the GPU's own memory or cache failing that DCGM marks isolate:
        faulty memory elements, NaN values read back from its memory, a memory mismatch, an L1 tag
        miscompare, row remapping failed, retired pages or SRAM errors past their limit. In the amdgpu driver's kernel log (an AMD GPU): its
        saved bad pages past the driver's threshold ("RAS records:N exceed threshold:M, GPU will not
        be initialized. Replace this GPU or increase the threshold", "This GPU is in BAD status."),
        or at 90 % of it (a warning). In the user's words (an info): one GPU of several not
        working, or a GPU that stays unusable after an error until the machine reboots.
        Xid 13, 31 and 43 are application faults (gpu-xid-application-fault), Xid 79 a GPU off the
        bus (gpu-fallen-off-bus), Xid 48 and 63 ECC and remap events (their own rules): not this one.

    Why it matters:
        These faults are the board's, not the job's or the driver's: a GPU whose memory cannot be
        remapped or that fails DCGM's memory test keeps failing every job scheduled on it, and
        reinstalling the driver or the framework changes nothing. NVIDIA's memory error management
        guide counts a row-remapping failure among its RMA thresholds.

    How to fix:
        Administrators drain the node, collect nvidia-smi -q and nvidia-bug-report.sh, run DCGM's
        diagnostic (dcgmi diag -r 3) and, where it fails, open an RMA with the vendor. Users
        exclude the node until then (sbatch --exclude).

    References:
        - https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html (Xid 64, 92, 121, 157: CONTACT_SUPPORT)
        - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/user-visible-statistics.html (Xid 64: a row-remapping entry not recorded)
        - https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/error-recovery-and-response-flags.html (row-remapping failure: the RMA thresholds)
        - https://github.com/NVIDIA/DCGM/blob/master/dcgmlib/src/dcgm_errors.c (dcgmErrorMeta: DCGM_ERROR_ISOLATE)
        - https://github.com/torvalds/linux/blob/master/drivers/gpu/drm/amd/amdgpu/amdgpu_ras_eeprom.c ("Replace this GPU or increase the threshold")
    """
    told = [s for s in catalogued(f, "gpu-hardware-faulty") if s.get("family") != "prose" or _reported(s)]
    if not told:
        return
    told.sort(key=lambda s: _ORDER[_grade(s)])
    s, grade = told[0], _grade(told[0])
    others = [_what(x) for x in told[1:4] if _grade(x) != "info"]
    also = f"; also {', '.join(others)}" if others else ""
    where = f"line {s.get('line')}: \"{told_text(s)}\""
    node = s.get("host")
    drain = (f"scontrol update nodename={node or '$(hostname -s)'} state=drain reason=\"GPU hardware fault\"   "
             "# Slurm administrators; or your scheduler's drain\n")
    if grade == "info":
        on = f" on {node}" if node else ""
        yield Hit(message=f"{_what(s)}{on} ({where}): the usual cause of one GPU failing where its peers pass, or of "
                          "a GPU that only a reboot brings back, is that GPU's hardware (NVIDIA's Xid catalog: "
                          "CONTACT_SUPPORT; CUDA's own errors end with the process); confirm before replacing it",
                  fix="journalctl -k -b | grep -E 'NVRM: Xid|fallen off'   # on the node: the Xids say which fault\n"
                      + _VENDOR_STEPS + "\n" + drain.rstrip("\n"),
                  severity="info", evidence={**told_evidence(s), "host": node})
        return
    reset = (xid_reset_line(s, "NVIDIA's immediate action for Xid 64, once no process uses it") + "\n"
             if s.get("family") == "xid" and s.get("code") == 64 else "")
    if s.get("family") != "amdgpu_ras":
        vendor = "NVIDIA's tools send this fault to support or isolate the GPU"
    elif grade == "warning":
        vendor = "at the threshold AMD's driver stops initialising the GPU and asks for it to be replaced"
    else:
        vendor = "AMD's driver asks for the GPU to be replaced"
    yield Hit(message=f"{_what(s)} ({where}): {vendor}; it is the board's hardware, not the driver or the job{also}",
              fix=drain + reset + (_AMD_STEPS if s.get("family") == "amdgpu_ras" else _VENDOR_STEPS),
              severity=None if grade == "error" else grade,
              evidence={**told_evidence(s), "events": [x.get("id") for x in told]})


# NCCL's ncclRemoteError (nccl.h: "remote process exited or there was a network error", NCCL 2.13 and
# newer) says the failure is on another rank's side; the socket line beside it names that peer.
_REMOTE = ("nccl:ncclRemoteError",)
_PEER = ("nccl:socket-recv-failed", "nccl:socket-send-failed")


def _peer(f: FactView) -> Optional[Dict]:
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _PEER and s.get("peer")), None)


@rule("GPU027", "faulty-node-in-job", "warning", "a multi-node job's failure comes from one node", impact=8,
      also={"info": "the user says the job fails on one node only, or NCCL names no peer"})
def faulty_node_in_job(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted NCCL log of several hosts (NCCL_DEBUG=INFO; each line starts with the host, pid
        and thread that printed it), NCCL's error trace ("file.cc:N -> 1") and every WARN on one
        host while the others logged none: that node failed. In a pasted multi-node job's log, NCCL's ncclRemoteError ("remote process exited or there
        was a network error") with the socket line that names the peer it lost ("Call to recv from
        <address> failed"): the failure is on that peer's node, not this one. Without a named peer,
        or where the user says the job works on every node but one and names it, an info.

    Why it matters:
        The rank that prints the error is often the victim: its peer's process died, or the network
        to it failed, and the first error is in that node's log. A node with a failing GPU or
        InfiniBand port fails every job it is given, so resubmitting lands on it again unless it is
        excluded or drained.

    How to fix:
        Read the named peer's log first (its first error is the cause). Users keep the node out of
        their jobs with sbatch --exclude=NODE; administrators drain it (scontrol update
        nodename=NODE state=drain reason=...) and check its GPUs and network ports before resuming it.

    References:
        - https://github.com/NVIDIA/nccl/blob/master/src/nccl.h.in (ncclRemoteError)
        - https://github.com/NVIDIA/nccl/blob/master/src/debug.cc (the host:pid:tid prefix of every log line)
        - https://github.com/NVIDIA/nccl/blob/master/src/include/checks.h (NCCLCHECK's "-> N" error trace)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
        - https://slurm.schedmd.com/sbatch.html (--exclude)
        - https://slurm.schedmd.com/scontrol.html (update NodeName= State=DRAIN Reason=)
    """
    one = _one_failing_host(f)
    if one is not None:
        host, others, warn, trace = one
        said = f"its WARN (line {warn.get('line')}: \"{_after_prefix(warn)}\") and " if warn else ""
        yield Hit(message=f"every error of this {len(others) + 1}-host NCCL log is {host}'s: {said}NCCL's error trace "
                          f"(line {trace.get('line')}), while {', '.join(sorted(others)[:4])} logged none: the failure "
                          "is that node's (its GPU, driver or network port), not the job's",
                  fix=_node_fix(host), evidence={**told_evidence(trace), "host": host, "other_hosts": sorted(others)})
        return
    remote = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _REMOTE), None)
    if remote is not None:
        peer = _peer(f)
        if peer is not None:
            yield Hit(message=f"NCCL says the failure is on another rank's side (ncclRemoteError, line {remote.get('line')}) "
                              f"and names the peer it lost: {peer.get('peer')} ({peer.get('error')}, line {peer.get('line')}): "
                              "that node's process exited or the network to it failed; its log holds the first error",
                      fix=_node_fix("NODE", "NODE: the host of " + str(peer.get("peer"))),
                      evidence={**told_evidence(remote), "peer": peer.get("peer"), "peer.line": peer.get("line")})
            return
        yield Hit(message=f"NCCL says the failure is on another rank's side (ncclRemoteError, line {remote.get('line')}: "
                          f"\"{told_text(remote)}\"): a remote process exited or the network to it failed; the other "
                          "nodes' logs hold the first error, and a node that is named each time is faulty",
                  fix="NCCL_DEBUG=INFO   # rerun with it: each line names its host, and the WARN lines name the peer\n"
                      + _node_fix("NODE"), severity="info", evidence=told_evidence(remote))
        return
    said = [s for s in catalogued(f, "faulty-node-in-job") if _reported(s)]
    if said:
        s = said[0]
        node = s.get("host") or "NODE"
        yield Hit(message=f"the user says the job fails on one node only, {node} (line {s.get('line')}: \"{told_text(s)}\"): "
                          "a failure that follows one node is that node's (a GPU, its driver or its network port); "
                          "keep it out of jobs until the administrators have checked it",
                  fix=_node_fix(node), severity="info", evidence={**told_evidence(s), "host": s.get("host")})


# NCCL's line prefix (src/debug.cc: "%s:%d:%d [%d] " hostname, pid, tid, device), where a WARN line names its host.
_PREFIX = re.compile(r"(?P<host>[A-Za-z0-9][A-Za-z0-9_.-]{0,62}):[0-9]{1,9}:[0-9]{1,9} \[[0-9]{1,3}\] ")


def _host_of(s: Dict) -> Optional[str]:
    m = _PREFIX.search(str(s.get("text", "")))
    return m.group("host") if m else None


def _after_prefix(s: Dict) -> str:
    text = str(s.get("text", ""))
    m = _PREFIX.search(text)
    return (text[m.end():] if m else text).strip()[:120]


def _one_failing_host(f: FactView):
    """(host, the other hosts, its first WARN or None, its first error-trace line) where a pasted NCCL log
    names at least two hosts and NCCL's error trace (nccl:error-trace) and every WARN are one host's; else None."""
    syms = f.get("ticket.symptoms") or []
    traces = [s for s in syms if s.get("id") == "nccl:error-trace" and s.get("host")]
    failing = {s["host"] for s in traces}
    if len(failing) != 1:
        return None
    (host,) = failing
    warns = [s for s in syms if s.get("id") == "nccl:nccl-warn"]
    if any(_host_of(w) != host for w in warns):
        return None  # another host warned too (or a WARN without its host): not one node's failure
    hosts = {s["host"] for s in syms if s.get("id") == "nccl:log-line-host" and s.get("host")} | failing
    if len(hosts) < 2:
        return None
    return host, hosts - {host}, (warns[0] if warns else None), traces[0]


def _node_fix(node: str, note: str = "") -> str:
    """Slurm's two answers, the user's and the administrators', then what to read on that node."""
    return "\n".join([f"sbatch --exclude={node} job.sh" + (f"   # {note}" if note else "   # your job script, without that node"),
                      f"scontrol update nodename={node} state=drain reason=\"faulty in job $SLURM_JOB_ID\"   # Slurm administrators",
                      f"ssh {node} 'nvidia-smi -q -d ECC,ROW_REMAPPER; journalctl -k -b | grep -E \"NVRM: Xid|mlx5\"'   # what failed there"])
