"""torch's caching allocator refusing its configuration (PYTORCH_CUDA_ALLOC_CONF and kin): the parser's
refusals (knowledge/messages/torch_allocator.toml) in a paste, or, on a live node, a key in the job's
variable that the parser does not know."""

from __future__ import annotations

import difflib
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text, version_of

SYMBOL = "torch-alloc-conf-invalid"

# Every key the parser accepts: c10/core/AllocatorConfig.cpp @ 065861fba759 (AllocatorConfig::parseArgs)
# and c10/cuda/CUDAAllocatorConfig.cpp @ 01f9ef32eae5 (CUDAAllocatorConfig::parseArgs). The ROCm spellings
# are accepted by CUDA builds too (the source splits the strings so hipify leaves them alone).
KNOWN_KEYS = frozenset((
    "max_split_size_mb", "max_non_split_rounding_mb", "garbage_collection_threshold", "roundup_power2_divisions",
    "backend", "expandable_segments", "release_lock_on_cudamalloc", "release_lock_on_hipmalloc",
    "pinned_use_cuda_host_register", "pinned_use_hip_host_register", "pinned_num_register_threads",
    "pinned_use_background_threads", "pinned_reserve_segment_size_mb", "graph_capture_record_stream_reuse"))

# Keys later than the first release that reads the variable, with the release that brought them: expandable_segments
# landed in April 2023 (pytorch/pytorch PR 99933, 100184), first released in 2.1; 2.0.1 refuses it
# (deepseek-ai/DeepSeek-VL2#103). The other keys' first releases are not tabled yet.
SINCE = {"expandable_segments": "2.1"}

# Keys an older parser read that the parser above no longer knows: roundup_bypass_threshold_mb, beside
# `backend` in the 2.0-era c10/cuda/CUDACachingAllocator.cpp (CachingAllocatorConfig::parseArgs). The
# release that dropped it is not tabled, so the installed torch may still read it: a warning, not an error.
RETIRED = frozenset({"roundup_bypass_threshold_mb"})
# PYTORCH_ALLOC_CONF is the device-neutral name of 2.9 on; the CUDA and HIP names are still read.
VARIABLES = ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF")


def config_keys(value: str) -> List[str]:
    """The keys of an allocator configuration as torch's lexer sees them: split on , : [ ] with spaces
    dropped, a key being the token that starts a pair (a [...] list is one value)."""
    tokens, buf = [], ""
    for ch in value[:4096]:
        if ch in ",:[]":
            if buf:
                tokens.append(buf)
                buf = ""
            tokens.append(ch)
        elif ch != " ":
            buf += ch
    if buf:
        tokens.append(buf)
    keys, depth, expect_key = [], 0, True
    for tok in tokens:
        if tok == "[":
            depth += 1
        elif tok == "]":
            depth = max(0, depth - 1)
        elif depth:
            continue
        elif tok == ",":
            expect_key = True
        elif tok == ":":
            expect_key = False
        elif expect_key:
            keys.append(tok)
            expect_key = False
    return keys


def nearest_key(key: str) -> Optional[str]:
    if "=" in key:  # "malloc_fraction=0.5": a pair written with '=' is one token to the lexer
        key = key.split("=", 1)[0]
    near = difflib.get_close_matches(key.lower(), sorted(KNOWN_KEYS), n=1, cutoff=0.75)
    return near[0] if near else None


def _older_than(f: FactView, release: str) -> bool:
    v = version_of(str(f.get("torch.version")).split("+")[0]) if f.get("torch.version") is not None else None
    return v is not None and v < version_of(release)


def _fix(bad: Optional[str], near: Optional[str], var: str = "PYTORCH_CUDA_ALLOC_CONF") -> str:
    lines = ['env | grep -E "^PYTORCH_(CUDA_|HIP_)?ALLOC_CONF="   # the setting torch parsed: key:value pairs joined by commas']
    if bad and near and bad != near and "=" not in bad and "'" not in bad and "/" not in bad:
        lines.append(f'export {var}="${{{var}//{bad}/{near}}}"   # the key spelled as torch knows it')
    lines += ['python -c "import torch; print(torch.__version__)"   # expandable_segments needs torch 2.1 or newer; older releases refuse it',
              "unset PYTORCH_ALLOC_CONF PYTORCH_CUDA_ALLOC_CONF PYTORCH_HIP_ALLOC_CONF   # or run with the allocator's defaults"]
    return "\n".join(lines)


@rule("ENV062", SYMBOL, "error", "torch's allocator refused PYTORCH_CUDA_ALLOC_CONF", impact=6,
      also={"warning": "a key only an older parser read (roundup_bypass_threshold_mb): this torch may still read it"})
def torch_alloc_conf_invalid(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket: torch's caching allocator refusing its configuration when CUDA is first
        initialised: "Unrecognized key '<key>' in CUDA allocator config." (torch 2.9 on),
        "Unrecognized CachingAllocator option: <key>" (older releases), a boolean key given
        something other than True/False, max_split_size_mb below 20, a garbage collection
        threshold outside (0, 1), an unknown backend, a roundup that is not a power of two, or a
        configuration that is not key:value pairs. On a live node (or its snapshot): a key in
        PYTORCH_ALLOC_CONF, PYTORCH_CUDA_ALLOC_CONF or PYTORCH_HIP_ALLOC_CONF that the parser does
        not know (the finding names the nearest key it does know), or expandable_segments where the
        installed torch is older than 2.1, the first release that reads it; a warning for a key
        only an older parser read (roundup_bypass_threshold_mb), which the installed torch may
        still read.

    Why it matters:
        The refusal is raised by torch._C._cuda_init(): the program stops before it touches a GPU,
        on every node, until the variable is corrected. It is not a fault of the GPU or driver.

    How to fix:
        Print the variable, correct the key (expandable_segments, with an s; garbage_collection_threshold;
        values True/False with capitals), or unset it. expandable_segments came in torch 2.1:
        older releases refuse it.

    References:
        - https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf
        - https://github.com/pytorch/pytorch/blob/065861fba7598880aa3216822742a1172d0a197c/c10/core/AllocatorConfig.cpp
        - https://github.com/pytorch/pytorch/blob/01f9ef32eae5ef513002dd44902c23cbe6be3aae/c10/cuda/CUDAAllocatorConfig.cpp
        - https://github.com/pytorch/pytorch/issues/123505 (expandable_segments refused by an older torch)
    """
    told = catalogued(f, SYMBOL)
    if told:
        s = told[0]
        bad = s.get("option")
        near = nearest_key(bad) if bad and s.get("key") in ("unrecognized-key", "unrecognized-option") else None
        hint = f"; the nearest key torch knows is '{near}'" if near and near != bad else ""
        if near == bad:
            hint = "; torch 2.1 and newer know it: this torch is older" if bad == "expandable_segments" else \
                "; the key exists in newer releases: this torch is older"
        yield Hit(message=f"torch refused its allocator configuration (line {s.get('line')}: \"{told_text(s)}\"){hint}: "
                          "CUDA was never initialised, set PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) right",
                  fix=_fix(bad, near), evidence=told_evidence(s))
        return
    env = f["env.vars"]
    for name in VARIABLES:
        value = env.get(name)
        if not isinstance(value, str) or not value.strip():
            continue
        unknown = [k for k in config_keys(value) if k not in KNOWN_KEYS | RETIRED]
        retired = [k for k in config_keys(value) if k in RETIRED]
        too_new = [k for k in config_keys(value) if k in SINCE and _older_than(f, SINCE[k])]
        if too_new and not unknown:
            yield Hit(message=f"{name}={value[:120]} sets {too_new[0]}, which torch reads from {SINCE[too_new[0]]} on; "
                              f"this torch is {f.get('torch.version')} and will refuse it ('Unrecognized CachingAllocator option')",
                      fix=_fix(None, None, name), evidence={f"env.{name}": value, "torch.version": f.get("torch.version")})
            return
        if retired and not unknown:
            yield Hit(message=f"{name}={value[:120]} sets {retired[0]}, a key of torch's older allocator parser that "
                              f"recent releases no longer know and refuse ('Unrecognized key'); this torch is "
                              f"{f.get('torch.version') or 'of unknown version'}",
                      fix=_fix(None, None, name), severity="warning",
                      evidence={f"env.{name}": value, "retired_keys": retired, "torch.version": f.get("torch.version")})
            return
        if not unknown:
            continue
        near = nearest_key(unknown[0])
        hint = f" (did you mean '{near}'?)" if near else ""
        yield Hit(message=f"{name}={value[:120]} holds '{unknown[0]}'{hint}, a key torch's allocator parser does not know: "
                          "torch will refuse to initialise CUDA ('Unrecognized key')",
                  fix=_fix(unknown[0], near, name),
                  evidence={f"env.{name}": value, "unknown_keys": unknown})
        return
