"""An assembler older than the instructions the compiler writes (knowledge/messages/gas.toml): GNU as
refusing a BMI2, AVX2, AVX-512, AMX or VNNI mnemonic, or an AVX-512 register, that gcc emitted for
-march=native on a newer CPU, or that a newer gcc (a module, devtoolset or conda compiler) emits over
the distribution's older binutils."""

from __future__ import annotations

from typing import Iterator, List

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import messages
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "assembler-too-old"


def _fix(extensions: List[dict]) -> str:
    mno = " ".join(dict.fromkeys(str(e.get("mno")) for e in extensions if e.get("mno")))
    newer = next((str(e["release"]) for e in extensions if e.get("release")), "")
    return ("as --version | head -1; gcc --version | head -1; gcc -print-prog-name=as   # the assembler gcc runs, and how old it is\n"
            "module avail binutils 2>&1 | tail -5   # on a cluster: module load a newer binutils (or the toolchain module that brings its own), "
            "then rebuild from a clean tree in that shell\n"
            "conda install -c conda-forge binutils   # in a conda environment: a current GNU as on PATH before /usr/bin"
            + (f" (GNU as knows these from binutils {newer})" if newer else "") + "\n"
            f"# or build for what this assembler knows: replace -march=native by -march=x86-64-v2 in CFLAGS/CXXFLAGS/FFLAGS, "
            f"or add {mno or '-mno-<extension>'} after -march=native")


@rule("SW079", SYMBOL, "error", "the assembler is older than the instructions the compiler emits", impact=5)
def assembler_too_old(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted build log, GNU as refusing an instruction of an x86 extension newer than
        itself: "Error: no such instruction: `shlx ...'" (BMI2), and the same for BMI1, LZCNT,
        ADX, AVX2, FMA, F16C, every AVX-512 subset (F, CD, DQ, BW, VBMI, VBMI2, BITALG,
        VPOPCNTDQ, IFMA, VNNI, BF16, FP16), GFNI, SHA, AMX (TILE, INT8, BF16, FP16), AVX-VNNI-INT8,
        AVX-NE-CONVERT and CMPccXADD, each mnemonic as GCC emits it; and "bad register name
        `%zmm0'" for an AVX-512 or AMX register. The finding names the extension the assembler
        lacks. "no such instruction" on an old mnemonic (a typo, movzw in inline assembly) is
        not read.

    Why it matters:
        gcc writes assembly for the CPU it is told about (-march=native asks the build node's
        CPU) and hands it to the as beside it. A gcc newer than the node's binutils (a module
        or devtoolset compiler over a CentOS 6/7 binutils), or a new CPU with an old
        distribution, gives an as that predates the instructions: every file that uses them
        fails to assemble, though the CPU runs them. The same build works on a node with a
        newer binutils.

    How to fix:
        Put a newer binutils before the old one (its module, the compiler module's own, or
        conda's binutils) and rebuild from a clean tree; or build for an older target
        (-march=x86-64-v2, or -mno-<extension> after -march=native).

    References:
        - https://sourceware.org/binutils/docs/as/i386_002dArch.html (the extensions GNU as knows, .arch)
        - https://github.com/bminor/binutils-gdb/blob/master/gas/config/tc-i386.c (parse_insn: "no such instruction")
        - https://github.com/bminor/binutils-gdb/blob/master/gas/NEWS (releases that added AMX, AVX512_FP16, AVX-VNNI-INT8 ...)
        - https://gcc.gnu.org/onlinedocs/gcc/x86-Options.html (-march=native, -mno-bmi2 and the other -mno- switches)
        - https://github.com/OpenMathLib/OpenBLAS/issues/4374 (shlx on CentOS 6; a newer binutils fixed it)
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    extensions = [messages.entry_data(str(s.get("id"))) for s in told]  # gas.toml: extension, -mno- switch, release
    names = list(dict.fromkeys(str(e.get("isa")) for e in extensions if e.get("isa")))
    first = told[0]
    what = str(first.get("mnemonic") or ("%" + str(first.get("register") or "")))
    release = next((str(e["release"]) for e in extensions if e.get("release")), "")
    since = f" (GNU as knows it from binutils {release})" if release else ""
    yield Hit(message=f"line {first.get('line')}: \"{told_text(first)}\": the assembler does not know {what}, "
                      f"an instruction of {' and '.join(names) or 'a newer x86 extension'} that the compiler emitted for this "
                      f"CPU (-march=native or a newer gcc): the binutils on PATH predates it{since}",
              fix=_fix(extensions), evidence=told_evidence(first))
