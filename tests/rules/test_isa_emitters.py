"""cpu-lacks-required-isa (CPU005) read from every emitter of the fact, not only the shell's and
TensorFlow's: jaxlib's, Intel MKL's and the Intel compiler's CPU checks, glibc's loader, Julia's
image, and the words QEMU, Go, Windows and Python's subprocess print for a child killed by SIGILL.
Each case is a verbatim public paste (tests/fixtures/pastes/SOURCES.md), through the real paste path;
each near miss is a real paste where the same words say something else."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts, run_rule, told_paste_facts

ISA = "cpu-lacks-required-isa"

# paste, the instruction set the emitter names ("" where it names none), severity
STATED = [
    ("jax-8482-jaxlib-avx-check-vm.txt", "AVX", "error"),
    ("lux-s3-21-jaxlib-avx-macos-x86-python.txt", "AVX", "error"),
    ("chainguard-1658-glibc-cpu-not-x86-64-v2.txt", "x86-64-v2", "error"),
    ("signac-1165-mkl-minimum-requirements.txt", "AVX", "error"),
    ("yask-11-intel-compiler-avx2-check.txt", "AVX2", "error"),
    ("jc-715-glibc-cpu-isa-level-lower.txt", "", "error"),
    ("bootlin-40-glibc-isa-level-init-panic.txt", "", "error"),
    ("julia-28801-sysimage-target-login-vm.txt", "", "error"),
    # a runner's report of SIGILL names no instruction set: the usual cause, not a shown one
    ("rknn-toolkit2-22-qemu-user-sigill.txt", "", "info"),
    ("ollama-1603-go-signal-illegal-instruction.txt", "", "info"),
    ("ollama-4794-windows-exit-0xc000001d.txt", "", "info"),
    ("modular-1685-python-subprocess-sigill.txt", "", "info"),
    ("java-llama-cpp-30-jvm-sigill-native-lib.txt", "", "info"),
    ("adoptium-1286-jvm-exception-illegal-instruction.txt", "", "info"),
    # the shell's words quoted in the user's prose (The result is "Illegal instruction".)
    ("isa-l-crypto-23-quoted-illegal-instruction-knl.txt", "", "info"),
]


@pytest.mark.parametrize("paste,feature,severity", STATED, ids=[p for p, _f, _s in STATED])
def test_each_emitter_of_a_missing_instruction_set_is_read(paste, feature, severity):
    (f,) = fired(ISA, recorded_paste_facts(paste))
    assert f.severity == severity
    if feature:
        assert f"the build needs {feature}, which the CPU it ran on does not have" in f.message
    elif severity == "error":
        assert "checked the CPU it ran on and refused it" in f.message
    else:
        assert "died of SIGILL" in f.message and "not a shown one" in f.message
    assert "/proc/cpuinfo" in f.fix


def test_the_loader_names_the_object_it_refused():
    (f,) = fired(ISA, recorded_paste_facts("bootlin-40-glibc-isa-level-init-panic.txt"))
    assert '"/lib/libc.so.6: CPU ISA level is lower than required"' in f.message


NEAR_MISSES = [
    # ldconfig's own cache check ("ISA level is too high"), not the loader refusing this CPU
    "advance-toolchain-3844-ldconfig-isa-level-too-high.txt",
    # MKL missing its own libraries, not the CPU's instructions
    "anaconda-698-mkl-cannot-load-libmkl-avx.txt",
    # the same runners reporting other signals and statuses: SIGPIPE, SIGSEGV, 0xc0000409
    "bismark-248-python-subprocess-sigpipe.txt",
    "docker-for-mac-6657-qemu-user-sigsegv.txt",
    "ollama-4442-windows-exit-0xc0000409.txt",
    "sgx-lkl-245-jvm-sigsegv.txt",
]


@pytest.mark.parametrize("paste", NEAR_MISSES)
def test_the_same_emitters_saying_something_else_are_silent(paste):
    assert not run_rule(ISA, told_paste_facts(paste))[0]
