"""knowledge/x86_options.toml against a real x86 GCC where one is installed (its own --help=target
lists every ISA switch and processor name it takes), and against the names an AArch64 GCC takes,
none of which may read as x86's."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from hpcdoctor import knowledge
from hpcdoctor.rules import build_targets

TABLE = knowledge.load("x86_options")

# The -mcpu= names of gcc-mirror/gcc @ 00c22ba69d8e738a4789b30165ff9c925c508fc1
# gcc/config/aarch64/aarch64-cores.def (GCC 12's AArch64 cores), and the values every target takes.
AARCH64_CORES = (
    "cortex-a34 cortex-a35 cortex-a53 cortex-a57 cortex-a72 cortex-a73 thunderx thunderxt88p1 thunderxt88 "
    "octeontx octeontx81 octeontx83 thunderxt81 thunderxt83 ampere1 emag xgene1 falkor qdf24xx exynos-m1 phecda "
    "thunderx2t99p1 vulcan thunderx2t99 cortex-a55 cortex-a75 cortex-a76 cortex-a76ae cortex-a77 cortex-a78 "
    "cortex-a78ae cortex-a78c cortex-a65 cortex-a65ae cortex-x1 ares neoverse-n1 neoverse-e1 octeontx2 "
    "octeontx2t98 octeontx2t96 octeontx2t93 octeontx2f95 octeontx2f95n octeontx2f95mm a64fx tsv110 "
    "thunderx3t110 zeus neoverse-v1 neoverse-512tvb saphira cortex-r82 cortex-a510 cortex-a710 cortex-x2 "
    "neoverse-n2 demeter neoverse-v2 generic native armv8-a armv8.2-a armv9-a").split()


def _x86_gcc():
    gcc = shutil.which("gcc")
    if not gcc:
        return None
    machine = subprocess.run([gcc, "-dumpmachine"], capture_output=True, text=True, timeout=30).stdout
    return gcc if machine.startswith(("x86_64", "i686", "i386")) else None


def test_no_aarch64_core_reads_as_an_x86_processor():
    assert not [n for n in AARCH64_CORES if n in build_targets._X86_CPU]


def test_options_every_target_has_are_not_x86s():
    # The ones the table's header leaves out: their refusal says nothing about x86.
    for option in ("-mcpu=native", "-mtune=generic", "-march=armv8-a", "-mabi=lp64", "-mcmodel=large",
                   "-msoft-float", "-mgeneral-regs-only", "-mstack-protector-guard=global"):
        assert not build_targets._x86_option(option.split("=")[0] + ("=" if "=" in option else "")), option


@pytest.mark.skipif(_x86_gcc() is None, reason="needs an x86 GCC to compare with (gcc -dumpmachine)")
def test_every_isa_switch_of_the_installed_x86_gcc_is_x86s():
    # Without -Q, --help=target prints each option's description; ISA switches start "Support ...".
    out = subprocess.run([_x86_gcc(), "--help=target"], capture_output=True, text=True, timeout=60).stdout
    isa = [m.group(1) for m in re.finditer(r"^  (-m[^\s=]+=?)\s+Support ", out, re.M)]
    assert len(isa) > 40, out[:500]
    assert [o for o in isa if not build_targets._x86_option(o)] == []


@pytest.mark.skipif(_x86_gcc() is None, reason="needs an x86 GCC to compare with (gcc -dumpmachine)")
def test_every_processor_the_installed_x86_gcc_takes_is_in_the_table():
    out = subprocess.run([_x86_gcc(), "-Q", "--help=target"], capture_output=True, text=True, timeout=60).stdout
    names = []
    for option in ("-march=", "-mtune="):
        head = f"Known valid arguments for {option} option:"
        assert head in out
        names += out[out.index(head):].splitlines()[1].split()
    assert len(names) > 60
    missing = sorted({n for n in names if n not in ("generic", "native")} - set(TABLE["processors"]["names"]))
    assert missing == []
