"""What NCCL's own WARN lines establish, read from a pasted log (knowledge/messages/nccl.toml):
the cause NCCL named before returning its error code."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.knowledge import wheels
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_symptom, ticket_evidence, told_evidence, told_text, version_of
from hpcdoctor.rules._where import where


_NO_MEMORY = "cannot allocate memory"

# Where the locked-memory limit comes from, by place: the container runtime's --ulimit (NCCL's
# troubleshooting guide runs containers with --ulimit memlock=-1); on a Slurm node the limit of the
# shell that submitted the job travels with it unless slurm.conf says PropagateResourceLimitsExcept=
# MEMLOCK, and the node's limits.conf / slurmd's LimitMEMLOCK set it.
_MEMLOCK_FIX = {
    "docker": "docker run --ulimit memlock=-1 IMAGE   # NCCL's guide runs containers with --ulimit memlock=-1",
    "kubernetes": "kubectl exec POD -- sh -c 'ulimit -l'   # must print unlimited; the node's container runtime "
                  "sets it (its service's LimitMEMLOCK=infinity), an administrator's change",
    "site": "srun sh -c 'ulimit -l'   # must print unlimited inside the job; if not, administrators: memlock "
            "unlimited in /etc/security/limits.conf and PropagateResourceLimitsExcept=MEMLOCK in slurm.conf",
}


@rule("NET005", "nccl-ib-memlock", "error", "InfiniBand memory registration refused: the locked-memory limit", impact=9)
def nccl_ib_memlock(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's "Call to ibv_reg_mr failed with error Cannot allocate memory"
        (also ibv_reg_mr_iova2, ibv_reg_dmabuf_mr, and ibv_create_qp/cq with that errno; NCCL up to
        2.12 printed "Call to ibv_reg_mr failed" with no errno at all), src/misc/ibvwrap.cc.

    Why it matters:
        InfiniBand and RoCE transfer from memory the HCA has pinned, and pinned (locked) memory is
        bounded by RLIMIT_MEMLOCK (ulimit -l). With a small limit (8192 kB in nccl-tests#206), NCCL's
        registrations fail with ENOMEM and the communicator dies with "unhandled system error";
        NCCL's answer is an unlimited memlock limit for the job, which must hold inside the job
        (a container, an srun step), not only in a login shell.

    How to fix:
        Run the job with an unlimited locked-memory limit: docker/podman --ulimit memlock=-1; on a
        Slurm cluster the administrators set memlock unlimited in /etc/security/limits.conf and
        keep slurmd from passing a smaller submit-shell limit (PropagateResourceLimitsExcept=
        MEMLOCK in slurm.conf); check with ulimit -l inside the job.

    References:
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/misc/ibvwrap.cc (IBV_PTR_CHECK_ERRNO)
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
        - https://github.com/NVIDIA/nccl-tests/issues/206 (ulimit -l was 8192; limits.conf fixed it)
        - https://slurm.schedmd.com/slurm.conf.html#OPT_PropagateResourceLimitsExcept
    """
    hits = [s for s in f.get("ticket.symptoms") or []
            if s["id"] in ("nccl:ib-reg-mr-failed", "nccl:ib-create-qp-failed", "nccl:ib-create-cq-failed")]
    for s in hits:
        error = (s.get("error") or "").strip()
        if error.lower() != _NO_MEMORY and not (s["id"] == "nccl:ib-reg-mr-failed" and not error):
            continue  # another errno (Bad address: GPU memory without nvidia-peermem) is another cause
        call = s.get("call") or s["id"].split(":")[1].replace("ib-", "ibv_").replace("-failed", "").replace("-", "_")
        said = f"with {error}" if error else "(NCCL 2.12 and older print no errno; ENOMEM is the usual one)"
        place = where(f)
        fix = _MEMLOCK_FIX[place] if place else "\n".join(_MEMLOCK_FIX[p] for p in ("docker", "site"))
        yield Hit(message=f"the InfiniBand HCA would not pin memory for NCCL: {call} failed {said} (line {s['line']}): "
                          "the job's locked-memory limit (ulimit -l) is too small",
                  fix=fix, evidence=ticket_evidence(s))
        return


@rule("NET006", "nccl-duplicate-gpu", "error", "two ranks of one communicator on the same GPU", impact=8)
def nccl_duplicate_gpu(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's "Duplicate GPU detected : rank N and rank M both on CUDA device X"
        (src/init.cc, NCCL 2.5-2.29) or, from NCCL 2.30, "Multiple Ranks are using the same
        GPU/Partition", or torch's "Last error:" repeating either after "invalid usage".

    Why it matters:
        NCCL gives each rank of a communicator its own GPU. When the launcher starts several ranks
        on a node and the script never selects a device per rank (or CUDA_VISIBLE_DEVICES hides
        all but one GPU), every rank lands on GPU 0 and NCCL refuses to form the communicator.

    How to fix:
        Select the rank's GPU before creating the process group, from the launcher's local rank
        (torchrun sets LOCAL_RANK): torch.cuda.set_device(int(os.environ["LOCAL_RANK"])); and do
        not narrow CUDA_VISIBLE_DEVICES to one GPU for all ranks of a node.

    References:
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/init.cc
        - https://pytorch.org/docs/stable/elastic/run.html (LOCAL_RANK)
        - https://github.com/NVIDIA/Megatron-LM/issues/661
    """
    s = first_symptom(f, "nccl:duplicate-gpu", "nccl:multi-rank-same-gpu")
    if s is None:
        return
    # NCCL 2.30 names neither the ranks nor the GPU ("Multiple Ranks are using the same GPU/Partition").
    who = (f"ranks {s.get('rank')} and {s.get('other')} both run on the GPU at bus id {s.get('busid')}"
           if s["id"] == "nccl:duplicate-gpu" else "several ranks of one communicator run on the same GPU")
    yield Hit(message=f"{who} (line {s['line']}): each rank must select its own GPU",
              fix='import os\nimport torch\ntorch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # before init_process_group',
              fix_lang="python", evidence=ticket_evidence(s))


# ibv_wc_status 12 is IBV_WC_RETRY_EXC_ERR (rdma-core libibverbs/verbs.h, enum ibv_wc_status): the
# sender's retries ran out, no acknowledgement came back from the peer's HCA.
_RETRY_EXCEEDED = "12"


@rule("NET007", "nccl-roce-gid", "warning", "RDMA connections to peers fail: GID index or fabric path", impact=8)
def nccl_roce_gid(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's "Call to ibv_modify_qp failed with ..." (connecting a queue pair),
        or "NET/IB : Got completion ... with error 12" / "status=12" (transport retries exceeded),
        from src/misc/ibvwrap.cc and the IB transport.

    Why it matters:
        The queue pair could not be brought up, or packets to the peer's HCA went unanswered. On
        RoCE the usual cause is a GID index that names an address other nodes cannot route to
        (a link-local IPv6 or RoCE v1 entry), set by NCCL_IB_GID_INDEX or NCCL's own pick; on
        rail-optimised fabrics, NICs of different rails that cannot reach each other. Status 12
        is also what a peer that died mid-transfer leaves behind.

    How to fix:
        List the GIDs (ibv_devinfo -v) and set NCCL_IB_GID_INDEX to the RoCE v2 entry of the
        interface's routable address, the same on every node; on rail-optimised systems try
        NCCL_CROSS_NIC=0; confirm with the OFED perftest tools (ib_write_bw) between the two nodes.

    References:
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-ib-gid-index
        - https://github.com/NVIDIA/nccl/issues/426 (error 12 right away: RoCE GID index)
        - https://github.com/NVIDIA/nccl/issues/769 (a link-local GID fails, index 3 works)
        - https://github.com/linux-rdma/rdma-core/blob/master/libibverbs/verbs.h (IBV_WC_RETRY_EXC_ERR = 12)
    """
    s = first_symptom(f, "nccl:ib-modify-qp-failed")
    if s is None:
        c = first_symptom(f, "nccl:ib-completion-error")
        s = c if c is not None and c.get("status") == _RETRY_EXCEEDED else None
    if s is None:
        return
    what = (f"bringing up a queue pair to a peer failed ({s.get('error')})" if s["id"] == "nccl:ib-modify-qp-failed"
            else "RDMA packets to a peer went unanswered (completion status 12, retries exceeded)")
    gid = f"; NCCL used GID index {s['gid_index']}" if s.get("gid_index") else ""
    yield Hit(message=f"{what} (line {s['line']}){gid}: on RoCE most often a GID index other nodes cannot route to",
              fix="ibv_devinfo -v | grep -E 'GID|port:'   # then export NCCL_IB_GID_INDEX to the RoCE v2 entry of "
                  "the routable address, the same on every node",
              evidence=ticket_evidence(s))


_TOPO_FILE_LINES = ("nccl:xml-topology-file-unreadable", "nccl:xml-graph-file-unreadable", "nccl:xml-wrong-version",
                    "nccl:xml-parse-error", "nccl:xml-mismatch", "nccl:xml-attribute-missing")


@rule("NET008", "nccl-topo-file", "error", "the topology or graph file NCCL was given cannot be used", impact=7)
def nccl_topo_file(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL refusing the XML file NCCL_TOPO_FILE or NCCL_GRAPH_FILE names:
        "Could not open XML topology file ..." / "... graph file ...", "XML Topology has wrong
        version", "XML Parse error", "XML Mismatch : a / b" (an element closed that was never
        opened), or "Attribute X of node Y not found" (src/graph/xml.cc, xml.h).

    Why it matters:
        A topology file replaces NCCL's own discovery (cloud VMs ship one for their PCI layout);
        a graph file forces the rings and trees. When the file is missing, written for another
        NCCL version or another machine shape, or hand-edited without an attribute NCCL needs,
        communicator initialisation fails. The variables are often set where users do not look:
        /etc/nccl.conf and ~/.nccl.conf are read like the environment.

    How to fix:
        Unset NCCL_TOPO_FILE and NCCL_GRAPH_FILE (and remove them from /etc/nccl.conf or
        ~/.nccl.conf) to let NCCL detect the topology; on a VM image that needs the file, use
        the one its provider ships for this instance type.

    References:
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/graph/xml.cc
        - https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-topo-file
        - https://github.com/NVIDIA/nccl/issues/1008 (NCCL_GRAPH_FILE set in /etc/nccl.conf)
        - https://github.com/NVIDIA/nccl/issues/1726 (a malformed vendor topology file)
    """
    s = first_symptom(f, *_TOPO_FILE_LINES)
    if s is None:
        return
    yield Hit(message=f"NCCL could not use the topology or graph file it was given (line {s['line']}: "
                      f"\"{s['text'][:140]}\")",
              fix="unset NCCL_TOPO_FILE NCCL_GRAPH_FILE   # NCCL then detects the topology; /etc/nccl.conf and "
                  "~/.nccl.conf can set them too",
              evidence=ticket_evidence(s))


# Which peer-memory files each NCCL release looks for (knowledge/messages/nccl.toml, above gdr-disabled).
_GDR_CHECK = ("lsmod | grep -E '^(nvidia_peermem|nv_peer_mem) '   # empty: no peer-memory module is loaded\n"
              "sudo modprobe nvidia-peermem   # administrators: the driver's module (R470+); add it to /etc/modules-load.d/ to keep it\n"
              "ls /sys/kernel/mm/memory_peers/ /sys/module/nvidia_peermem/version   # what NCCL looks for: "
              "before 2.23.4 only the first (gone on kernels 6.6+), from 2.23.4 the second too")


@rule("NET043", "nccl-gdr-disabled", "warning", "NCCL runs without GPU Direct RDMA on an InfiniBand/RoCE NIC", impact=6)
def nccl_gdr_disabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's INFO "NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" (NCCL
        2.13+, also NET/IBext), "... (no module)" (2.5-2.12), "... (no module or not supported by
        GPU)" (2.4): the InfiniBand transport found no peer-memory module and, from 2.13, no
        usable DMA-BUF. Silent for the distance lines (GDR off by topology, on purpose) and for
        socket transports, which never do GDR; an NCCL older than 2.23.4 on a kernel 6.6+ is
        nccl-known-issue's.

    Why it matters:
        Without GPU Direct RDMA every inter-node transfer is staged through host memory: NCCL's
        all_reduce between two nodes fell from ~180 to ~10 GB/s in NVIDIA/nccl#1676.

    How to fix:
        Load the driver's nvidia-peermem module (nv_peer_mem for drivers before R470) and keep it
        loaded at boot; on a kernel 6.6+ use NCCL 2.23.4 or newer, which finds it through
        /sys/module/nvidia_peermem; or let NCCL use DMA-BUF (NCCL 2.13+, NCCL_DMABUF_ENABLE=1, the
        default, with the open kernel modules and a kernel that supports it).

    References:
        - https://github.com/NVIDIA/nccl/blob/v2.12.12-1/src/transport/net_ib.cc (ncclIbGdrSupport, "(no module)")
        - https://github.com/NVIDIA/nccl/blob/v2.23.4-1/src/transport/net_ib.cc (ibGdrSupportInitOnce)
        - https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/graph/topo.cc ("GPU Direct RDMA %s for HCA")
        - https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html (nvidia-peermem)
        - https://github.com/NVIDIA/nccl/issues/1537
    """
    told = catalogued(f, "nccl-gdr-disabled")
    if not told:
        return
    from hpcdoctor.rules.site import nccl_node_issue
    if nccl_node_issue(f) is not None:
        return  # nccl-known-issue names the cause: this NCCL cannot see the module on this kernel
    s = told[0]
    why = s.get("why") or s.get("why_old")
    if why:
        cause = ("NCCL found no peer-memory module (it looked for /sys/kernel/mm/memory_peers/nv_mem/version, and from "
                 "2.9.8 .../nvidia-peermem/version)")
    else:
        cause = ("NCCL found neither a peer-memory module it looks for (nvidia-peermem, nv_peer_mem) nor DMA-BUF it can use; "
                 "an NCCL older than 2.23.4 on a kernel 6.6+ misses a loaded nvidia-peermem")
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": GPU Direct RDMA is off for NCCL's InfiniBand transport: "
                      f"{cause}; inter-node traffic goes through host memory",
              fix=_GDR_CHECK, evidence=told_evidence(s))


# NCCL's own condition (src/misc/strongstream.cc, ncclCudaGraphCapturable's callers): built with a CUDA
# runtime older than 11.3, or run on a driver older than R465, it cannot be captured in a CUDA graph.
# The PyPI nvidia-nccl-cu11 wheels from 2.18.3 on are built with CUDA 11.0 (knowledge/cuda_wheel_libs.toml
# [nccl_cu11_build_cuda], read from each release's libnccl.so.2), so no driver makes them capturable.
_GRAPH_MIN_BUILD_CUDA = "11.3"


def _capturable(build_cuda: str) -> bool:
    return version_of(build_cuda) >= version_of(_GRAPH_MIN_BUILD_CUDA)


def _cu12_way() -> str:
    """The way out of an NCCL built with CUDA 11.0, as a fix prints it: the cu12 wheels on a driver
    for CUDA 12, else an NCCL built with the node's CUDA 11.x, else no CUDA graphs."""
    return ("nvidia-smi --query-gpu=driver_version --format=csv,noheader   # a driver for CUDA 12 "
            f"({knowledge.load('cuda')['minor_compat']['12']} or newer) can run the cu12 wheels: pip install "
            "nvidia-nccl-cu12 with a CUDA 12 build of the framework\n"
            "# else build NCCL with the node's CUDA 11.x (make -j src.build in NVIDIA/nccl) and load that libnccl.so.2 "
            "(vLLM: VLLM_NCCL_SO_PATH), or run without CUDA graphs (vLLM: --enforce-eager)")


_WHICH_NCCL = "pip list 2>/dev/null | grep -i nccl   # nvidia-nccl-cu11 2.18.3 and later: built with CUDA 11.0, not capturable"


@rule("NET050", "nccl-not-graph-capturable", "error", "an NCCL call was captured in a CUDA graph that this NCCL cannot join",
      impact=7, also={"warning": "no WARN pasted: the nvidia-nccl-cu11 wheel named beside CUDA graphs and an NCCL error"})
def nccl_not_graph_capturable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, NCCL's "NCCL cannot be captured in a graph if either it wasn't built with
        CUDA runtime >= 11.3 or if the installed CUDA driver < R465." (before 2.16: "The installed
        CUDA driver is older than the minimum version (R465) required for NCCL's CUDA Graphs
        support"), with NCCL's version line ("NCCL version 2.20.5+cuda11.0") where pasted, which
        says which of the two causes it is.

    Why it matters:
        CUDA graphs (vLLM's and SGLang's decode graphs, torch.cuda.graphs, Megatron's
        --enable-cuda-graph) capture the all-reduce with the kernels around it. An NCCL built with
        a CUDA runtime older than 11.3 cannot be captured on any driver; the PyPI nvidia-nccl-cu11
        wheels from 2.18.3 on are such a build (CUDA 11.0; 2.13.4-2.16.5 were built with 11.7 and
        11.8). The call fails with ncclInvalidUsage.

    How to fix:
        Load an NCCL built with CUDA 11.3 or newer: the cu12 wheels (nvidia-nccl-cu12) on a driver
        that runs CUDA 12, or an NCCL built from source with the node's CUDA 11.x, pointed to with
        the framework's own setting (vLLM: VLLM_NCCL_SO_PATH); or turn graph capture off (vLLM
        --enforce-eager). With a capturable build, a driver older than R465 must be updated.

    References:
        - https://github.com/NVIDIA/nccl/blob/v2.20.5-1/src/misc/strongstream.cc (the WARN and its condition)
        - https://github.com/vllm-project/vllm/issues/5679 (nvidia-nccl-cu11 2.20.5 under CUDA graphs)
        - https://github.com/InternLM/lmdeploy/pull/2433 ("NCCL version 2.19.3+cuda11.0" cannot be captured)
    """
    s = first_symptom(f, "nccl:cuda-graph-unsupported")
    if s is None:
        yield from _cu11_wheel_in_a_graph(f)
        return
    banner = first_symptom(f, "nccl:version-banner")
    built = str(banner["cuda"]) if banner and banner.get("cuda") else None
    if built is not None and not _capturable(built):
        cause = (f"this NCCL {banner.get('nccl')} was built with CUDA {built} (line {banner.get('line')}), older "
                 "than 11.3: no driver makes it capturable (the PyPI nvidia-nccl-cu11 wheels from 2.18.3 on are built so)")
        fix = ("python -c 'import torch; print(torch.version.cuda, torch.cuda.nccl.version())'   # the CUDA and NCCL of this torch\n"
               + _cu12_way())
    elif built is not None:
        cause = (f"this NCCL {banner.get('nccl')} was built with CUDA {built} (line {banner.get('line')}), "
                 "which can be captured: the driver is older than R465")
        fix = "nvidia-smi --query-gpu=driver_version --format=csv,noheader   # older than 465: the driver needs an update (administrators)"
    else:
        cause = ("either this NCCL was built with a CUDA runtime older than 11.3 (the PyPI nvidia-nccl-cu11 wheels from "
                 "2.18.3 on are) or the driver is older than R465")
        fix = (_WHICH_NCCL + "; NCCL_DEBUG=VERSION prints the loaded NCCL's \"NCCL version X+cudaY\" line when the job starts\n"
               "nvidia-smi --query-gpu=driver_version --format=csv,noheader   # older than 465: the driver is the cause")
    yield Hit(message=f"NCCL was called inside a CUDA graph capture it cannot join (line {s.get('line')}: \"{told_text(s)}\"): {cause}",
              fix=fix, evidence=told_evidence(s))


def _cu11_wheel_in_a_graph(f: FactView):
    """Without NCCL's WARN: the ticket names the nvidia-nccl-cu11 wheel, says the run uses CUDA graphs
    and names an NCCL error. The wheel's build (CUDA 11.0) is known; the capture is the user's word:
    a warning."""
    wheel = first_symptom(f, "prose:nccl-cu11-wheel-named")
    graphs = first_symptom(f, "prose:cuda-graphs-said")
    error = first_symptom(f, "prose:nccl-error-said")
    if wheel is None or graphs is None or error is None:
        return
    built = wheels.nccl_cu11_build_cuda(str(wheel.get("version")))
    if built is None or _capturable(built):
        return   # a release the table does not know, or one built with CUDA 11.7 or 11.8: capturable
    yield Hit(message=f"the NCCL in use is the PyPI nvidia-nccl-cu11 {wheel.get('version')} (line {wheel.get('line')}), "
                      f"built with CUDA {built}, which NCCL cannot capture in a CUDA graph on any driver; the ticket runs "
                      f"with CUDA graphs (line {graphs.get('line')}) and names an NCCL error (line {error.get('line')})",
              severity="warning",
              fix=f"{_WHICH_NCCL}\n{_cu12_way()}",
              evidence=ticket_evidence(wheel))
