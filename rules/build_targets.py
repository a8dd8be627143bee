"""A build that passes x86 compiler options to a compiler for another architecture
(knowledge/messages/target_options.toml): -mavx, -msse4.2, -m64 or -march=x86-64 written into a
Makefile or CMake cache for x86 and used on an aarch64 (Jetson, Graviton, Grace) or ppc64le node."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "x86-build-flags-on-arm"

# GCC's x86-only -m options and x86 processor names, with their sources (knowledge/x86_options.toml).
_X86 = knowledge.load("x86_options")
_X86_ISA = frozenset(_X86["isa_options"]["names"])
_X86_FAMILY = [re.compile(p) for p in _X86["option_families"]["patterns"]]
_X86_CPU = frozenset(_X86["processors"]["names"])
# What says the machine is not x86: the user's or a tool's words for it (prose.toml), or the target
# Clang itself names.
_NOT_X86 = ("prose:jetson-said", "prose:aarch64-said", "prose:arm64-said", "prose:ppc64le-said", "prose:arm-core-said")

_FIX = ("uname -m   # aarch64 or ppc64le: x86 options (-mavx, -msse*, -m64, -march=x86-64) cannot be used here\n"
        "grep -rnE -- '-m(avx|sse|fma|64|arch=x86)' Makefile* make.inc* CMakeCache.txt 2>/dev/null | head   "
        "# where the build sets them\n"
        "# choose the project's generic or Arm target (its TARGET=, -DTARGET= or configure option), or replace them "
        "with -march=native / -mcpu=native for this machine's own ISA; then make clean and rebuild")


def _x86_option(option: str) -> bool:
    name = option[2:] if option.startswith("-m") else option
    name = name[3:] if name.startswith("no-") else name
    return name in _X86_ISA or any(p.match(name) for p in _X86_FAMILY)


def _refused(s: dict) -> Optional[str]:
    """The x86 option or CPU name a refusal names, or None where it names none of x86's."""
    option, value = str(s.get("option") or ""), str(s.get("value") or "")
    if option and _x86_option(option):
        return option
    if value and value.lower() in _X86_CPU:
        return f"-m{s.get('flag') or 'arch'}={value}"
    return None


@rule("SW074", SYMBOL, "error", "x86 compiler options given to a compiler for Arm or POWER", impact=5,
      also={"info": "an x86 option refused and nothing in the paste names the machine: another target, an older compiler, "
                    "or a build's harmless probe of the flag"})
def x86_build_flags_on_arm(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, a compiler refusing an option that only x86 has: GCC's
        "unrecognized command-line option '-mavx'" (or "command line option" before GCC 8) for any
        of x86's own -m options (gcc/config/i386/i386.opt: -m64, -m32, -msse*, -mavx*, -mfma,
        -mbmi2, -mf16c, -mamx-*, -mfpmath=sse ...), an Arm GCC's "unknown value 'x86-64' for
        '-march'" (and -mcpu, -mtune, for any x86 processor name), and Clang's "unsupported option
        '-mavx' for target 'aarch64-...'" and "unsupported argument 'x86-64' to option '-march='".
        An error where the paste names a non-x86 machine (Clang's target triple, aarch64, arm64,
        ppc64le, a Jetson, an Arm Cortex core); info where it names none, since a compiler older
        than the option (gcc 4.4 and -mavx2) refuses it the same way, and a build that probes
        whether the compiler takes the flag prints the refusal and goes on.

    Why it matters:
        Makefiles and CMake caches written for x86 (a TARGET=AVX default, -march=x86-64 or
        -mavx hard-coded, a copied CMakeCache.txt) stop the build on an Arm or POWER node at the
        first compile; nothing in the code is wrong.

    How to fix:
        Select the project's generic or Arm target, or replace the x86 flags with -mcpu=native
        (-march=native) for the machine in hand, then clean and rebuild.

    References:
        - https://github.com/gcc-mirror/gcc/blob/master/gcc/config/i386/i386.opt (x86's -m options)
        - https://gcc.gnu.org/onlinedocs/gcc/AArch64-Options.html (-march, -mcpu, -mtune on aarch64)
        - https://clang.llvm.org/docs/ClangCommandLineReference.html (target-specific options)
        - https://github.com/giaf/hpipm/issues/91 (an AVX target selected on a Jetson TX2)
    """
    told = [(s, _refused(s)) for s in catalogued(f, SYMBOL)]
    told = [(s, opt) for s, opt in told if opt]
    if not told:
        return
    s, option = told[0]
    target = str(s.get("target") or "")
    named = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") in _NOT_X86), None)
    machine = (f"for target {target}" if target and not target.startswith(("x86", "i386", "i686"))
               else f"on the machine the paste names (line {named.get('line')}: \"{told_text(named)}\")" if named else "")
    if machine:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {option} is an x86 option and the compiler runs "
                          f"{machine}, which is not x86: the build's flags were written for x86",
                  fix=_FIX, evidence=told_evidence(s))
        return
    yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": {option} is an x86 option the compiler does not know: "
                      "it targets another architecture (aarch64, ppc64le) or is older than the option; a build that "
                      "probes the flag prints this and goes on",
              fix="gcc -dumpmachine; gcc --version | head -1   # the compiler's target and release\n" + _FIX,
              evidence=told_evidence(s), severity="info")
