"""The nodes of one job compared with each other, and the links between them, from
``check --cluster`` (facts under ``cluster``, which only rank 0's cluster report has: a single
node's check skips these rules)."""

from __future__ import annotations

import shlex
import statistics
from collections import Counter
from typing import Any, Dict, Iterator, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact


def _th() -> Dict[str, Any]:
    return knowledge.load("thresholds")["cluster"]


def node_link(net: Any) -> Optional[Tuple[float, str]]:
    """One NIC's line rate in Gb/s for a node, from what its network check reported, and what it is."""
    if not isinstance(net, dict):
        return None
    active = [p for p in net.get("rdma_ports") or [] if isinstance(p, dict) and p.get("state") == "ACTIVE"
              and isinstance(p.get("rate_gbps"), (int, float))]
    if active:
        best = max(active, key=lambda p: p["rate_gbps"])
        kind = "RoCE" if str(best.get("link_layer") or "").lower() == "ethernet" else "InfiniBand"
        return float(best["rate_gbps"]), f"{kind} {best['device']} port {best.get('port')} at {best['rate_gbps']:g} Gb/s"
    if net.get("cxi_devices"):
        rate = float(_th()["slingshot_nic_gbps"])
        return rate, f"Slingshot-11 NIC {net['cxi_devices'][0]} at {rate:g} Gb/s"
    return None


def _expected(f: FactView, required: bool = False) -> Optional[Tuple[float, str]]:
    """The slowest node's NIC in GB/s, and the sentence saying where it came from."""
    links = {h: node_link(n) for h, n in (f.get("cluster.network") or {}).items()}
    if not links or any(v is None for v in links.values()):
        if required:
            without = sorted(h for h, v in links.items() if v is None)
            raise MissingFact("cluster.network", "no active InfiniBand/RoCE port or Slingshot NIC reported by "
                                                 + (", ".join(without[:5]) or "any node") + ": no rate to expect")
        return None
    host, (gbps, what) = min(links.items(), key=lambda kv: kv[1][0])
    return gbps / 8, f"{what} on {host}, as the nodes report their network"


@rule("CLU001", "cluster-allreduce-low", "warning", "all-reduce across nodes below the network's rate", impact=8)
def cluster_allreduce_low(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        The all-reduce across the job's nodes (one rank per node, NCCL/RCCL on GPUs, gloo
        without) reaching a bus bandwidth (nccl-tests' busbw = algbw x 2(n-1)/n) at its largest
        size below half of one NIC's line rate, the NIC being the fastest active InfiniBand or
        RoCE port, or a Slingshot-11 NIC, of the slowest node.

    Why it matters:
        Gradients cross the network at every step of data-parallel training; a fabric that
        delivers a fraction of its rate (a port trained down, traffic on TCP instead of RDMA,
        a congested or mis-routed switch) slows every step of every job that spans these nodes.

    How to fix:
        Run the job with NCCL_DEBUG=INFO and check that NCCL uses the IB/RoCE or OFI transport
        (not "NET/Socket"); check ibstat rates on every node; for Slingshot, that the
        aws-ofi-nccl plugin is on LD_LIBRARY_PATH; give the node list to the administrators.

    References:
        - https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
    """
    ar = f["cluster.allreduce"]
    rows = ar.get("results") or []
    if not rows:
        return
    exp = _expected(f, required=True)
    frac = _th()["allreduce_fraction"]
    last = rows[-1]
    if last["busbw_gbs"] < exp[0] * frac:
        yield Hit(message=f"all-reduce of {last['bytes'] >> 20} MiB over {ar.get('nodes')} nodes ({ar.get('backend')}): "
                          f"busbw {last['busbw_gbs']:.2f} GB/s, expected at least {exp[0] * frac:.1f} GB/s "
                          f"({frac:.0%} of {exp[0]:.1f} GB/s: {exp[1]})",
                  fix="srun --export=ALL,NCCL_DEBUG=INFO python train.py 2>&1 | grep -E 'NET/(IB|OFI|Socket)'   "
                      "# NCCL must pick NET/IB or NET/OFI, not NET/Socket; then check ibstat on every node",
                  evidence={"busbw_gbs": round(last["busbw_gbs"], 3), "expected_gbs": round(exp[0] * frac, 2),
                            "bytes": last["bytes"], "nodes": ar.get("nodes")})


@rule("CLU002", "cluster-link-slow", "warning", "node pairs whose link is slower than the others", impact=8)
def cluster_link_slow(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Node pairs of the job whose point-to-point bandwidth, measured one pair at a time around
        a ring of the nodes, is below half of the median pair. When every slow pair shares one
        node, that node is named.

    Why it matters:
        A collective runs at the pace of its slowest link: one bad cable, port or NIC makes the
        whole allocation as slow as that pair, and an average over all pairs hides it.

    How to fix:
        Check the named node's ports (ibstat: rate and state; ibqueryerrors or the NIC's error
        counters), its NCCL transport (NCCL_DEBUG=INFO), and exclude it from the job
        (sbatch --exclude=NODE) until the administrators have looked at it.

    References:
        - https://github.com/GoogleCloudPlatform/cluster-health-scanner
        - https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md
    """
    pairs = [p for p in f["cluster.pairs"] if isinstance(p.get("gbs"), (int, float))]
    if len(pairs) < 3:
        return  # with two pairs there is no majority to compare with
    med = statistics.median(p["gbs"] for p in pairs)
    frac = _th()["link_slow_fraction"]
    slow = [p for p in pairs if p["gbs"] < med * frac]
    if not slow:
        return
    shared = set.intersection(*({p["a"], p["b"]} for p in slow))
    culprit = f"; every slow pair includes {sorted(shared)[0]}" if len(shared) == 1 and len(slow) >= 2 else ""
    exp = _expected(f)
    against = f"; the network reports {exp[0]:.1f} GB/s ({exp[1]})" if exp else ""
    for p in slow:
        yield Hit(message=f"{p['a']} <-> {p['b']}: {p['gbs']:.2f} GB/s against a median pair of {med:.2f} GB/s"
                          f"{culprit}{against}",
                  subject=f"{p['a']} <-> {p['b']}",
                  fix=f"sbatch --exclude={shlex.quote(sorted(shared)[0] if culprit else p['b'])} job.sbatch   "
                      "# until ibstat and the NIC's error counters on that node have been checked",
                  evidence={"gbs": round(p["gbs"], 3), "median_gbs": round(med, 3), "a": p["a"], "b": p["b"]})


@rule("CLU003", "node-divergent", "warning", "nodes of one job that differ from the others", impact=8)
def node_divergent(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Across the nodes of one job (``check --cluster``), a node whose NVIDIA driver, ROCm,
        torch, NCCL, GPU count or model, CPU model, logical CPU count or kernel differs from what
        most of the job's nodes report. One finding per fact, naming every node that differs.

    Why it matters:
        A multi-node job runs at the pace of its slowest or oddest node: a different NCCL or driver
        can hang a collective or change its algorithm on one node only, a node with fewer GPUs
        breaks the job's layout, and a different torch on one node gives different numerics. Such
        a node is usually one that missed an update or a rebuild.

    How to fix:
        Administrators drain the differing nodes until they match the others (the fix names
        them); a job whose own software differs between nodes (torch, NCCL) is using a Python
        environment that is not the same everywhere: run it from one environment on a shared
        filesystem.

    References:
        - 004_3c12714629749d50.txt (stragglers in large training runs)
    """
    values = f["cluster.node_values"]
    for fact, per_node in sorted(values.items()):
        known = {h: str(v) for h, v in per_node.items() if v is not None}
        if len(set(known.values())) <= 1:
            continue
        counts = Counter(known.values())
        majority, n = counts.most_common(1)[0]
        differ = {h: v for h, v in sorted(known.items()) if v != majority}
        tied = n * 2 <= len(known)
        hosts = sorted(differ)
        where = "; ".join(f"{h}: {v}" for h, v in list(differ.items())[:6]) + (" ..." if len(differ) > 6 else "")
        own = fact in ("torch", "NCCL")
        yield Hit(message=f"{fact} is {majority} on {n} of {len(known)} node(s) but differs on {where}"
                          + (" (no majority: the nodes split evenly)" if tied else ""),
                  subject=fact,
                  fix=("which python3; python3 -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'"
                       "   # run on each node: the job's environment differs between them" if own else
                       "scontrol update nodename=" + ",".join(shlex.quote(h) for h in hosts)
                       + f" state=drain reason={shlex.quote('hpcdoctor: ' + fact + ' differs from the other nodes')}"),
                  evidence={"fact": fact, "majority": majority, "differ": differ})


@rule("CLU004", "node-straggler", "warning", "a node whose GEMM throughput trails the job's others", impact=9)
def node_straggler(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        Across the nodes of one job (``check --cluster --bench``), a node whose slowest GPU's bf16
        GEMM throughput (fp32 where bf16 was not measured) is below the straggler fraction of the
        median of the job's nodes (knowledge/thresholds.toml, bench.straggler_fraction, the same
        fraction BEN004 applies to the GPUs of one node).

    Why it matters:
        Every step of a data-parallel job waits for its slowest node: one node with a throttled or
        failing GPU slows all of them, and it is invisible in any single node's report.

    How to fix:
        Look at the straggler's own findings in this report (clocks, power, temperature); the
        administrators drain it and run the vendor's diagnostics (dcgmi diag -r 3 on NVIDIA).

    References:
        - 004_3c12714629749d50.txt (stragglers in large training runs)
    """
    gemm = {h: v for h, v in f["cluster.gemm_tflops"].items() if isinstance(v, (int, float))}
    if len(gemm) < 2:
        return
    frac = knowledge.load("thresholds")["bench"]["straggler_fraction"]
    median = statistics.median(gemm.values())
    for host, v in sorted(gemm.items()):
        if v < median * frac:
            yield Hit(message=f"GEMM {v:.1f} TFLOP/s against a median of {median:.1f} across "
                              f"{len(gemm)} nodes ({v / median:.0%})",
                      subject=host,
                      fix=f"scontrol update nodename={shlex.quote(host)} state=drain "
                          f"reason={shlex.quote('hpcdoctor: GEMM straggler')}   # then: dcgmi diag -r 3 on it",
                      evidence={"node": host, "tflops": v, "median": median})
