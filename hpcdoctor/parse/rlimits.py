"""Resource-limit listings a user pastes: the shells' ``ulimit -a`` and ``limit`` and the kernel's
/proc/PID/limits, read into the limits the live check reads with getrlimit(2): RLIMIT_NPROC,
RLIMIT_STACK, RLIMIT_AS, RLIMIT_MEMLOCK and RLIMIT_NOFILE, sizes in bytes, counts as counts, None
for unlimited. A shell's listing shows one value (the soft limit unless -H was given, which the
paste does not say), so only "soft" is set from it; /proc/PID/limits shows both.

Each line's words and units are the emitters' own, read on 2026-11-28:
- GNU bash builtins/ulimit.def limits[] (3.2 .. 5.2: the descriptions of -l -n -s -u -v did not
  change; printone prints "%-20s %16s" of the description and "(units, -X) ", then the value
  divided by the block factor: 1024 for kbytes, 1 for no unit); bash 5.2.15 on the development VM;
- zsh 5.9 Src/Builtins/rlimits.c (ulimit -a: "-X: description (unit)" then the value; limit:
  "%-16s" of the name, then memory as NkB or NMB, counts plain); zsh 5.9 on the development VM;
- dash 0.5.12 src/miscbltin.c limits[] ("%-20s " of "stack(kbytes)", "locked memory(kbytes)",
  "process", "nofiles", "vmemory(kbytes)", then the value divided by the factor); dash 0.5.12 on the VM;
- tcsh 6.24 sh.func.c limits[] (limit: the name, then "N kbytes" for memory, a count plain); on the VM;
- Linux fs/proc/base.c proc_pid_limits / lnames[] ("Max processes", "Max stack size", "Max locked
  memory", "Max address space", "Max open files"; soft, hard, units; bytes for sizes).
ksh93's and busybox ash's listings are not read (not checked against their sources).

START_SHELL and START_PROC are the lines that start such a listing in a paste (recognise.py): any
line of bash's or zsh's ulimit -a (its "(unit, -X) value" or "-X: description (unit) value" is
their own), and for dash's, the csh-style limit and /proc/PID/limits, only the lines of the five
limits read here (their words alone are too common) or /proc's heading.

Bounded and linear: one pass over at most MAX_LINES lines, one anchored match per line."""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

MAX_LINES = 4096
KIB = 1024

_VALUE = r"(?P<val>\d{1,20}|unlimited)"

# bash: "max user processes              (-u) 2000", "max locked memory       (kbytes, -l) 64"
_BASH = re.compile(r"^[ \t]{0,4}(?P<desc>[A-Za-z][A-Za-z -]{1,40}?)[ \t]+\((?:(?P<unit>[a-z0-9 ]{1,16}), )?-(?P<opt>[A-Za-z])\)[ \t]{0,40}"
                   + _VALUE + r"[ \t]*$")
_BASH_KNOWN = {("max user processes", "u", None): ("nproc", 1), ("stack size", "s", "kbytes"): ("stack", KIB),
               ("max locked memory", "l", "kbytes"): ("memlock", KIB), ("virtual memory", "v", "kbytes"): ("as", KIB),
               ("open files", "n", None): ("nofile", 1)}

# zsh ulimit -a: "-u: processes                       2000", "-l: locked-in-memory size (kbytes)  64"
_ZSH = re.compile(r"^[ \t]{0,4}-(?P<opt>[A-Za-z]): (?P<desc>[a-z][a-z -]{1,40}?)(?: \((?P<unit>[a-z]{1,12})\))?[ \t]{1,40}"
                  + _VALUE + r"[ \t]*$")
_ZSH_KNOWN = {("u", "processes", None): ("nproc", 1), ("s", "stack size", "kbytes"): ("stack", KIB),
              ("l", "locked-in-memory size", "kbytes"): ("memlock", KIB), ("v", "address space", "kbytes"): ("as", KIB),
              ("n", "file descriptors", None): ("nofile", 1)}

# dash ulimit -a: "process              2000", "locked memory(kbytes) 64" ("%-20s " of the name)
_DASH = re.compile(r"^(?P<name>stack\(kbytes\)|locked memory\(kbytes\)|process|nofiles|vmemory\(kbytes\))(?P<pad>[ \t]{1,40})"
                   + _VALUE + r"[ \t]*$")
_DASH_KNOWN = {"stack(kbytes)": ("stack", KIB), "locked memory(kbytes)": ("memlock", KIB), "process": ("nproc", 1),
               "nofiles": ("nofile", 1), "vmemory(kbytes)": ("as", KIB)}

# zsh's and tcsh's limit: "maxproc         2000", "stacksize       8MB" (zsh), "stacksize    8192 kbytes" (tcsh)
_LIMIT = re.compile(r"^(?P<name>maxproc|descriptors|stacksize|memorylocked|addressspace|vmemoryuse)[ \t]{1,40}"
                    r"(?:(?P<num>\d{1,20})(?P<unit>MB|kB| kbytes| megabytes)?|(?P<unl>unlimited))[ \t]*$")
_LIMIT_KNOWN = {"maxproc": ("nproc", False), "descriptors": ("nofile", False), "stacksize": ("stack", True),
                "memorylocked": ("memlock", True), "addressspace": ("as", True), "vmemoryuse": ("as", True)}
_LIMIT_UNIT = {"kB": KIB, " kbytes": KIB, "MB": KIB * KIB, " megabytes": KIB * KIB}

# /proc/PID/limits: "Max processes             2000                 2000                 processes"
_PROC = re.compile(r"^[ \t]{0,4}Max (?P<name>processes|stack size|locked memory|address space|open files)[ \t]{2,40}"
                   r"(?P<soft>\d{1,20}|unlimited)[ \t]{1,40}(?P<hard>\d{1,20}|unlimited)[ \t]{1,40}(?P<unit>[a-z]{1,10})[ \t]*$")
_PROC_KNOWN = {("processes", "processes"): "nproc", ("stack size", "bytes"): "stack", ("locked memory", "bytes"): "memlock",
               ("address space", "bytes"): "as", ("open files", "files"): "nofile"}
PROC_HEADER = re.compile(r"^[ \t]{0,4}Limit[ \t]{2,40}Soft Limit[ \t]{2,40}Hard Limit[ \t]{2,40}Units[ \t]*$")


_NUM = r"(?:\d{1,20}|unlimited)"
START_SHELL = re.compile(
    r"^(?:[ \t]{0,4}[A-Za-z][A-Za-z -]{1,40}[ \t]+\((?:(?:blocks|kbytes|512 bytes|bytes|seconds|microseconds), )?-[A-Za-z]\)[ \t]{0,40}"
    + _NUM + r"|[ \t]{0,4}-(?:[A-Za-z]|N \d{1,2}): [a-z][a-z -]{1,40}(?: \((?:blocks|kbytes|seconds|microseconds)\))?[ \t]{1,40}" + _NUM
    # dash pads each name to 20 columns and a space
    + r"|(?:stack\(kbytes\)[ \t]{7,40}|locked memory\(kbytes\)[ \t]{1,40}|process[ \t]{13,40}|nofiles[ \t]{13,40}|vmemory\(kbytes\)[ \t]{5,40})"
    + _NUM
    + r"|(?:maxproc|descriptors)[ \t]{1,40}" + _NUM
    + r"|(?:stacksize|memorylocked|addressspace|vmemoryuse)[ \t]{1,40}(?:\d{1,20}(?:MB|kB| kbytes| megabytes)|unlimited)"
    r")[ \t]*$")
START_PROC = re.compile(r"^[ \t]{0,4}(?:Limit[ \t]{2,40}Soft Limit[ \t]{2,40}Hard Limit[ \t]{2,40}Units|"
                        r"Max (?:processes|stack size|locked memory|address space|open files)[ \t]{2,40}" + _NUM
                        + r"[ \t]{1,40}" + _NUM + r"[ \t]{1,40}[a-z]{1,10})[ \t]*$")
SHELL_ARGV = ["sh", "-c", "ulimit -a"]
PROC_ARGV = ["cat", "/proc/self/limits"]


def _scaled(val: str, factor: int) -> Optional[int]:
    return None if val == "unlimited" else int(val) * factor


def read_line(line: str) -> Optional[Tuple[str, Dict[str, Optional[int]], str]]:
    """(resource, {"soft": bytes or count or None for unlimited[, "hard": ...]}, the form) of one
    listing line, or None for any other line (a limit these rules do not read included)."""
    m = _BASH.match(line)
    if m:
        known = _BASH_KNOWN.get((m["desc"].strip(), m["opt"], m["unit"]))
        return (known[0], {"soft": _scaled(m["val"], known[1])}, "bash ulimit -a") if known else None
    m = _ZSH.match(line)
    if m:
        known = _ZSH_KNOWN.get((m["opt"], m["desc"].strip(), m["unit"]))
        return (known[0], {"soft": _scaled(m["val"], known[1])}, "zsh ulimit -a") if known else None
    m = _DASH.match(line)
    if m:
        if len(m["name"]) + len(m["pad"].expandtabs()) < 21:
            return None  # dash pads the name to 20 columns and a space: "process 5" in prose is not its line
        known = _DASH_KNOWN[m["name"]]
        return known[0], {"soft": _scaled(m["val"], known[1])}, "dash ulimit -a"
    m = _LIMIT.match(line)
    if m:
        resource, memory = _LIMIT_KNOWN[m["name"]]
        if m["unl"]:
            return resource, {"soft": None}, "csh-style limit"
        if memory != bool(m["unit"]):
            return None  # a size without its unit, or a count with one: not the shells' own line
        return resource, {"soft": int(m["num"]) * (_LIMIT_UNIT[m["unit"]] if memory else 1)}, "csh-style limit"
    m = _PROC.match(line)
    if m:
        resource = _PROC_KNOWN.get((m["name"], m["unit"]))
        if resource:
            return resource, {"soft": _scaled(m["soft"], 1), "hard": _scaled(m["hard"], 1)}, "/proc/PID/limits"
    return None


def parse_limits(text: str) -> Dict[str, Dict[str, object]]:
    """Each resource read from the listing lines of ``text``: {"soft": ..., ["hard": ...,] "line": n,
    "form": ...}. A resource listed twice with different values (a soft and a hard listing, two
    machines) is left out: which one the job ran under is not known."""
    out: Dict[str, Dict[str, object]] = {}
    differ = set()
    for n, line in enumerate(text.splitlines()[:MAX_LINES], 1):
        if len(line) > 200:
            continue
        got = read_line(line)
        if got is None:
            continue
        resource, values, form = got
        seen = out.get(resource)
        if seen is None:
            out[resource] = dict(values, line=n, form=form)
        elif any(k in seen and seen[k] != v for k, v in values.items()):
            differ.add(resource)
        else:
            seen.update(values)   # the hard limit /proc/PID/limits adds to a shell's soft one
    for resource in differ:
        out.pop(resource, None)
    return out
