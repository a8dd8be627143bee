"""The node against what it should be: the site's expectations and the recognised system."""

from __future__ import annotations

import re
from typing import Any, Iterator, Optional, Tuple

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import facts_or_ticket, first_stated, ticket_read, told_evidence, told_text, version_of
from hpcdoctor.rules._nccl_tuning import ring_outside_proto
from hpcdoctor import knowledge
from hpcdoctor.knowledge.systems import recognise


def _expected_gpus(f: FactView) -> Tuple[Optional[int], Optional[str]]:
    """(count, where it comes from) or (None, None)."""
    expect = (f.config.get("expect") or {})
    if isinstance(expect.get("gpus"), int):
        return expect["gpus"], f"site config {f.config.get('_path')}"
    systems = recognise(f)
    counts = {s["gpus_per_node"] for s in systems}
    if len(counts) == 1:
        s = systems[0]
        return s["gpus_per_node"], " or ".join(x["name"] for x in systems) + " node shape"
    return None, None


MISSING_GPU_FIX = "nvidia-smi; dmesg | grep -i xid   # then drain the node and report the missing GPU"


@rule("SYS001", "gpu-count-mismatch", "error", "fewer GPUs than the node should have", impact=10)
def gpu_count_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A node that shows fewer GPUs than it should: fewer than the site config's expect.gpus or
        the recognised system's node shape (counting MI250X GCDs as the runtime does: a LUMI-G node
        is 8 devices), fewer than the job was allocated, or a GPU on the PCI bus that the driver
        does not list. In a pasted ticket, the user saying so ("came up short a GPU", "nvidia-smi
        shows 7 of 8 GPUs", "a GPU is missing after the reboot", 掉卡): NVIDIA's node health check
        treats a node that did not enumerate its expected GPUs as critical.

    Why it matters:
        A GPU that fell off the bus (Xid 79) or was not enumerated leaves the job with fewer ranks
        than planned: torchrun fails on a missing device, or a job silently runs on 3 of 4 GPUs.

    How to fix:
        Drain the node (scontrol update nodename=$(hostname) state=drain reason="GPU missing") and
        report it; the administrators reset or reseat the GPU.

    References:
        - 003_ff12095d05d26000.txt (footnote 11: 4 MI250X = 8 GCDs, PyTorch sees 8 GPUs)
        - 004_3c12714629749d50.txt (health checks before jobs)
        - https://docs.nvidia.com/health-validation/reference/checks/node (gpu_count: fewer GPUs than expected is critical)
    """
    yield from facts_or_ticket(lambda: list(_count_from_facts(f)), _count_told(f))


def _count_from_facts(f: FactView) -> Iterator[Hit]:
    gpus = f["gpus"]
    n = len(gpus)
    on_bus = f.get("nvidia.pci_devices")
    if isinstance(on_bus, int) and on_bus > len([g for g in gpus if g.get("vendor") == "nvidia"]) and n:
        yield Hit(message=f"{on_bus} NVIDIA GPU(s) on the PCI bus but the driver lists {n}",
                  fix=MISSING_GPU_FIX,
                  evidence={"nvidia.pci_devices": on_bus, "gpus": n})
        return
    expected, source = _expected_gpus(f)
    allocated = f.get("scheduler.gpus_on_node")
    if isinstance(allocated, int) and allocated and n < allocated:
        yield Hit(message=f"{n} GPU(s) visible but the job was allocated {allocated} on this node",
                  fix=MISSING_GPU_FIX,
                  evidence={"gpus": n, "scheduler.gpus_on_node": allocated})
    elif expected is not None and n < expected and not (isinstance(allocated, int) and allocated and n >= allocated):
        yield Hit(message=f"{n} GPU(s) visible, {expected} expected ({source})",
                  fix=MISSING_GPU_FIX,
                  evidence={"gpus": n, "expected": expected, "source": source})


def _count_told(f: FactView) -> Iterator[Hit]:
    """The user saying the node shows fewer GPUs than it has (knowledge/messages/faq_nvidia.toml)."""
    s = first_stated(f, "gpu-count-mismatch")
    if s is None:
        return
    yield Hit(message=f"the user says the node shows fewer GPUs than it has (line {s.get('line')}: \"{told_text(s)}\"): "
                      "a GPU the driver did not enumerate, or one that fell off the bus; NVIDIA's node health "
                      "check treats it as critical (drain, reset the GPU, reboot, service)",
              fix=MISSING_GPU_FIX, evidence=told_evidence(s))


@rule("SYS002", "node-shape-mismatch", "warning", "the node differs from the site's expectations", impact=6)
def node_shape_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A node whose CPU count, memory, GPU model or PCIe links differ from the site config's
        [expect] section.

    Why it matters:
        A DIMM that failed at boot, CPUs offlined by the firmware, a GPU of the wrong model swapped
        in, or a link trained down all make one node slower than its peers; in a multi-node job the
        slowest node sets the pace.

    How to fix:
        Drain the node and report the difference; if the expectation is out of date, fix the site
        config.

    References:
        - https://github.com/mej/nhc (site expectations as configuration)
    """
    expect = f.config.get("expect") or {}
    if not expect:
        return
    diffs = {}
    cpus = f.get("cpu.logical_cpus")
    if isinstance(expect.get("cpus"), int) and isinstance(cpus, int) and cpus != expect["cpus"]:
        diffs["logical CPUs"] = (cpus, expect["cpus"])
    mem = f.get("memory.total_bytes")
    if expect.get("memory_gib") and isinstance(mem, int) and mem < expect["memory_gib"] * 0.97 * 2**30:
        diffs["memory GiB"] = (round(mem / 2**30), expect["memory_gib"])
    for g in f.gpus():
        name = str(g.get("name") or "")
        if expect.get("gpu_model") and not re.search(expect["gpu_model"], name, re.I):
            diffs[f"GPU {g.get('index')} model"] = (name, expect["gpu_model"])
        for key, fact in (("min_pcie_gen", "pcie_gen_max"), ("min_pcie_width", "pcie_width_max")):
            v = g.get(fact)
            if isinstance(expect.get(key), int) and isinstance(v, int) and v < expect[key]:
                diffs[f"GPU {g.get('index')} {fact}"] = (v, expect[key])
    if diffs:
        text = "; ".join(f"{k} {a} (expected {b})" for k, (a, b) in diffs.items())
        yield Hit(message=text, fix="# drain the node and report it, or update the site config if it is out of date",
                  evidence={k: {"actual": a, "expected": b} for k, (a, b) in diffs.items()})


def _in_range(version: Any, low: str, high: str) -> bool:
    v = version_of(version)
    return v is not None and version_of(low) <= v <= version_of(high)


@rule("SYS003", "nccl-known-issue", "warning", "an NCCL version with a known issue on this system", impact=8)
def nccl_known_issue(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A node recognised as a system whose site guide lists an NCCL version range with known
        issues (Leonardo Booster: NCCL 2.22 to 2.29.1), and a torch that uses NCCL in that range.
        And the node-dependent issues of knowledge/nccl_known_issues.toml: where the issue's own
        symptom is pasted and NCCL's version is in its range (NCCL before 2.23.4 logging "NET/IB :
        GPU Direct RDMA Disabled for HCA" on a kernel 6.6+, where it cannot see nvidia-peermem).
        The version is NCCL's own "NCCL version" line, the node's torch NCCL, or the ticket's words.
        And NCCL 2.19.1-2.21.5's Ring fallback ignoring NCCL_PROTO, shown by NCCL's own tuning line
        ("24 Bytes -> Algo 1 proto 0": Ring with LL) under NCCL_PROTO=Simple and an NCCL_ALGO without
        Ring (the environment, the paste's exports, or the user's words): that choice is the bug, so
        it is said where NCCL's version is not shown, and not where a version outside the range is.

    Why it matters:
        The EPICURE guide reports that multi-node training on Leonardo with these NCCL versions runs
        into known problems, worked around by disabling PXN and launching with torchrun. NCCL up to
        2.22.3 looks for peer memory only under /sys/kernel/mm/memory_peers, gone on kernels 6.6+,
        so GPU Direct RDMA stays off and inter-node bandwidth drops (180 to 10 GB/s in NCCL#1676).

    How to fix:
        export NCCL_PXN_DISABLE=1, and launch the ranks with torchrun rather than one srun task per
        GPU (or use an NCCL outside the range). For the peer-memory issue: NCCL 2.23.4 or newer; for
        the Ring fallback, NCCL 2.22.3 or newer, or NCCL_ALGO that lists Ring.

    References:
        - 003_ff12095d05d26000.txt (section 3.2: NCCL 2.22-2.29.1 on Leonardo, NCCL_PXN_DISABLE=1, torchrun)
        - https://github.com/NVIDIA/nccl/commit/68b542363f9a44cdaac480f51ebe0fc26de96139 (2.23.4-1: "On linux kernels 6.6+, /sys/kernel/mm/memory_peers is no longer present")
        - https://github.com/NVIDIA/nccl/blob/v2.22.3-1/src/transport/net_ib.cc (ncclIbGdrSupport)
        - https://github.com/NVIDIA/nccl/issues/1676
        - https://github.com/NVIDIA/nccl/blob/v2.22.3-1/src/graph/tuning.cc (the Ring backup's bandwidths zeroed with NCCL_PROTO)
        - https://github.com/NVIDIA/nccl/issues/1304
    """
    node = list(_node_issues(f))  # before torch.nccl is required: a paste names NCCL's version itself
    yield from node
    nccl = f.get("torch.nccl") if node else f["torch.nccl"]
    for s in recognise(f):
        rng = s.get("nccl_known_issue")
        if rng and _in_range(nccl, rng[0], rng[1]) and (f.get("env.vars") or {}).get("NCCL_PXN_DISABLE") != "1":
            yield Hit(message=f"NCCL {nccl} is in the range {rng[0]}-{rng[1]} with known issues on {s['name']}",
                      fix="export NCCL_PXN_DISABLE=1   # and launch with torchrun",
                      evidence={"torch.nccl": nccl, "system": s["id"]}, env={"NCCL_PXN_DISABLE": "1"})


def _kernel_release(f: FactView) -> Any:
    m = re.match(r"(\d+\.\d+)", str(f.get("system.kernel") or ""))
    return version_of(m.group(1)) if m else None


def nccl_version_seen(f: FactView) -> Tuple[Optional[str], Optional[dict]]:
    """NCCL's version and the pasted line that names it (None for torch's NCCL on the node): NCCL's
    own "NCCL version" line or torch's error that carries it first, then the node's torch, then the
    ticket's words ("NCCL 2.22.3", prose:nccl-version-said)."""
    symptoms = ticket_read(f)
    for s in symptoms:
        if s.get("nccl") and not str(s.get("id", "")).startswith("prose:"):
            return str(s["nccl"]), s
    if version_of(f.get("torch.nccl")) is not None:
        return str(f.get("torch.nccl")), None
    for s in symptoms:
        if s.get("id") == "prose:nccl-version-said" and s.get("nccl"):
            return str(s["nccl"]), s
    return None, None


def nccl_node_issue(f: FactView) -> Optional[Tuple[dict, dict, str, Optional[dict]]]:
    """The first issue of knowledge/nccl_known_issues.toml that applies: (issue, its pasted symptom,
    NCCL's version, the line naming the version), or None."""
    version, named = nccl_version_seen(f)
    kernel = _kernel_release(f)
    symptoms = ticket_read(f)
    for issue in _NODE_ISSUES:
        # An issue whose symptom shows it by itself (a choice only that range's bug makes) applies where
        # NCCL's version is not shown; any other needs the version.
        if version is None and not issue.get("shows"):
            continue
        if version is not None and not _in_range(version, issue["low"], issue["high"]):
            continue
        if issue.get("kernel_min") and kernel is not None and kernel < version_of(issue["kernel_min"]):
            continue  # a kernel that still has what the old NCCL looks for
        if issue.get("shows") == "ring-protocol-outside-nccl-proto":
            s = ring_outside_proto(f)
        else:
            s = next((t for t in symptoms if t.get("id") == issue["symptom"]), None)
        if s is not None:
            return issue, s, version, named
    return None


_NODE_ISSUES = knowledge.load("nccl_known_issues")["issue"]


def _node_issues(f: FactView) -> Iterator[Hit]:
    found = nccl_node_issue(f)
    if found is None:
        return
    issue, s, version, named = found
    where = (f"line {named.get('line')}" if named else "torch's NCCL on this node")
    kernel = str(f.get("system.kernel") or "")
    on = f" on kernel {kernel}" if kernel else ""
    which = (f"NCCL {version} ({where}) is in {issue['low']}-{issue['high']}, with a known issue{on}" if version is not None
             else f"a known issue of NCCL {issue['low']}-{issue['high']} (the paste does not show NCCL's version)")
    shown = (f"Ring with {s['protocol']} although NCCL_PROTO={s['nccl_proto']}" + (f" and NCCL_ALGO={s['nccl_algo']}" if s.get("nccl_algo") else "")
             + ": " if s.get("protocol") else "")
    yield Hit(message=f"{which}: {shown}{issue['summary']} (line {s.get('line')}: \"{told_text(s)}\")",
              fix=issue["fix"], evidence={**told_evidence(s), "nccl.version": version, "issue": issue["id"]})
