"""Builds made at run time and kept on disk that outlive the run that made them: a torch C++/CUDA
extension's lock file left by a build that was killed (every later load() waits on it forever), and
a kernel binary in PyCUDA's compiler cache that the driver no longer loads. Read from the programs'
own frames and errors (knowledge/messages/jit_caches.toml) and, as the usual cause, from a user's
words that load() hangs (prose.toml)."""

from __future__ import annotations

import shlex
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView, MissingFact
from hpcdoctor.rules._common import facts_or_ticket, first_symptom, stated, told_evidence, told_text

LOCK = "torch-extension-build-lock-stale"
CACHE = "jit-kernel-cache-stale"
_ROOT = '"${TORCH_EXTENSIONS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/torch_extensions}"'
# One threshold for what counts as stale, on a node and in a paste's fix (knowledge/thresholds.toml).
_STALE_S = float(knowledge.load("thresholds")["torch_extensions"]["stale_lock_min_age_s"])
_NODE_LOCAL = ("export TORCH_EXTENSIONS_DIR=/tmp/$USER/torch_extensions   # a node-local root for jobs: concurrent "
               "jobs on a shared home no longer wait on each other's locks")
_LOCK_FIX = (f"find {_ROOT} -maxdepth 3 -name lock -ls   # a lock file per extension being built; one "
             "left by a build that was killed (Ctrl-C, scancel, a time limit) blocks every later load()\n"
             "pgrep -u \"$USER\" -a 'ninja|nvcc|c\\+\\+'   # no build of yours running (on any node sharing the "
             "directory): the lock is stale\n"
             f"find {_ROOT} -maxdepth 3 -name lock -mmin +{_STALE_S / 60:.0f} -print -delete   # the locks older than a "
             f"build takes ({_STALE_S / 60:.0f} min), once no build of yours runs; the next load() rebuilds or loads that "
             "extension\n"
             "export TORCH_EXTENSIONS_DIR=/tmp/$USER/torch_extensions   # a node-local root for jobs, so concurrent "
             "jobs on a shared home do not wait on each other's locks")
_MEGATRON_FIX = ("ls -l megatron/fused_kernels/build/lock   # in the Megatron checkout (forks: their fused_kernels/build); "
                 "torch's cpp_extension holds it while one build runs\n"
                 "pgrep -u \"$USER\" -a 'ninja|nvcc|c\\+\\+'   # no build of yours running (on any node sharing the "
                 "checkout): the lock is stale\n"
                 "rm megatron/fused_kernels/build/lock   # or rm -rf megatron/fused_kernels/build: the next run rebuilds "
                 "the kernels")
_CACHE_FIX = ("PYCUDA_DISABLE_CACHE=1 python your_script.py   # runs without the cache: working now confirms a stale "
              "or damaged cache entry\n"
              "rm -rf \"${PYCUDA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pycuda/compiler-cache-v1}\"   # PyCUDA "
              "recompiles each kernel once on the next run\n"
              "nvcc --version; nvidia-smi   # still failing without the cache: an nvcc newer than the driver "
              "builds binaries it cannot load")


@rule("SW048", LOCK, "warning", "a torch extension build waits on a lock file left by a build that was killed",
      impact=6, also={"info": "the user's words that load() hangs, beside torch's cpp_extension: the usual cause"})
def torch_extension_build_lock_stale(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted traceback, a process stopped (Ctrl-C, a time limit) inside
        torch/utils/file_baton.py's wait: it was waiting for the lock file of a build of the same
        extension. As info, a paste that loads an extension with torch.utils.cpp_extension (its
        import, or its "Using ... as PyTorch extensions root..." line) where the user says the
        program stops or hangs at load(): a stale lock is the usual cause, and the listed lock
        files confirm it. As a warning, a paste where the user names the lock and the wait (a
        load or import that hangs on a stale lock, torch's FileBaton spinning) beside a torch
        extension build; "import hangs" alone is not enough. On a node, the lock files under the
        extension roots (checks/torch_extensions.py) that no process of the user holds open and
        that are older than a build takes (knowledge/thresholds.toml [torch_extensions]): the
        fix removes each one by its path.

    Why it matters:
        load() and load_inline() build an extension under TORCH_EXTENSIONS_DIR (default
        ~/.cache/torch_extensions/py<XY>_<cuda>/<name>) holding a file named lock, which they
        remove when the build ends. A build killed part-way leaves the lock, and every later
        load() of that extension waits for it without a message, forever. On a home shared by
        the cluster's nodes one interrupted job blocks every later job that builds the same
        extension.

    How to fix:
        Make sure no build of yours is running, remove that extension's lock file (or its whole
        build directory), and give jobs a node-local TORCH_EXTENSIONS_DIR.

    References:
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/cpp_extension.py (_jit_compile: FileBaton(build_directory/lock); _get_build_directory)
        - https://github.com/pytorch/pytorch/blob/v2.13.0/torch/utils/file_baton.py
        - https://github.com/pytorch/pytorch/issues/59146
    """
    # the node's lock files where they were read; a paste records none, and its own lines are the evidence
    yield from facts_or_ticket(lambda: list(_stale_locks_on_node(f)), _lock_in_ticket(f))


def _stale_locks_on_node(f: FactView) -> Iterator[Hit]:
    """The lock files checks/torch_extensions.py found under the extension roots: no process of the
    user on this node holds one open, and it is older than a build takes (thresholds.toml)."""
    locks = f["torch_extensions.locks"]
    if not isinstance(locks, list):
        raise MissingFact("torch_extensions.locks", "not a list of lock files")
    stale = [x for x in locks if isinstance(x, dict) and x.get("held") is False
             and isinstance(x.get("age_s"), (int, float)) and x["age_s"] >= _STALE_S]
    if not stale:
        return
    stale.sort(key=lambda x: -x["age_s"])
    names = ", ".join(x["path"] for x in stale[:4]) + (f" and {len(stale) - 4} more" if len(stale) > 4 else "")
    fix = _rm_locks_fix("the locks below are", [f"rm {shlex.quote(x['path'])}   # left {_age(x['age_s'])} ago; load() "
                                                 "rebuilds or loads the extension next time" for x in stale[:8]])
    yield Hit(message=f"{len(stale)} torch extension build lock(s) that no process on this node holds, the oldest "
                      f"{_age(stale[0]['age_s'])} old ({names}): a build that was killed left them, and every "
                      "load() of those extensions waits on them forever without a message",
              fix=fix,
              evidence={"torch_extensions.locks": [{k: x.get(k) for k in ("path", "age_s", "held")} for x in stale[:8]],
                        "torch_extensions.roots_found": f.get("torch_extensions.roots_found"), "threshold_age_s": _STALE_S})


def _rm_locks_fix(which: str, removals: list) -> str:
    """The fix that removes named lock files: first that no build holds them, then each rm, then a
    node-local root so jobs on a shared home stop waiting on each other."""
    return "\n".join(["pgrep -u \"$USER\" -a 'ninja|nvcc|cc1plus'   # no build of yours running (also on the other "
                      f"nodes sharing this home): {which} stale", *removals, _NODE_LOCAL])


def _age(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min"


def _lock_in_ticket(f: FactView) -> Iterator[Hit]:
    root = first_symptom(f, "jit_caches:torch-extensions-root")
    where = f" under {root['root']}" if root and root.get("root") else ""
    waited = first_symptom(f, "jit_caches:torch-file-baton-wait-frame") or first_symptom(f, "jit_caches:torch-file-baton-waited")
    if waited:
        yield Hit(message=f"the process was waiting on a torch extension's build lock (line {waited.get('line')}: "
                          f"\"{told_text(waited)}\"){where}: with no other build running, it is a lock file left by a "
                          "build that was killed, and load() waits on it forever", fix=_LOCK_FIX,
                  evidence=told_evidence(waited))
        return
    exists = first_symptom(f, "jit_caches:nvdiffrast-lock-file-exists")
    if exists and exists.get("lock"):
        lock = str(exists["lock"])
        yield Hit(message=f"the extension's build lock {lock} was there before load() started (line {exists.get('line')}): "
                          "with no build of it running, a build that was killed left it, and load() waits on it forever",
                  fix=_rm_locks_fix("the lock is", [f"rm {shlex.quote(lock)}   # the next load() builds or loads the extension"]),
                  evidence={**told_evidence(exists), "lock": lock})
        return
    baton = first_symptom(f, "prose:file-baton-wait-said")
    stale = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "prose:stale-lock-hang-said" and stated(t)), None)
    build = baton or root or first_symptom(f, "jit_caches:torch-cpp-extension-load-import", "jit_caches:torch-cpp-extension-load-call")
    said = stale or baton
    if said and build:
        # the user names the lock and the wait, beside torch's extension build: the cause is stated
        yield Hit(message=f"the paste names a torch extension build lock that a load waits on (line {said.get('line')}: "
                          f"\"{told_text(said)}\"){where}: a lock file left by a build that was killed (an OOM kill, a "
                          "pids limit, Ctrl-C, a time limit), which every later load() of that extension waits on forever",
                  fix=_LOCK_FIX, evidence={**told_evidence(said), "build": build.get("id")})
        return
    fused = next((t for t in f.get("ticket.symptoms") or []
                  if t.get("id") == "prose:fused-kernels-build-hangs-said" and stated(t)), None)
    if fused:
        # Megatron builds in its own tree (cpp_extension.load(build_directory=...)), not TORCH_EXTENSIONS_DIR
        yield Hit(message=f"a run that stops while Megatron compiles its fused kernels (line {fused.get('line')}: "
                          f"\"{told_text(fused)}\"): Megatron builds them with torch's cpp_extension in "
                          "megatron/fused_kernels/build, and a lock file left there by a build that was killed makes "
                          "every later run wait; the user's words alone cannot show the lock, ls does",
                  severity="info", fix=_MEGATRON_FIX, evidence=told_evidence(fused))
        return
    uses = root or first_symptom(f, "jit_caches:torch-cpp-extension-load-import")
    said = next((t for t in f.get("ticket.symptoms") or []
                 if t.get("id") == "prose:extension-load-hangs-said" and stated(t)), None)
    if uses and said:
        yield Hit(message=f"a torch C++ extension's load() that stops without an error (line {said.get('line')}: "
                          f"\"{told_text(said)}\"){where}: the usual cause (torch's cpp_extension source) is a lock file "
                          "left in the extension's build directory by a build that was killed; find lists it",
                  severity="info", fix=_LOCK_FIX, evidence=told_evidence(said))


def _load_failure_after(f: FactView, frame: dict) -> Optional[dict]:
    """The driver's refusal of the binary, on the 12 lines after SourceModule's first load frame (a
    paste may hold the same traceback twice, the second with the error's words)."""
    at = frame.get("line")
    return next((s for s in f.get("ticket.symptoms") or []
                 if s.get("id") == "jit_caches:pycuda-module-load-failed" and isinstance(at, int)
                 and isinstance(s.get("line"), int) and at <= s["line"] <= at + 12), None)


@rule("SW049", CACHE, "warning", "PyCUDA's compiled kernel no longer loads: a stale compiler cache entry", impact=5)
def jit_kernel_cache_stale(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted traceback, PyCUDA's SourceModule failing where it loads the kernel binary it
        compiled or took from its compiler cache ("self.module = module_from_buffer(cubin)"),
        followed by the driver's refusal ("cuModuleLoadDataEx failed: ...", pycuda's
        LogicError).

    Why it matters:
        PyCUDA keeps each compiled cubin under ~/.cache/pycuda/compiler-cache-v1 (or
        $PYCUDA_CACHE_DIR), keyed by the source, the nvcc options and nvcc's version only. An
        entry written by a process that was killed mid-write, or built for a driver that has
        since changed, is loaded again on every run, and the same example that worked weeks
        before now fails, on every machine sharing the home directory.

    How to fix:
        Run once with PYCUDA_DISABLE_CACHE=1: if that works, remove the compiler cache
        directory (PyCUDA rebuilds each kernel once). If it still fails, the binary itself does
        not load: compare nvcc's version with the driver's.

    References:
        - https://github.com/inducer/pycuda/blob/main/pycuda/compiler.py (compile: PYCUDA_CACHE_DIR, PYCUDA_DISABLE_CACHE, compiler-cache-v1)
        - https://documen.tician.de/pycuda/driver.html (SourceModule, cache_dir)
        - https://github.com/inducer/pycuda/issues/231
    """
    frame = first_symptom(f, "jit_caches:pycuda-source-module-load-frame")
    failed = _load_failure_after(f, frame) if frame else None
    if not failed:
        return
    error = f" ({failed['error'].strip()})" if failed.get("error") else ""
    yield Hit(message=f"PyCUDA could not load the kernel it compiled or took from its compiler cache{error} (line "
                      f"{failed.get('line')}: \"{told_text(failed)}\"): a cached binary that was cut short or built for "
                      "another driver is the usual cause; PYCUDA_DISABLE_CACHE=1 confirms it",
              fix=_CACHE_FIX, evidence=told_evidence(failed))
