"""GPU memory held by another process when a program starts: the allocator's own accounting of the
other processes (torch's "Process N has X memory in use"), vLLM's and TensorFlow's start-up
figures, a paste's own statement, and the node's process list (GPU011)."""

from __future__ import annotations

import re
from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.parse.sizes import parse_gib
from hpcdoctor.rules._common import catalogued, first_symptom, stated, ticket_evidence, told_evidence, told_text
from hpcdoctor.rules._gpu import as_int, gpu_list, subject


def _gib(text: str) -> float:
    """A size as torch's format_size() prints it ("0 bytes", "1.50 KiB", "530.00 MiB", "11.17 GiB") or
    TensorFlow's HumanReadableNumBytes ("7.92GiB", "190.31MiB", "512B"), in GiB."""
    size = parse_gib(text)
    if size is None:
        raise ValueError(f"not a size: {text!r}")
    return size


# One entry of the proc_info that reportProcessMemoryInfo() (c10/cuda/CUDACachingAllocator.cpp)
# builds from NVML: "Process <pid> has <size> memory in use. " for another process, "Including
# non-PyTorch memory, this process has <size> memory in use. " for the pid equal to getpid().
_PROC_ENTRY = re.compile(r"(?:Process (\d{1,10})|(this process)) has (\d{1,12}(?:\.\d{1,4})? (?:bytes|[KMG]iB)) memory in use")


def _oom_held_by_others(s: dict):
    """(GiB held by other processes, [(pid, size text)], how it was told, this process's size) from one pasted
    out-of-memory message, or None when the message cannot tell.

    Old form (torch < 2.1): capacity - free - reserved by PyTorch. New form (2.1+): the processes
    NVML listed when it did; without "this process" among them the job runs in another PID
    namespace (a container: NVML gives host pids, getpid() the container's) and one listed pid is
    the job itself, so the largest that could be it (at least what PyTorch reserved) is left out.
    Without any NVML entry only "this process" and the capacity: the rest is held outside it.
    With neither (no NVML: some containers, Windows, every ROCm build) the split between this
    process's CUDA context and others is unknown: None."""
    total, free = _gib(s["total"]), _gib(s["free"])
    if total <= 0:  # no card size, no share of it
        return None
    if s["id"] == "torch:cuda-oom":
        return total - free - _gib(s["reserved"]), [], "reserved", s["reserved"]
    entries = [(pid, size) for pid, me, size in _PROC_ENTRY.findall(s.get("procs") or "")
               if _gib(size) <= total]  # a figure above the card is no reading (NVML: not available)
    mine = [size for pid, size in entries if not pid]
    others = [(pid, size) for pid, size in entries if pid]
    if others and mine:
        return sum(_gib(size) for _, size in others), others, "listed", mine[0]
    if others:
        torch_own = _gib(s["allocated"]) + _gib(s["unallocated"]) if s.get("allocated") and s.get("unallocated") else 0.0
        could_be_me = [e for e in others if _gib(e[1]) >= torch_own] or others
        me = max(could_be_me, key=lambda e: _gib(e[1]))
        rest = [e for e in others if e is not me]
        return sum(_gib(size) for _, size in rest), rest, "namespace", me[1]
    if mine:
        return total - free - _gib(mine[0]), [], "unlisted", mine[0]
    return None


_OLD_FORM_SHARE = 0.5


def _held_by_others_in_ticket(f, frac: float):
    """torch's out-of-memory message states the card's capacity, what was free and (old form) what
    this process reserved or (new form, through NVML) what each process held on the card."""
    others_said = any(t.get("id") == "prose:other-processes-hold-memory-said" and stated(t)
                      for t in f.get("ticket.symptoms") or [])
    for s in f.get("ticket.symptoms") or []:
        if s["id"] not in ("torch:cuda-oom", "torch:cuda-oom-v2"):
            continue
        told = _oom_held_by_others(s)
        if told is None:
            continue
        held, pids, how, mine = told
        # The old form's gap (capacity - free - reserved) also holds this process's own memory outside
        # torch's allocator (its CUDA context, cuBLAS/cuDNN handles) and, on a desktop card, the display:
        # none of it is in the message. Only a gap of most of the card says other processes held it
        # (blind set C's aphantasia-22: a 6 GiB card, 1.5 GiB outside torch's cache, its own job's OOM).
        # The user saying that other processes hold memory tells whose the old form's gap is: then the
        # new form's quarter of the card is enough.
        share = _OLD_FORM_SHARE if how == "reserved" and not others_said else 0.25
        if held <= _gib(s["total"]) * max(frac, share):
            continue
        hip = s.get("vendor") == "HIP"
        where = f"GPU {s['gpu']} ({s['total']})"
        named = ", ".join(f"pid {pid} {size}" for pid, size in pids[:8])
        if how == "reserved":
            said = f"this process reserved only {s['reserved']}, {s['free']} was free: about {held:.1f} GiB were held by other processes"
            said += " (the user says other processes hold memory there)" if others_said else ""
        elif how == "listed":
            said = f"{len(pids)} other process(es) held {held:.1f} GiB ({named}), this process {mine}"
        elif how == "namespace":
            said = (f"other processes held at least {held:.1f} GiB ({named}; the largest listed pid, taken for this job "
                    f"seen from outside its container, is left out)")
        else:
            said = (f"this process had {mine} in use and {s['free']} was free: "
                    f"about {held:.1f} GiB were held outside it, by no listed compute process (another container, "
                    f"a graphics process or the driver)")
        pid_list = ",".join(pid for pid, _ in pids[:8])
        if hip:
            fix = ("rocm-smi --showpids   # or: amd-smi process -- which processes hold memory on the GPUs now\n"
                   "# yours (a leftover run, a stuck DataLoader worker)? end it; someone else's: ask the administrators\n"
                   "# or run on a GPU that is free: HIP_VISIBLE_DEVICES=1 python ... (the index of a free GPU)")
        else:
            who = f"ps -o pid=,user=,etime=,args= -p {pid_list}   # " if pid_list else "# "
            fix = ("nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # which processes hold memory on the GPUs now\n"
                   f"{who}yours (a leftover run, a stuck DataLoader worker)? end it; someone else's: ask the administrators\n"
                   "# or run on a GPU that is free: CUDA_VISIBLE_DEVICES=1 python ... (the index of a free GPU)")
        yield Hit(message=f"out of memory on {where}: {said} (line {s['line']})",
                  subject=f"GPU {s['gpu']}", fix=fix,
                  evidence={"ticket.line": s["line"], "ticket.text": s["text"][:160], "held_by_others_gib": round(held, 2),
                            "other_processes": [{"pid": int(pid), "memory": size} for pid, size in pids],
                            "told_by": how})
        return


# A CUDA context alone: 518 MiB on an H200 with torch 2.11 ("this process has 518.00 MiB memory in use"
# with nothing allocated, tests/fixtures/emitters_gpu/h200-torch-oom-memory-fraction.txt).
_CONTEXT_GIB = 0.5


def _async_oom_outside(f):
    """torch's cudaMallocAsync out-of-memory (torch.toml cuda-oom-async) names the card, what torch
    allocated and what was free: the rest was outside torch's allocator. More than a CUDA context is
    the display or other processes; which, the message cannot say: an info with the listing."""
    s = first_symptom(f, "torch:cuda-oom-async")
    if s is None:
        return
    total, outside = _gib(s["total"]), _gib(s["total"]) - _gib(s["allocated"]) - _gib(s["free"])
    if total <= 0 or outside <= 2 * _CONTEXT_GIB:
        return
    yield Hit(message=f"out of memory on a {s['total']} GPU under torch's "
                      f"cudaMallocAsync allocator: torch had {s['allocated']} allocated and {s['free']} was free, so "
                      f"about {outside:.1f} GiB were held outside torch's allocator, more than a CUDA context (about "
                      f"{_CONTEXT_GIB} GiB): the display, a browser or another process holds memory on this GPU (line {s['line']})",
              severity="info", fix=_HELD_FIX,
              evidence={**ticket_evidence(s), "outside_torch_gib": round(outside, 2)})


def _vllm_short_at_start(f):
    """vLLM's refusal to start (frameworks.toml vllm-startup-memory-short): less free than its
    gpu_memory_utilization share of the card, the rest in use before the model loaded."""
    s = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "frameworks:vllm-startup-memory-short"), None)
    if s is None:
        return
    free, total, util = float(s["free"]), float(s["total"]), float(s["util"])
    if total <= 0 or free >= total:
        return
    fits = int(free / total * 100 - 2) / 100   # a share that fits what was free, with a margin for rounding
    yield Hit(message=f"vLLM would not start: {free:g} of {total:g} GiB free on the GPU, below its "
                      f"gpu_memory_utilization {util:g} ({s['requested']} GiB): {total - free:.2f} GiB were in use "
                      f"before the model loaded (line {s['line']})",
              fix=("nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # which processes hold memory on the GPU now\n"
                   "# yours (a leftover vLLM, a stuck EngineCore)? end it; else run on a free GPU, or ask for less:\n"
                   f"vllm serve MODEL --gpu-memory-utilization {fits:.2f}   # in Python LLM(..., gpu_memory_utilization={fits:.2f})"),
              evidence={**ticket_evidence(s), "free_gib": free, "total_gib": total, "gpu_memory_utilization": util})


def _vllm_freed_while_profiling(f):
    """vLLM's "Error in memory profiling" (knowledge/messages/frameworks.toml vllm-memory-profiling-freed):
    more memory free after its profiling run than before it, so another process on the GPU released
    memory meanwhile. Equal figures say nothing of another process (on XPU a vLLM bug tripped the
    strict comparison, vllm PR #33358) and are left alone."""
    s = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "frameworks:vllm-memory-profiling-freed"), None)
    if s is None or float(s["current"]) <= float(s["initial"]):
        return
    unit = " GiB" if s.get("unit") else " bytes"
    device = s.get("device") or "GPU"
    yield Hit(message=f"vLLM's memory profiling failed: {s['initial']}{unit} free on the {device} before it, "
                      f"{s['current']}{unit} after (line {s['line']}): another process sharing the {device} "
                      "released memory while vLLM measured, so its share of the card could not be judged",
              fix=_NPU_FREED_FIX if device == "NPU" else _GPU_FREED_FIX,
              evidence={**ticket_evidence(s), "initial_free": s["initial"], "current_free": s["current"]})


_GPU_FREED_FIX = ("nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # the other processes on this GPU\n"
                  "# start vLLM when the process beside it (a colocated trainer, another server) has settled, or alone:\n"
                  "CUDA_VISIBLE_DEVICES=1 vllm serve MODEL   # the index of a GPU no other process uses")
# vllm-ascend's copy of the check: Ascend's own listing and device mask.
_NPU_FREED_FIX = ("npu-smi info   # the processes on each NPU, with the memory they hold\n"
                  "# start vLLM when the process beside it (a colocated trainer) has settled, or alone:\n"
                  "ASCEND_RT_VISIBLE_DEVICES=1 vllm serve MODEL   # the index of an NPU no other process uses")


# TensorFlow 1.x's device listing (knowledge/messages/tensorflow.toml): the card's capacity and what
# was free as TensorFlow found it, before it allocated anything. Its own CUDA context and a display
# are in the gap too, so only a gap of most of the card (as torch's old form) says others held it.
_TF_AT_START = frozenset({"tensorflow:device-memory-at-start", "tensorflow:device-memory-at-start-r0"})


def _tf_full_at_start(f):
    """TensorFlow 1.x's listing of a GPU with most of its memory already in use: each such GPU."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") not in _TF_AT_START:
            continue
        total, free = _gib(s["total"]), _gib(s["free"])
        if total <= 0 or total - free <= total * _OLD_FORM_SHARE:
            continue
        yield Hit(message=f"TensorFlow found a GPU with {s['free']} of {s['total']} free before it allocated anything "
                          f"(line {s['line']}): about {total - free:.1f} GiB were held by other processes",
                  fix=_HELD_FIX + "\n# or run on a GPU that is free: CUDA_VISIBLE_DEVICES=1 python ... (the index of a free GPU)",
                  evidence={**ticket_evidence(s), "held_by_others_gib": round(total - free, 2)})


def _xla_backed_off(f):
    """XLA's allocator backing off from the region it first asked for (xla.toml
    device-memory-allocation-failed): three or more failed tries in a row, each about 0.9 of the
    last, are the BFC allocator's one backpedal; the first size is what the process wanted of a card
    that did not have it free (at start-up, JAX's 75% preallocation)."""
    tries = [s for s in f.get("ticket.symptoms") or []
             if s.get("id") == "xla:device-memory-allocation-failed" and s.get("size")]
    run = tries[:1]
    for s in tries[1:]:
        if not 0.85 <= _gib(s["size"]) / max(_gib(run[-1]["size"]), 1e-9) <= 0.95:
            break
        run.append(s)
    if len(run) < 3:
        return
    first, last = run[0], run[-1]
    yield Hit(message=f"XLA could not have the {first['size']} of GPU memory it first asked for and backed off "
                      f"{len(run) - 1} times, down to {last['size']} (lines {first['line']}-{last['line']}): the card was "
                      "not free when the process started, another process holds its memory (another JAX or TensorFlow "
                      "process preallocates 75% of a card by default)",
              fix=_HELD_FIX + "\nexport XLA_PYTHON_CLIENT_PREALLOCATE=false   # for JAX processes that share one GPU: "
                              "allocate on demand (or XLA_PYTHON_CLIENT_MEM_FRACTION=.4 each; JAX's GPU memory allocation page)",
              evidence={**ticket_evidence(first), "first_request": first["size"], "backoffs": len(run) - 1})


def _kept_after_kill(f):
    """The user's words (prose.toml gpu-memory-kept-after-kill): memory still held after the job was
    killed. Killing the main process leaves its children (DataLoader workers, spawned ranks) alive with
    their CUDA contexts; nvidia-smi may list none of them (another PID namespace), fuser finds them.
    The same said more loosely (faq_pytorch gpu-memory-kept-after-exit: after it quit, ended, crashed)
    is PyTorch's FAQ question, answered with its usual cause at severity info: the words describe a
    symptom, the cause is the FAQ's."""
    told = catalogued(f, "gpu-memory-in-use")
    s = next((t for t in told if t.get("id") == "prose:gpu-memory-kept-after-kill"), None)
    if s is not None:
        yield Hit(message=f"GPU memory stayed in use after the job was killed (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): processes it started (DataLoader workers, "
                          "spawned ranks) outlived it and still hold the GPU",
                  fix=_LEFTOVER_FIX, evidence=ticket_evidence(s))
        return
    s = next((t for t in told if t.get("id") in _FAQ_KEPT_AFTER_EXIT), None)
    if s is not None:
        yield Hit(message=f"the user says GPU memory stays in use after the process ended (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): the usual cause (PyTorch FAQ) is Python subprocesses it "
                          "started (DataLoader workers, spawned ranks) that are still alive and hold the GPU",
                  fix=_LEFTOVER_FIX, evidence=told_evidence(s), severity="info")
        return
    yield from _held_said(f, told)


def _held_said(f: FactView, told: list):
    """The user's words (prose.toml): GPU memory already in use before the job did anything, or idle
    notebook kernels, containers or leftover processes holding the GPUs. What the user saw, not what
    nvidia-smi listed: severity info, with the listing that names the processes."""
    s = next((t for t in told if t.get("id") in _HELD_BEFORE_SAID and stated(t)), None)
    if s is not None and s["id"] in _SAID_WITHOUT_GPU and not any(
            t.get("id") in _GPU_OOM for t in f.get("ticket.symptoms") or []):
        s = None   # memory in words that do not name the GPU: only beside an out-of-memory of the GPU
    if s is not None:
        yield Hit(message=f"the user says GPU memory was already in use before the job started (line {s.get('line')}: "
                          f"\"{told_text(s)}\"): another process holds it (a leftover run of theirs, another user's job, "
                          "a process stuck in the driver); nvidia-smi's process table names it",
                  fix=_HELD_FIX, evidence=told_evidence(s), severity="info")
        return
    s = next((t for t in told if t.get("id") == _IDLE_HOLDS_SAID), None)
    if s is not None:
        yield Hit(message=f"the user says idle work holds the GPUs (line {s.get('line')}: \"{told_text(s)}\"): each "
                          "process with a CUDA context (a notebook kernel, a process in an idle container) keeps its GPU "
                          "memory until it ends, so new jobs find the GPUs full",
                  fix=_HELD_FIX, evidence=told_evidence(s), severity="info")


# PyTorch's FAQ, "My GPU memory isn't freed properly" (knowledge/messages/faq_pytorch.toml), in the
# FAQ's word order, with the process's end said first, and of failed or cancelled runs.
_FAQ_KEPT_AFTER_EXIT = frozenset({"faq_pytorch:gpu-memory-kept-after-exit",
                                  "faq_pytorch:gpu-memory-kept-after-exit-said-first",
                                  "faq_pytorch:gpu-memory-kept-after-cancelled-runs"})
# The user's words for memory held by others (knowledge/messages/prose.toml).
_HELD_BEFORE_SAID = frozenset({"prose:gpu-memory-used-before-start-said", "prose:gpu-memory-used-before-start-said-ko"})
_IDLE_HOLDS_SAID = "prose:gpu-held-by-idle-work-said"
# The Korean words say "memory" only; the GPU's out-of-memory beside them says which memory.
_SAID_WITHOUT_GPU = frozenset({"prose:gpu-memory-used-before-start-said-ko"})
_GPU_OOM = frozenset({"torch:cuda-oom", "torch:cuda-oom-v2", "faq_pytorch:cuda-out-of-memory-said"})
_HELD_FIX = ("nvidia-smi --query-compute-apps=pid,used_memory --format=csv   # the processes holding each GPU's memory\n"
             "fuser -v /dev/nvidia*   # every process with a GPU open, with its user\n"
             "# yours (a leftover run, an idle notebook kernel)? end it; someone else's or unkillable: ask the administrators")
_LEFTOVER_FIX = ("fuser -v /dev/nvidia*   # every process that still holds a GPU, with its user (nvidia-smi may list none)\n"
                 "# end your own leftovers by pid (kill PID); next time stop the whole group: kill -- -PGID, or Ctrl-C")


@rule("GPU011", "gpu-memory-in-use", "warning", "GPU memory held by other processes at start", impact=7,
      also={"info": "read from the user's words: the documented usual cause (PyTorch FAQ: subprocesses still alive after the process quit), "
                    "or memory the user says was in use before the job, or held by idle notebook kernels or containers"})
def gpu_memory_in_use(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A GPU on which processes already run, or more than a few percent of the memory is in use,
        before the job starts. In a pasted ticket, torch's out-of-memory message ("CUDA out of
        memory" or ROCm's "HIP out of memory") where over a quarter of the card was held by other
        processes: before torch 2.1 the capacity minus what was free and what this process
        reserved, over half the card (that gap holds this process's own CUDA context too), or over
        a quarter where the user says other processes hold memory there; since 2.1 the processes NVML listed beside "this process" (the largest listed
        pid is taken for the job itself when it runs in a container and is not named "this
        process"), or the capacity minus what was free and what this process had in use. A
        message without NVML's figures (no NVML, Windows, ROCm builds) cannot tell and is left
        alone. torch's cudaMallocAsync form ("Allocation on device 0 would exceed allowed memory",
        with the card, what torch allocated and what was free) where more than a CUDA context was
        outside torch's allocator: an info, since the display or another process may hold it. TensorFlow 1.x's listing of each GPU as it starts ("totalMemory: 10.91GiB freeMemory:
        356.00MiB", before 1.5 on two lines "Total memory:" and "Free memory:") where over half the
        card was in use before TensorFlow allocated anything. vLLM's refusal to start ("Free memory on device ... on startup is less than desired
        GPU memory utilization") says the same in its own words, and so does its "Error in memory
        profiling. Initial free memory X, current free memory Y" where Y is larger (another process
        on the GPU released memory while vLLM profiled; equal figures are left alone), and so does a user who says the
        GPU memory was not released after the job was killed (its children still hold it). A user
        who says it stays in use after the process quit, ended or crashed is answered at severity
        info with the cause PyTorch's FAQ gives ("My GPU memory isn't freed properly": some Python
        subprocesses are still alive), and so is one who says it after saying the process ended ("when
        the program ends, ... the other GPUs are not released") or of failed or cancelled runs. A
        user who says GPU memory was already in use before the job did anything, or that idle
        notebook kernels or containers hold the GPUs, is answered at severity info too: what they
        saw, with the commands that list the processes holding each GPU.

    Why it matters:
        A leftover process from an earlier job (a zombie rank, a stuck DataLoader) or another
        user's job holds memory and compute: the new job runs out of memory or runs slow, and
        benchmarks measure the intruder.

    How to fix:
        nvidia-smi --query-compute-apps=pid,used_memory --format=csv (rocm-smi --showpids or
        amd-smi process on AMD) shows the processes; end your own leftovers, otherwise ask the
        administrators to clean the node (Slurm epilog), or run on a free GPU
        (CUDA_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES).

    References:
        - https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html
        - https://github.com/pytorch/pytorch/blob/001074d25084fdb87a799823e395a50f5ec044d3/c10/cuda/CUDACachingAllocator.cpp
        - https://github.com/pytorch/pytorch/blob/06d47f46385229413d2bf3808fbfc86993f02f7d/docs/source/notes/faq.rst
    """
    frac = knowledge.load("thresholds")["gpu_memory"]["in_use_fraction"]
    pasted = (list(_held_by_others_in_ticket(f, frac)) or list(_vllm_short_at_start(f))
              or list(_vllm_freed_while_profiling(f)) or list(_tf_full_at_start(f)) or list(_xla_backed_off(f))
              or list(_kept_after_kill(f)) or list(_async_oom_outside(f)))
    if pasted:  # a pasted ticket has no GPU listing to read beside it
        yield from pasted
        return
    for g in gpu_list(f):
        procs = g.get("processes") if isinstance(g.get("processes"), list) else []
        used, total = as_int(g.get("memory_used_mib")), as_int(g.get("memory_total_mib"))
        busy = used is not None and total and used > total * frac
        if procs or busy:
            pids = ", ".join(str(p.get("pid")) for p in procs[:8])
            yield Hit(message=(f"{len(procs)} process(es) on the GPU (pid {pids})" if procs else "no process listed")
                      + (f", {used} MiB of {total} MiB in use" if used is not None and total else ""),
                      subject=subject(g), fix="nvidia-smi   # end leftover processes of yours, or ask admins to clean the node",
                      evidence={"processes": procs, "memory_used_mib": used, "memory_total_mib": total})
