"""What torch's own messages establish, read from a pasted log (knowledge/messages/torch.toml and
frameworks.toml): the c10d store and NCCL watchdog, DataLoader workers, torch.compile's Triton
backend and xFormers, and ptxas too old for the GPU or the PTX (knowledge/messages/ptxas.toml)."""

from __future__ import annotations

import re
import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge.wheels import dropped_arch
from hpcdoctor.rules._common import DRIVER_JIT_FAILED, first_symptom, stated, ticket_evidence, told_text


@rule("ENV007", "nccl-watchdog-timeout", "info", "a collective ran past the process group's timeout", impact=7)
def nccl_watchdog_timeout(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, torch's "[Rank R] Watchdog caught collective operation timeout:
        WorkNCCL(SeqNum=N, OpType=OP, ..., Timeout(ms)=T) ran for M milliseconds before timing
        out." (ProcessGroupNCCL.cpp, WorkNCCL::checkTimeout).

    Why it matters:
        What the line establishes: this rank entered collective number N (OP) and waited the whole
        timeout for the others. Some rank did not reach it in that time: it died (its own log has
        the first error), hangs (I/O, a deadlock, a GPU fault), took another code path (ranks that
        call collectives in a different order or number wait forever), or was still busy with work
        of its own longer than the timeout (validation or checkpointing on one rank: open_clip#1087).
        The network is rarely the cause of a clean timeout, and the line alone does not say which
        rank, nor that anything on the node is wrong: the finding is info.

    How to fix:
        Find the rank that did not arrive: its log's first error, or torch's flight recorder
        (TORCH_NCCL_TRACE_BUFFER_SIZE=2000 records each rank's last collectives and is dumped on a
        timeout) which shows the rank whose last SeqNum is behind the others. Where one rank
        legitimately works longer than the timeout, pass a longer one to
        init_process_group(timeout=...), where the program creates the process group (in
        open_clip#1087 an exported NCCL_TIMEOUT=7200 left it at 1800000 ms).

    References:
        - https://pytorch.org/docs/stable/torch_nccl_environment_variables.html
        - https://pytorch.org/tutorials/prototype/flight_recorder_tutorial.html
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/distributed_c10d.py (TORCH_NCCL_TRACE_BUFFER_SIZE; init_process_group's timeout)
        - https://github.com/mlfoundations/open_clip/issues/1087 (ranks waiting out the timeout while one validated)
    """
    s = first_symptom(f, "torch:watchdog-collective-timeout")
    if s is None:
        return
    ran, limit = int(s.get("ran_ms") or 0), int(s.get("timeout_ms") or 0)
    yield Hit(message=f"collective {s.get('op')} number {s.get('seq')} waited {ran / 1000:.0f} s, past the process "
                      f"group's {limit / 1000:.0f} s timeout (line {s['line']}): another rank did not reach it in that "
                      "time (it died, hung, took another code path, or was still busy longer than the timeout, such as "
                      "validation on one rank); the line does not say which, nor that the node is at fault",
              fix="export TORCH_NCCL_TRACE_BUFFER_SIZE=2000   # flight recorder: on the next timeout each rank's last "
                  "collectives are dumped, and the rank whose SeqNum lags is the one to read\n"
                  "# a rank that legitimately works longer (validation on one rank): pass a longer timeout in the "
                  "program where it creates the process group: init_process_group(..., timeout=datetime.timedelta(hours=2))",
              evidence=ticket_evidence(s))


@rule("ENV008", "nccl-watchdog-stuck", "warning", "torch's NCCL watchdog thread itself hung", impact=7)
def nccl_watchdog_stuck(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, torch's "ProcessGroupNCCL's watchdog got stuck for N seconds without
        making progress in monitoring enqueued collectives" or "Heartbeat monitor timed out!
        Process will be terminated after dumping debug info." (ProcessGroupNCCL.cpp, the
        heartbeat monitor of torch 2.2 and newer).

    Why it matters:
        Unlike a collective timeout, the watchdog could not even poll its collectives: it is
        blocked inside a CUDA or NCCL call (a GPU that stopped answering, an NCCL abort waiting on
        a dead peer, or a thread holding the GIL in a CUDA call), and torch kills the process after
        TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC. Raising that timeout only delays the abort.

    How to fix:
        Look at the node where it happened: a GPU fault (Xid in the kernel log, nvidia-smi not
        answering) is the first suspect; otherwise the first error of any rank, printed before.

    References:
        - https://pytorch.org/docs/stable/torch_nccl_environment_variables.html (TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC)
        - https://github.com/verl-project/verl/issues/1158
    """
    s = first_symptom(f, "torch:watchdog-stuck", "torch:heartbeat-monitor-timeout")
    if s is None:
        return
    held = f" for {s['seconds']} s" if s.get("seconds") else ""
    yield Hit(message=f"torch's NCCL watchdog was blocked{held} inside a CUDA or NCCL call (line {s['line']}) and the "
                      "process was terminated: look for a GPU that stopped answering or a rank that failed first",
              fix="nvidia-smi   # on the node of the stuck rank: a GPU that hangs here, or an Xid in its kernel log, "
                  "is the cause",
              evidence=ticket_evidence(s))


@rule("ENV009", "c10d-store-unreachable", "error", "ranks could not reach the rendezvous store", impact=8,
      also={"info": "only the client's per-address warning, no failure after it (another address may have answered)"})
def c10d_store_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, torch's TCPStore failures: "The client socket has timed out after ...
        while trying to connect to (HOST, PORT)", "The client socket has failed to connect to any
        network address of (HOST, PORT)", or rank 0's "Timed out after N seconds waiting for
        clients. J/K clients joined." (torch/csrc/distributed/c10d, libtorch_cpu.so); the store's
        host name that does not resolve ("The IPv4 network addresses of (HOST, PORT) cannot be
        retrieved (gai error: -2 - Name or service not known)", or the TCP client's line ending in
        the resolver's words).

    Why it matters:
        Every rank first connects to the store rank 0 serves at MASTER_ADDR:MASTER_PORT. If the
        address names the wrong host or an interface other nodes cannot reach, the port is
        firewalled, or rank 0 never started, no rank gets further and the job hangs until the
        rendezvous timeout.

    How to fix:
        Test the address and port from a node that failed (nc -zv HOST PORT); set MASTER_ADDR to
        rank 0's address on the network the nodes share (under Slurm, the first host of
        scontrol show hostnames "$SLURM_JOB_NODELIST"), and a free MASTER_PORT.

        The client's "The client socket has failed to connect to [HOST]:PORT (errno ...)" is a
        warning torch logs for each address it tries (socket.cpp, recordError) before the next
        one; only "... any network address of (HOST, PORT)" or the timeout after it is the
        failure. Alone, the warning is a hint: another address of the host (IPv4 after IPv6,
        the usual case on Windows and macOS) may have connected.

    References:
        - https://pytorch.org/docs/stable/distributed.html#tcp-initialization
    """
    unresolved = first_symptom(f, "torch:store-address-unresolved", "torch:store-client-name-unresolved")
    if unresolved is not None and unresolved.get("host"):
        yield _store_name_unresolved(unresolved)
        return
    s = first_symptom(f, "torch:store-client-timeout", "torch:store-client-connect-failed", "torch:store-wait-clients-timeout")
    if s is None:
        warned = first_symptom(f, "torch:store-client-address-failed")
        if warned is not None:
            yield _one_address_warned(warned)
        return
    host, port = s.get("host"), s.get("port")
    if host and port and host.isdigit():
        # getaddrinfo takes a bare number as inet_aton's one-part IPv4 form (6841231 is 0.104.99.143):
        # a job id or a port given as the address, not a host
        n = int(host)
        read_as = (f"which the resolver reads as the IPv4 address {'.'.join(str((n >> k) & 255) for k in (24, 16, 8, 0))}"
                   if n < 2 ** 32 else "too large to be even an IPv4 address")
        yield Hit(message=f"this rank could not reach the rendezvous store at {host}:{port} (line {s['line']}): the "
                          f"store's host is a bare number, {read_as}, "
                          "not a host name: MASTER_ADDR (or --rdzv-endpoint) holds a number (a job id, a port) "
                          "where rank 0's host name or address belongs",
                  fix=('echo "MASTER_ADDR=$MASTER_ADDR"   # must be rank 0\'s host name or address; under Slurm: '
                       'export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'),
                  evidence=ticket_evidence(s))
        return
    if host and port:
        yield Hit(message=f"this rank could not reach the rendezvous store at {host}:{port} (line {s['line']}): "
                          "rank 0 not running, a wrong MASTER_ADDR/MASTER_PORT, or a firewall",
                  fix=f"nc -zv {shlex.quote(host)} {shlex.quote(port)}   # from the failing node: must connect",
                  evidence=ticket_evidence(s))
        return
    yield Hit(message=f"only {s.get('joined')} of {s.get('expected')} ranks reached the rendezvous store (line {s['line']}): "
                      "some ranks did not start, or cannot reach MASTER_ADDR:MASTER_PORT",
              fix='nc -zv "$MASTER_ADDR" "$MASTER_PORT"   # from a node whose ranks did not arrive: must connect',
              evidence=ticket_evidence(s))


def _one_address_warned(s: dict) -> Hit:
    """torch's per-address warning with no failure after it: a retry on the way, not the failure."""
    named = re.match(r"\[([^\]\s]{1,120})\]:\d{1,5}$", s["address"])
    host = shlex.quote(named.group(1)) if named else '"$MASTER_ADDR"'
    return Hit(message=f"torch's store client could not connect to one address of the rendezvous host, "
                       f"{s['address']} (line {s['line']}), and logged it as a warning before trying the next; "
                       "the paste shows no failure after it (\"failed to connect to any network address\" or a "
                       "timeout), so another address may have answered: harmless if the job went on",
               severity="info",
               fix=f"getent ahosts {host}   # the addresses the client tries, in order; one that answers is enough",
               evidence=ticket_evidence(s))


def _store_name_unresolved(s: dict) -> Hit:
    """The store's host name that getaddrinfo could not resolve on this node (torch.toml)."""
    host = s["host"]
    return Hit(message=f"the rendezvous store's host name {host} does not resolve on this node (line {s['line']}: "
                       f"\"{s.get('gai')}\"): the name given as MASTER_ADDR or --rdzv-endpoint is not one every node's "
                       "resolver knows (a short host name of a container or pod, a name from another network)",
               fix=(f"getent hosts {shlex.quote(host)}   # on each node: must print the address rank 0 listens on\n"
                    "# else give an address, or a name every node resolves: under Slurm the first node of the job, "
                    "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1), and resolve it to "
                    "an address where the nodes' names are not in DNS: getent hosts \"$MASTER_ADDR\" | awk '{print $1}'"),
               evidence=ticket_evidence(s))


# The DataLoader's two ways out of its open-files limit, as torch's own message names them.
_DATALOADER_FD_FIX = ('ulimit -n "$(ulimit -Hn)"   # in the job script, before python; or in the script: '
                      "torch.multiprocessing.set_sharing_strategy('file_system')")


@rule("MEM004", "dataloader-open-files", "warning", "DataLoader workers ran out of file descriptors", impact=6,
      also={"info": "a bare EMFILE with no DataLoader frame, or the user's words \"too many open files\" beside "
                    "DataLoader workers: the usual holder, not a shown one"})
def dataloader_open_files(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, torch's "Too many open files. Communication with the workers is no longer
        possible." (torch/utils/data/dataloader.py), or "[Errno 24] Too many open files" beside
        CPython multiprocessing's reduction.py / resource_sharer.py frames, where the file
        descriptor of a shared tensor is passed, or CPython's "received 0 items of ancdata", the
        same limit met while a descriptor was on its way (dataloader.py's note on the open files
        limit). At info: a bare EMFILE with no DataLoader frame, and "Too many open files" in the
        user's own words (a title, a quote) beside a DataLoader given workers (num_workers above 0):
        the usual holder, not a shown one.

    Why it matters:
        With the default "file_descriptor" sharing strategy every tensor a worker sends holds a
        file descriptor until the main process frees it; many workers and large prefetching run
        through a 1024 open-files limit and the DataLoader stops.

    How to fix:
        Raise the soft open-files limit in the job script (ulimit -n up to the hard limit), or
        call torch.multiprocessing.set_sharing_strategy('file_system') at the start of the script,
        as torch's message says.

    References:
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/data/dataloader.py (the too-many-open-files hint)
        - https://pytorch.org/docs/stable/multiprocessing.html#sharing-strategies
    """
    s = first_symptom(f, "torch:dataloader-too-many-open-files", "torch:dataloader-fd-passing-emfile", "torch:dataloader-ancdata")
    if s is None:
        bare = first_symptom(f, "torch:python-emfile")
        if bare is not None:   # the limit was reached; which process held the descriptors is not shown
            # open-files-limit-too-low answers the limit itself (how to read and raise it) on the same
            # line: this hint says only what it adds, the DataLoader's own way out.
            yield Hit(message=f"a Python process ran out of file descriptors (line {bare['line']}: \"{told_text(bare)}\"): "
                              "in a training job the usual holder is the DataLoader (its file_descriptor sharing "
                              "keeps one open per tensor in flight, PyTorch's multiprocessing notes); besides "
                              "raising the limit, the DataLoader can share tensors through files instead",
                      severity="info",
                      fix="python -c \"import torch.multiprocessing as mp; print(mp.get_sharing_strategy(), "
                          "mp.get_all_sharing_strategies())\"   # the strategy in use, and the ones this torch has\n"
                          "# then, at the start of the training script: "
                          "torch.multiprocessing.set_sharing_strategy('file_system')",
                      evidence=ticket_evidence(bare))
            return
        said = first_symptom(f, "prose:too-many-open-files-said", "prose:emfile-message-quoted")
        workers = first_symptom(f, "prose:dataloader-workers-said")
        if said is not None and workers is not None and stated(said):
            # the user's words, not the program's line: the DataLoader's workers are shown, the error is retold
            yield Hit(message=f"the user says the job failed with \"Too many open files\" (line {said['line']}) and its "
                              f"DataLoader has worker processes (line {workers['line']}: \"{told_text(workers)}\"): "
                              "workers pass each tensor to the main process by a file descriptor (torch's default "
                              "file_descriptor sharing), so tensors kept alive hold descriptors until the "
                              "open-files limit is reached",
                      severity="info",
                      fix=_DATALOADER_FD_FIX, evidence=ticket_evidence(said))
        return
    yield Hit(message=f"the DataLoader's workers ran out of file descriptors (line {s['line']})",
              fix=_DATALOADER_FD_FIX,
              evidence=ticket_evidence(s))


@rule("SW020", "triton-gpu-too-old", "warning", "torch.compile on a GPU Triton does not support", impact=6)
def triton_gpu_too_old(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, "Found <GPU> which is too old to be supported by the triton GPU compiler,
        which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but
        your device is of CUDA capability X.Y" (torch/_inductor, GPUTooOldForTriton); or, inside
        Triton's own compile ("Internal Triton PTX codegen error"), ptxas refusing Volta's
        instructions: "Feature 'mma' requires .target sm_70 or higher".

    Why it matters:
        torch.compile's default backend (inductor) generates Triton kernels, and Triton has no
        code generation for GPUs older than compute capability 7.0 (Pascal, Maxwell). The model
        itself runs in eager mode on such a GPU; only compilation fails.

    How to fix:
        Turn torch.compile off for this GPU (TORCH_COMPILE_DISABLE=1 in torch 2.13; older releases
        read TORCHDYNAMO_DISABLE=1), or drop the torch.compile call, or run on a GPU of compute
        capability 7.0 or newer.

    References:
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/_inductor/exc.py (GPUTooOldForTriton)
        - https://github.com/MIC-DKFZ/nnUNet/issues/2188
    """
    s = first_symptom(f, "frameworks:triton-gpu-too-old")
    if s is None:
        yield from _triton_ptxas_before_volta(f)
        return
    figures = (f" (compute capability {s['cc']}, Triton needs {s.get('min_cc')})" if s.get("cc")
               else f" (Triton needs compute capability {s['min_cc']} or newer)" if s.get("min_cc") else "")
    yield Hit(message=f"torch.compile cannot generate Triton kernels for the {s.get('gpu')}{figures} "
                      f"(line {s['line']}); eager mode runs on it",
              fix="export TORCH_COMPILE_DISABLE=1 TORCHDYNAMO_DISABLE=1   # torch.compile off: the first name from "
                  "torch 2.13's config, the second read by older releases",
              evidence=ticket_evidence(s))


def _triton_ptxas_before_volta(f: FactView):
    """ptxas refusing Volta's instructions (mma) inside Triton's own compile (knowledge/messages/
    ptxas.toml feature-requires-sm70): Triton generated its kernel for the GPU in use, older than
    compute capability 7.0. The same ptxas line from an nvcc build (tmpxft_ temporaries) is the
    build's target list, and is left alone."""
    s = first_symptom(f, "ptxas:feature-requires-sm70")
    if s is None:
        return
    ptx = s.get("ptx") or ""
    if "tmpxft_" in ptx or not ("compile-ptx-src" in ptx or first_symptom(f, "ptxas:triton-ptxas-failed")):
        return
    yield Hit(message=f"Triton compiled a kernel for a GPU older than compute capability 7.0: ptxas refused "
                      f"'{s['feature']}', which needs {s['target']} (line {s['line']}); Triton supports Volta "
                      "(7.0) and newer",
              fix="export TORCH_COMPILE_DISABLE=1 TORCHDYNAMO_DISABLE=1   # torch.compile off, where it is what runs "
                  "Triton\nnvidia-smi --query-gpu=name,compute_cap --format=csv   # a GPU of 7.0 or newer runs Triton's kernels",
              evidence=ticket_evidence(s))


@rule("SW114", "triton-kernel-exceeds-gpu-shared-memory", "error",
      "a Triton kernel's configuration needs more shared memory per block than this GPU has", impact=6)
def triton_kernel_exceeds_gpu_shared_memory(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, Triton refusing to launch a compiled kernel: "triton.runtime.errors.
        OutOfResources: out of resource: shared memory, Required: 126978, Hardware limit: 101376.
        Reducing block sizes or `num_stages` may help." (triton/runtime/errors.py; the limit is
        the GPU's shared memory per block, read from the driver).

    Why it matters:
        The kernel's launch configuration (block sizes, num_stages: each pipeline stage holds one
        more tile in shared memory) was chosen for a GPU with more shared memory per block (an
        A100 or H100) than the one in use (a consumer Ampere or Ada card, a T4, a V100). It fails
        the same way on every run; no memory freed elsewhere or restart changes it.

    How to fix:
        Use a configuration that fits: lower num_stages first, then BLOCK sizes, in the kernel's
        triton.Config or autotune list (or the project's release that carries configurations for
        this GPU); or run on a GPU with more shared memory per block.

    References:
        - https://github.com/triton-lang/triton/blob/main/python/triton/runtime/errors.py (OutOfResources)
        - https://github.com/Yuliang-Liu/MonkeyOCR/issues/86
        - https://github.com/OpenSpaceAI/DEST3D/issues/2 (the maintainers lowered num_stages)
    """
    s = first_symptom(f, "frameworks:triton-out-of-resources")
    if s is None:
        return
    resource, required, limit = s.get("resource") or "shared memory", s.get("required"), s.get("limit")
    unit = " bytes" if resource == "shared memory" else ""
    figures = f": it needs {required}{unit}, the GPU allows {limit}{unit}" if required and limit else ""
    yield Hit(message=f"a Triton kernel's launch configuration needs more {resource} per block than this GPU has"
                      f"{figures} (line {s['line']}); the same on every run until the configuration changes",
              fix=("nvidia-smi --query-gpu=name,compute_cap --format=csv   # the GPU the kernel must fit: lower the "
                   "kernel's num_stages first, then its BLOCK sizes (its triton.Config or autotune list), or use the "
                   "project's release with configurations for this GPU"),
              evidence=ticket_evidence(s))


@rule("SW021", "xformers-without-cuda", "warning", "xFormers installed without CUDA kernels for this torch", impact=6)
def xformers_without_cuda(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, xFormers' "xFormers wasn't build with CUDA support" (an operator's reason
        in "No operator found for `memory_efficient_attention_forward`"),
        xformers/ops/fmha/common.py; or its import warning "xFormers can't load C++/CUDA
        extensions. xFormers was built for: PyTorch X with CUDA Y (you have Z)" where X is not Z
        (xformers/_cpp_lib.py; a "+cpu" Z is torch-cpu-only's).

    Why it matters:
        The xFormers package loaded, but its compiled extension did not: it was built for another
        torch or CUDA (pip installed a wheel for a different torch, or a source build without a
        CUDA toolkit), so every attention call on the GPU fails.

    How to fix:
        Install the xFormers wheel built for the installed torch (from the same index as torch),
        or uninstall xFormers so that the framework falls back to torch's own attention; check
        with python -m xformers.info.

    References:
        - https://github.com/facebookresearch/xformers/blob/a9e2e7b331cc08552835ca0acbc0e15f69b42b30/xformers/ops/fmha/common.py
        - https://github.com/kijai/ComfyUI-DepthAnythingV2/issues/27
    """
    s = first_symptom(f, "frameworks:xformers-without-cuda")
    pair = first_symptom(f, "frameworks:xformers-built-for")
    if s is None and pair is not None and pair.get("built_torch") != pair.get("have_torch"):
        # Built for another torch than the one installed. The same pair (a Mac's torch, a ROCm
        # torch with an xFormers built there) says no CUDA here rather than a wrong wheel.
        yield Hit(message=f"xFormers was built for torch {pair['built_torch']} and this environment has "
                          f"{pair['have_torch']} (line {pair['line']}): its C++/CUDA extensions do not load, and "
                          "memory_efficient_attention has no GPU kernels",
                  fix="python -m xformers.info   # then install the xformers release built for this torch "
                      "(from the index torch came from), or pip uninstall xformers to use torch's own attention",
                  evidence=ticket_evidence(pair))
        return
    if s is None:
        return
    yield Hit(message=f"xFormers is installed without working CUDA kernels for this torch (line {s['line']}): every "
                      "memory_efficient_attention call on the GPU fails",
              fix="python -m xformers.info   # then install the xformers wheel built for this torch and CUDA, "
                  "or pip uninstall xformers to use torch's own attention",
              evidence=ticket_evidence(s))


@rule("SW031", "ptxas-too-old", "error", "ptxas is too old for the GPU or the PTX it is given", impact=7)
def ptxas_too_old(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, ptxas (the PTX assembler Triton and torch.compile run, or nvcc's) refusing
        what it is too old to know (knowledge/messages/ptxas.toml): "ptxas fatal : Value 'sm_121a'
        is not defined for option 'gpu-name'" (a GPU newer than its CUDA release), "Unsupported
        .target 'sm_XX'", or, outside Triton's own compile, "Unsupported .version 8.4; current
        version is '7.8'" (PTX written by a newer toolchain than the ptxas assembling it). Inside
        Triton's compile an unsupported .version is Triton's own table (it picks the PTX version
        from the ptxas it runs) and is left alone; beside the driver's JIT error (218 or 222) the
        log is the driver's JIT compiler's, which driver-too-old answers.

    Why it matters:
        Nothing is compiled for the GPU: torch.compile and every Triton kernel fail on it, though
        the GPU, the driver and torch's eager kernels may all be fine.

    How to fix:
        Point Triton at a ptxas that knows the GPU (TRITON_PTXAS_PATH, read by Triton's knobs.py)
        from a CUDA toolkit new enough for it; assemble Triton's PTX with Triton's own bundled
        ptxas (triton/backends/nvidia/bin/ptxas) rather than an older toolkit's.

    References:
        - https://github.com/triton-lang/triton/issues/8539 (TRITON_PTXAS_PATH to CUDA 13's ptxas for sm_121a)
        - https://github.com/triton-lang/triton/issues/5385 (a CUDA 11.8 ptxas given Triton's PTX 8.4)
    """
    s = first_symptom(f, "ptxas:gpu-name-not-defined", "ptxas:unsupported-target")
    if s is not None and dropped_arch(s["arch"].split("_", 1)[1]):
        return  # an architecture CUDA dropped (sm_21): this ptxas is newer than the flags, nvcc-dropped-requested-arch's
    if s is not None:
        arch = s["arch"]
        yield Hit(message=f"the ptxas that ran does not know {arch} (line {s['line']}): its CUDA release is older "
                          "than this GPU, so no Triton or torch.compile kernel can be built for it",
                  fix=(f"for p in /usr/local/cuda*/bin/ptxas $(command -v ptxas); do \"$p\" --help 2>/dev/null | "
                       f"grep -q \"'{arch}'\" && export TRITON_PTXAS_PATH=\"$p\" && break; done; "
                       f"echo \"TRITON_PTXAS_PATH=${{TRITON_PTXAS_PATH:-none here knows {arch}: install a newer CUDA toolkit}}\""),
                  evidence=ticket_evidence(s))
        return
    s = first_symptom(f, "ptxas:unsupported-version")
    if s is None or first_symptom(f, "ptxas:triton-ptxas-failed") is not None:
        return  # inside Triton's compile the PTX version came from this same ptxas: Triton's table, not the node
    if first_symptom(f, *DRIVER_JIT_FAILED) is not None:
        return  # the driver's PTX JIT wrote this log (error 218 or 222 beside it): driver-too-old says so
    if _version(s["ptx"]) <= _version(s["current"]):
        return
    yield Hit(message=f"ptxas knows PTX ISA up to {s['current']} and was given PTX {s['ptx']} (line {s['line']}): "
                      "the PTX was written by a newer toolchain (Triton, a newer nvcc) than this ptxas",
              fix=("python3 -c \"import os, triton; print(os.path.join(os.path.dirname(triton.__file__), 'backends', "
                   "'nvidia', 'bin', 'ptxas'))\"   # Triton's own ptxas, new enough for the PTX Triton writes: "
                   f"assemble with it, or with a CUDA toolkit whose ptxas knows PTX {s['ptx']}"),
              evidence=ticket_evidence(s))


def _version(text: str):
    return tuple(int(x) for x in text.split("."))
