"""How many parallel compiler jobs a source build can afford on this node, for the fix of a build
whose compiler was killed for memory (host-memory-oom-killed): torch's cpp_extension and most
setup.py builds run ninja -j MAX_JOBS, and as many jobs as CPUs when it is unset."""

from __future__ import annotations

import re
from typing import Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.facts import FactView

_JOBS = knowledge.load("thresholds")["build_jobs"]
# pip's own lines that name the package it was building (knowledge/messages/pip.toml).
_PIP_NAMES = ("pip:failed-building-wheel", "pip:failed-to-build", "pip:could-not-build-wheels")
# flash-attn's setup.py (Dao-AILab/flash-attention @ 00291362dbd8c9ab3594e80c2f8faab8a478b9e1,
# CachedWheelsCommand) first fetches a prebuilt wheel from its GitHub releases, named for torch's CUDA,
# torch, Python and C++ ABI, and compiles only when none is there ("Precompiled wheel not found.
# Building from source...") or FLASH_ATTENTION_FORCE_BUILD=TRUE: a paste that compiled it found none
# for that exact stack, and a release matching another stack is the way round the compile.
_PREBUILT = {"flash-attn": "https://github.com/Dao-AILab/flash-attention/releases"}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def max_jobs(f: FactView) -> Tuple[int, Optional[str]]:
    """(jobs, how it was found): one job per gb_per_job of the node's memory, at most its CPUs,
    at least 1; the fallback (and None) where the node's memory is not known."""
    mem, cpus = f.get("memory.total_bytes"), f.get("cpu.logical_cpus")
    if not isinstance(mem, int) or mem <= 0:
        return _JOBS["fallback_jobs"], None
    jobs = max(1, mem // (_JOBS["gb_per_job"] * 2**30))
    why = f"one job per {_JOBS['gb_per_job']} GB of this node's {mem / 2**30:.0f} GB"
    if isinstance(cpus, int) and 0 < cpus < jobs:
        jobs, why = cpus, why + f", at most its {cpus} CPUs"
    return jobs, why


def built_package(f: FactView) -> Optional[str]:
    """The package pip was building when it failed, where pip's own line names one."""
    for s in f.get("ticket.symptoms") or []:
        if s.get("id") in _PIP_NAMES:
            name = str(s.get("package") or s.get("packages") or "").split(",")[0].strip()
            if _NAME.match(name):
                return name.lower().replace("_", "-")
    return None


def build_fix(f: FactView) -> str:
    """The command that reruns the build with fewer compiler jobs, and the prebuilt wheel where the
    project publishes one."""
    jobs, why = max_jobs(f)
    note = why or (f"flash-attn's README gives {_JOBS['fallback_jobs']} for hosts under 96 GB of RAM; with more, "
                   f"one job per {_JOBS['gb_per_job']} GB (free -g), at most nproc")
    pkg = built_package(f)
    if pkg in _PREBUILT:
        fix = f"MAX_JOBS={jobs} pip install {pkg} --no-build-isolation   # {note}"
    else:
        # pip's name for a local build (apex from its checkout) need not be what PyPI serves under it
        what = f"the build of {pkg}" if pkg else "the build"
        fix = f"export MAX_JOBS={jobs}   # {note}; then rerun {what} (torch's cpp_extension runs ninja -j MAX_JOBS)"
    if pkg in _PREBUILT:
        fix += (f"\n# or install a prebuilt wheel matching your torch, CUDA and Python from {_PREBUILT[pkg]} "
                "(pip install <wheel URL>): nothing to compile")
    return fix
