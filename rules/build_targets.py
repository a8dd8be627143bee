"""A build that passes x86 compiler options to a compiler for another architecture
(knowledge/messages/target_options.toml): -mavx, -msse4.2, -m64 or -march=x86-64 written into a
Makefile or CMake cache for x86 and used on an aarch64 (Jetson, Graviton, Grace) or ppc64le node."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "x86-build-flags-on-arm"

# The x86 back end's own -m options: the ISA switches and the x86-only code-generation switches of
# gcc/config/i386/i386.opt (rust-lang/gcc @ 930f21618921767ddb46aa7366c8e4059c1c9bb9, GCC 16's copy;
# gcc-mirror/gcc @ 6a790a69809ba41915575baff46d8c4316129526 for GCC 4.4's). Each name without its
# "-m" and its "no-" form. Options other targets also define (-mcpu=, -mtune=, -march=, -mabi=,
# -mcmodel=, -msoft-float, -mhard-float, -mgeneral-regs-only) are not in it: a refusal of those is
# not x86's.
_X86_ISA = frozenset((
    "32 64 x32 16 mmx 3dnow 3dnowa sse sse2 sse3 ssse3 sse4 sse4.1 sse4.2 sse4a sse5 avx avx2 fma fma4 xop lwp abm "
    "popcnt bmi bmi2 lzcnt tbm f16c aes pclmul sha rdrnd rdseed fsgsbase prfchw adx clflushopt clwb fxsr xsave "
    "xsaveopt xsavec xsaves cx16 sahf movbe crc32 rtm hle mwaitx clzero pku gfni vaes vpclmulqdq pconfig wbnoinvd "
    "ptwrite uintr sgx rdpid shstk movdiri movdir64b waitpkg cldemote sse2avx 80387 fancy-math-387 fp-ret-in-387 "
    "ieee-fp 128bit-long-double 96bit-long-double red-zone push-args accumulate-outgoing-args align-double "
    "align-stringops inline-all-stringops stackrealign 8bit-idiv vzeroupper stv prefer-avx128 "
    "avx256-split-unaligned-load avx256-split-unaligned-store iamcu daz-ftz recip rtd sseregparm").split())
# Families the table names member by member (avx512f, avx512vl ... avx512vp2intersect; AMX's tiles and
# the AVX-VNNI / AVX-IFMA / AVX10 generations added after the table's GCC 4.4 copy), and the options
# whose value is joined to the name (-mfpmath=sse, -mpreferred-stack-boundary=4, -mprefer-vector-width=).
_X86_FAMILY = re.compile(r"^(?:avx512[a-z0-9]{1,16}|avx10(?:\.[0-9]{1,2})?(?:-[0-9]{3})?|avxvnni[a-z0-9]{0,12}|"
                         r"avxifma|avxneconvert|amx-[a-z0-9]{1,12}|fpmath=.*|preferred-stack-boundary=.*|"
                         r"incoming-stack-boundary=.*|prefer-vector-width=.*|regparm=.*|veclibabi=.*|"
                         r"stringop-strategy=.*|tls-dialect=.*|pc(?:32|64|80)|large-data-threshold=.*)$")
# -march/-mcpu/-mtune values that name x86 processors, as GCC's x86 Options page lists its -march=
# CPU types (https://gcc.gnu.org/onlinedocs/gcc/x86-Options.html; processor_alias_table in
# gcc/common/config/i386/i386-common.cc), read from an Arm compiler's "unknown value" refusal.
_X86_CPU = re.compile(r"^(?:x86-64(?:-v[234])?|i[3-6]86|pentium[0-9a-z-]{0,8}|core[0-9a-z-]{0,12}|nehalem|westmere|"
                      r"sandybridge|ivybridge|haswell|broadwell|skylake(?:-avx512)?|cannonlake|icelake-[a-z]{1,8}|"
                      r"cascadelake|cooperlake|tigerlake|sapphirerapids|alderlake|raptorlake|meteorlake|"
                      r"graniterapids(?:-d)?|emeraldrapids|knl|knm|atom|silvermont|goldmont(?:-plus)?|tremont|"
                      r"sierraforest|grandridge|clearwaterforest|diamondrapids|arrowlake(?:-s)?|lunarlake|pantherlake|"
                      r"k8|opteron|athlon[0-9a-z-]{0,8}|amdfam10|barcelona|bdver[1-4]|btver[12]|znver[1-5])$", re.I)
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
    return name in _X86_ISA or bool(_X86_FAMILY.match(name))


def _refused(s: dict) -> Optional[str]:
    """The x86 option or CPU name a refusal names, or None where it names none of x86's."""
    option, value = str(s.get("option") or ""), str(s.get("value") or "")
    if option and _x86_option(option):
        return option
    if value and _X86_CPU.match(value):
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
