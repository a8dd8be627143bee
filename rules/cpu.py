"""CPU: precision and math-library settings, and builds that need instructions the CPU lacks."""

from __future__ import annotations

import re

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_all, ticket_evidence, told_text
from hpcdoctor.payload.cpu_share import shared as cpu_shared

# Emulated bf16 runs many times slower than fp32 (0.9 against 125 GFLOP/s on a Zen 2 EPYC); a few
# per cent either way is the noise of one timing, not emulation.
EMULATED_BELOW = 0.8


@rule("CPU001", "cpu-bf16-fpmath", "advice", "fp32 math on a bf16-capable CPU without oneDNN fast math",
      impact=6)
def cpu_bf16_fpmath(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A CPU node whose CPU computes in bf16 natively (x86 avx512_bf16 or amx_bf16; Arm bf16 or
        svebf16) while DNNL_DEFAULT_FPMATH_MODE is unset, so oneDNN runs fp32 matmuls and
        convolutions in full fp32.

    Why it matters:
        With the fpmath mode set to BF16, oneDNN (PyTorch's CPU backend, with the Arm Compute
        Library on aarch64) may compute fp32 operations with bf16 inputs and fp32 accumulation.
        The Isambard guide reports up to 2x for fp32 inference on Grace; AMX doubles that again
        on Sapphire Rapids. The trade-off is precision: inputs are rounded to bf16's 8-bit
        mantissa, which inference nearly always tolerates and training should verify.
        CPUs without bf16 (A64FX, Graviton2, Zen 3 and older) gain nothing, so it never fires there,
        nor where the benchmark measured fast math less than 10% faster than plain fp32.

    How to fix:
        export DNNL_DEFAULT_FPMATH_MODE=BF16 in the job script (and LRU_CACHE_CAPACITY=1024 on
        aarch64). Compare accuracy on a validation set before adopting it for training.

    References:
        - 000_6e25303b50457a54.txt (section 3.1: DNNL_DEFAULT_FPMATH_MODE=BF16, "up to 2x")
        - https://oneapi-src.github.io/oneDNN/dev_guide_attributes_fpmath_mode.html
    """
    caps = f["cpu.capabilities"]
    if not caps.get("bf16") or f.gpus():
        return
    env = f["env.vars"]
    if env.get("DNNL_DEFAULT_FPMATH_MODE") or env.get("ONEDNN_DEFAULT_FPMATH_MODE"):
        return
    native_flags = ("amx_bf16", "avx512_bf16") if f.get("cpu.arch") == "x86_64" else ("svebf16", "bf16")
    native = [c for c in native_flags if caps.get(c)]
    cpu_bench = f.get("bench.cpu") or {}
    fp32 = (cpu_bench.get("fp32") or {}).get("gflops")
    fast = (cpu_bench.get("fp32_bf16_fastmath") or {}).get("gflops")
    if cpu_shared(cpu_bench):
        fp32 = fast = None  # measured while other work held its CPUs: the figures tell nothing of the ISA
    if isinstance(fp32, (int, float)) and isinstance(fast, (int, float)) and fast < fp32 * 1.1:
        return  # measured here: fast math gains nothing (a CPU that only claims bf16, or a capped ISA)
    gain = (f"measured here: {fp32:.0f} -> {fast:.0f} GFLOP/s ({fast / fp32:.1f}x)"
            if isinstance(fp32, (int, float)) and isinstance(fast, (int, float)) and fp32 > 0
            else "up to 2x for fp32 inference")
    yield Hit(
        message=(f"this {f.get('cpu.model_name') or 'CPU'} computes bf16 natively ({', '.join(native)}) "
                 f"but DNNL_DEFAULT_FPMATH_MODE is unset, so fp32 matmuls run at fp32 speed; "
                 f"BF16 fast math gives {gain}, at bf16 input precision"),
        fix="export DNNL_DEFAULT_FPMATH_MODE=BF16   # verify accuracy before using it for training",
        evidence={"cpu.capabilities": {c: True for c in native}, "env.DNNL_DEFAULT_FPMATH_MODE": None},
        env={"DNNL_DEFAULT_FPMATH_MODE": "BF16"},
    )


def _is_arm_torch(f: FactView):
    return f.get("cpu.arch") == "aarch64" and f.get("torch.installed") is True


@rule("CPU002", "arm-onednn-cache", "advice", "oneDNN primitive cache left at its default on aarch64", impact=4)
def arm_onednn_cache(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An aarch64 node whose torch uses oneDNN (with the Arm Compute Library) while
        LRU_CACHE_CAPACITY is unset.

    Why it matters:
        With ACL, oneDNN builds a primitive per input shape; with varying shapes (NLP, dynamic
        batches) a small cache means primitives are rebuilt again and again. The Isambard guide sets
        the capacity to 1024 together with the BF16 fast-math mode.

    How to fix:
        export LRU_CACHE_CAPACITY=1024

    References:
        - 000_6e25303b50457a54.txt (section 3.1: export LRU_CACHE_CAPACITY=1024)
    """
    if not _is_arm_torch(f):
        return
    if f.get("torch.mkldnn") is False:
        return
    if f["env.vars"].get("LRU_CACHE_CAPACITY") is None:
        yield Hit(message="LRU_CACHE_CAPACITY is unset: oneDNN/ACL primitives are rebuilt for new shapes",
                  fix="export LRU_CACHE_CAPACITY=1024", evidence={"env.LRU_CACHE_CAPACITY": None},
                  env={"LRU_CACHE_CAPACITY": "1024"})


@rule("CPU003", "torch-without-acl", "warning", "aarch64 torch built without the Arm Compute Library", impact=7)
def torch_without_acl(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A torch on aarch64 whose oneDNN backend was built without the Arm Compute Library (ACL),
        as some source builds and older wheels were.

    Why it matters:
        Without ACL, oneDNN falls back to reference kernels on Arm: convolutions and matmuls run
        several times slower, and the BF16 fast-math mode has no kernels to use.

    How to fix:
        Install the official aarch64 wheel (pip install torch), which is built with
        USE_MKLDNN_ACL, or a site module built with ACL.

    References:
        - 000_6e25303b50457a54.txt (section 3.1: oneDNN and ARM Compute Library integration)
        - https://github.com/pytorch/pytorch/issues/96983
    """
    if not _is_arm_torch(f):
        return
    acl = f["torch.acl"]
    if acl is False:
        yield Hit(message=f"torch {f.get('torch.version')} on aarch64 has no Arm Compute Library backend",
                  fix="pip install --force-reinstall torch   # the official aarch64 wheel is built with ACL",
                  evidence={"torch.acl": False, "torch.version": f.get("torch.version")})


def _cpu_bf16_figures(f: FactView):
    """(fp32, bf16) GFLOP/s of the CPU GEMM bench, where both were measured; for a bf16 GEMM too
    slow to fit its budget, the rate of the calls that sized it."""
    cpu = f.get("bench.cpu") or {}
    if cpu_shared(cpu):
        return None  # measured while other work held its CPUs: every dtype ran at the pace of the sharing
    fp32 = (cpu.get("fp32") or {}).get("gflops") if isinstance(cpu.get("fp32"), dict) else None
    b = cpu.get("bf16") if isinstance(cpu.get("bf16"), dict) else {}
    bf16 = b.get("gflops", b.get("probe_gflops"))
    if isinstance(fp32, (int, float)) and isinstance(bf16, (int, float)) and fp32 > 0 and bf16 > 0:
        return fp32, bf16
    return None


@rule("CPU004", "cpu-bf16-emulated", "warning", "bf16 on a CPU that emulates it", impact=8)
def cpu_bf16_emulated(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        bf16 compute on a CPU without native bf16 instructions (x86 without avx512_bf16 and
        amx_bf16: Zen 2, Zen 3, Ice Lake and older Intel; aarch64 without the bf16 flag: Graviton2,
        A64FX), on a node without GPUs, when bf16 would be used. "Would be used" means one of:
        the benchmark (--bench) measured the bf16 GEMM slower than the fp32 one; the environment
        asks for bf16 mixed precision (ACCELERATE_MIXED_PRECISION=bf16, which Accelerate and the
        HF Trainer turn into bf16 autocast, bf16 by default on the CPU); or a pasted ticket shows
        the job asking for bf16. A bf16 fast-math setting (DNNL_DEFAULT_FPMATH_MODE /
        ONEDNN_DEFAULT_FPMATH_MODE=BF16, torch.backends.mkldnn.matmul.fp32_precision="bf16") is
        not counted: it is a hint oneDNN follows only where the ISA has bf16, so it costs nothing
        here (bf16-unsupported says it gains nothing either).

    Why it matters:
        Without bf16 instructions, oneDNN and torch convert bf16 to fp32 and back around every
        operation: on a Zen 2 EPYC the bf16 GEMM measured 0.9 GFLOP/s against 125 for fp32, about
        140x slower, and a model cast to bf16 or run under bf16 autocast runs at that pace.

    How to fix:
        Keep fp32 on this CPU: drop the bf16 cast or autocast (ACCELERATE_MIXED_PRECISION=no,
        --bf16 off), or run the job on nodes whose CPUs have bf16 (Sapphire Rapids and newer,
        Zen 4 and newer, Graviton3, Grace), where oneDNN's BF16 fast math for fp32
        (DNNL_DEFAULT_FPMATH_MODE=BF16) is the faster route.

    References:
        - https://oneapi-src.github.io/oneDNN/dev_guide_attributes_fpmath_mode.html
        - https://pytorch.org/docs/stable/_modules/torch/cpu/amp/autocast_mode (CPU autocast: bf16 by default; read 2026-11-22)
        - 000_6e25303b50457a54.txt (section 3.2: bf16 support on Grace)
    """
    if f.gpus():
        return
    caps = f.get("cpu.capabilities") or {}
    native = caps.get("bf16")
    figures = _cpu_bf16_figures(f)
    model = f.get("cpu.model_name") or f.get("cpu.microarch") or "this CPU"
    fix = "# keep fp32 on this CPU: drop the bf16 cast or autocast; for bf16, use nodes whose CPUs have it"
    if figures and figures[1] < figures[0] * EMULATED_BELOW and native is not True:
        fp32, bf16 = figures
        yield Hit(message=(f"bf16 GEMM measured {bf16:.1f} GFLOP/s against {fp32:.1f} for fp32 ({fp32 / bf16:.0f}x "
                           f"slower): {model} has no native bf16, so bf16 is emulated"),
                  fix=fix, evidence={"bench.cpu.fp32.gflops": fp32, "bench.cpu.bf16.gflops": bf16,
                                     "cpu.capabilities.bf16": native})
        return
    if native is not False:
        return
    env = f.get("env.vars") or {}
    symptoms = {s.get("id") for s in (f.get("ticket.symptoms") or []) if isinstance(s, dict)}
    if (env.get("ACCELERATE_MIXED_PRECISION") or "").lower() == "bf16":
        why, evidence = "ACCELERATE_MIXED_PRECISION=bf16", {"env.ACCELERATE_MIXED_PRECISION": "bf16"}
        fix = "export ACCELERATE_MIXED_PRECISION=no   # fp32: bf16 is emulated on this CPU"
    elif "frameworks:bf16-requested" in symptoms:
        why, evidence = "the pasted log asks for bf16", {"ticket.symptoms": "frameworks:bf16-requested"}
    else:
        return
    evidence["cpu.capabilities.bf16"] = False
    yield Hit(message=(f"{why}, but {model} has no native bf16 (no avx512_bf16/amx_bf16 or Arm bf16): "
                       f"bf16 is emulated there, measured up to 140x slower than fp32"),
              fix=fix, evidence=evidence, env=({"ACCELERATE_MIXED_PRECISION": "no"} if "env.ACCELERATE_MIXED_PRECISION" in evidence else {}))


# Instruction-set names as the emitters print them -> the flag /proc/cpuinfo lists (knowledge/isa.toml).
_FLAG = knowledge.load("isa")["cpuinfo_flags"]["names"]
# Checks that refuse the CPU in their own words without naming the instruction set: glibc's loader
# (the binary's ELF note asks for an x86-64 level the CPU lacks) and Julia's image (no compiled target
# this CPU can run). The refusal is the cause stated, not a crash to interpret.
_REFUSED = frozenset({"isa:glibc-isa-level-lower", "isa:julia-no-compatible-sysimage-target"})
# The command that lists the CPU's instruction sets where the node runs: x86 kernels print them on the
# "flags" line of /proc/cpuinfo (arch/x86/kernel/cpu/proc.c), arm64 kernels on "Features"
# (arch/arm64/kernel/cpuinfo.c, hwcap_str: asimd, sve, sve2, bf16, i8mm); a paste seldom says which.
_LIST_ISA = {
    "x86_64": "grep -o -w -E 'sse4_2|avx|avx2|fma|avx512f' /proc/cpuinfo | sort -u",
    "aarch64": "grep -o -w -E 'asimd|asimddp|sve|sve2|bf16|i8mm' /proc/cpuinfo | sort -u",
    None: "grep -o -w -E 'sse4_2|avx|avx2|fma|avx512f|asimd|asimddp|sve|sve2|bf16|i8mm' /proc/cpuinfo | sort -u",
}


# A function compiled for one instruction set says so in its name, as SIMD kernels are named
# (x264's *_avx2, SVT's *_avx2_intrin, OpenBLAS's *_haswell is not one): the name's own token.
_FRAME_ISA = re.compile(r"(?:^|_)(avx512f?|avx2|avx|fma3?|sse4_?[12]|ssse3)(?=_|$)", re.IGNORECASE)
_FRAME_NAMES = {"avx512": "AVX512F", "avx512f": "AVX512F", "avx2": "AVX2", "avx": "AVX", "fma": "FMA", "fma3": "FMA",
                "sse4_1": "SSE4.1", "sse41": "SSE4.1", "sse4_2": "SSE4.2", "sse42": "SSE4.2", "ssse3": "SSSE3"}


def _openmm_cpu_platform(f: FactView) -> Iterator[Hit]:
    """OpenMM's "There is no registered Platform called "CPU"": its CPU plugin registers the platform only
    where the processor has SSE4.1 (x86; ASIMD on Arm), and no plugin registers where the plugins folder
    was not loaded. With this node's flags the two are told apart; from the words alone, an info."""
    s = next((t for t in ticket_all(f, "md_engines:openmm-no-registered-platform") if t.get("platform") == "CPU"), None)
    if s is None:
        return
    flags = f.get("cpu.flags")
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    fix = "grep -o -w -E 'sse4_1|asimd' /proc/cpuinfo | sort -u   # on the node that fails; nothing: the CPU lacks what OpenMM's CPU platform needs"
    if isinstance(flags, list) and flags:
        if f.get("cpu.arch") != "x86_64" or "sse4_1" in flags:
            return  # the CPU has what the plugin checks: the plugin was not loaded (OPENMM_PLUGIN_DIR), not this rule's
        yield Hit(message=f"OpenMM has no CPU platform ({said}) and this node's CPU lacks SSE4.1, which OpenMM's CPU plugin "
                          "requires before it registers the platform",
                  fix=fix + "\n# run on nodes whose CPU has SSE4.1 (Intel Nehalem, AMD Bulldozer or newer), or use "
                            "Platform.getPlatformByName('Reference') there",
                  evidence={**ticket_evidence(s), "cpu.flags.sse4_1": False})
        return
    yield Hit(message=f"OpenMM has no CPU platform ({said}): its CPU plugin registers the platform only on a processor with "
                      "SSE4.1 (x86; ASIMD on Arm), so a CPU without it (AMD before Bulldozer, Intel before Nehalem) is the "
                      "usual cause where the same install works on other nodes; a plugins folder OpenMM did not load "
                      "(OPENMM_PLUGIN_DIR) drops every plugin platform the same way",
              severity="info", evidence=ticket_evidence(s),
              fix=fix + "\npython -c 'import openmm; print(openmm.Platform.getPluginLoadFailures(), "
                        "[openmm.Platform.getPlatform(i).getName() for i in range(openmm.Platform.getNumPlatforms())])'   "
                        "# a load failure or no other plugin platform either: the plugins folder, not the CPU")


def _frame_isa(s: dict) -> str:
    """The instruction set the crashing function's own name names (the last such token), or ""."""
    found = _FRAME_ISA.findall(str(s.get("frame") or ""))
    return _FRAME_NAMES.get(found[-1].lower(), "") if found else ""


@rule("CPU005", "cpu-lacks-required-isa", "error", "a program built for CPU instructions this CPU lacks", impact=10,
      also={"info": "a bare SIGILL, no instruction set named, or OpenMM without its CPU platform: the usual cause, not a shown one"})
def cpu_lacks_required_isa(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a process killed by SIGILL ("Illegal instruction (core dumped)" from the
        shell, "Program received signal SIGILL, Illegal instruction." from gdb, "Fatal Python
        error: Illegal instruction", a DataLoader worker "killed by signal: Illegal instruction"),
        or a library's own check at import: TensorFlow's "The TensorFlow library was compiled to
        use AVX instructions, but these aren't available on your machine." and NumPy's "NumPy was
        built with baseline optimizations: (X86_V2) but your machine doesn't support: (X86_V2)".
        The other emitters of the same fact (knowledge/messages/isa.toml): jaxlib's "This version
        of jaxlib was built using AVX instructions, which your CPU and/or operating system do not
        support", Intel MKL's "This system does not meet the minimum requirements for use of the
        Intel(R) Math Kernel Library" with its "The processor must support ..." lines, an Intel
        compiler -x build's "Please verify that both the operating system and the processor
        support Intel(R) ... AVX2 instructions.", the dynamic loader's "<program>: CPU ISA level is
        lower than required" and "Fatal glibc error: CPU does not support x86-64-v2", Julia's
        "Unable to find compatible target in system image." (or "cached code image"); and, naming
        no instruction set (the usual cause, info), each runner's report of a child killed by
        SIGILL: QEMU user mode's "qemu: uncaught target signal 4 (Illegal instruction)", Go's
        "signal: illegal instruction" (ollama), Windows' "exit status 0xc000001d"
        (STATUS_ILLEGAL_INSTRUCTION), Python subprocess's "died with <Signals.SIGILL: 4>", the Java
        VM's fatal error report "SIGILL (0x4) at pc=..." (EXCEPTION_ILLEGAL_INSTRUCTION on Windows).
        Where the message names an instruction set and this node's CPU flags are known, they are
        compared. OpenMM's "There is no registered Platform called "CPU"": its CPU plugin registers
        the platform only on a processor with SSE4.1 (ASIMD on Arm); an error where this node's flags
        lack it, an info from the words alone (a plugins folder not loaded says the same).

    Why it matters:
        The binary (torch, TensorFlow, NumPy, a llama.cpp build) was compiled for instructions this
        CPU does not execute: AVX/AVX2/FMA on an old or low-end CPU, or on a virtual machine whose
        CPU model (kvm64, qemu64, an ESX compatibility mode) hides the host's. Nothing in the
        program or its data is wrong, and reinstalling the same build fails the same way.

    How to fix:
        List the instruction sets the CPU offers (grep -o -w -E 'sse4_2|avx|avx2|fma|avx512f'
        /proc/cpuinfo | sort -u on x86; asimd, sve, sve2, bf16 on Arm's "Features" line). Run on
        a node whose CPU has what the build needs; in a VM, give it the host's CPU model
        (Proxmox/libvirt: cpu type host; ESX: EVC mode); or install a build compiled for this CPU
        (from source on it).

    References:
        - https://github.com/tensorflow/tensorflow/blob/master/tensorflow/core/platform/cpu_feature_guard.cc
        - https://github.com/numpy/numpy/blob/main/numpy/_core/src/common/npy_cpu_features.c
        - https://github.com/pytorch/pytorch/issues/37577 (SIGILL in an AVX2 kernel on a CPU without AVX)
        - https://github.com/zylon-ai/private-gpt/issues/326 (Illegal instruction on an ESX host without AVX2)
    """
    told = catalogued(f, "cpu-lacks-required-isa")
    worker = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "torch:dataloader-killed-by-signal"
                   and s.get("signal") == "Illegal instruction"), None)
    named = next((s for s in told if s.get("feature")), None)
    refused = next((s for s in told if s.get("id") in _REFUSED), None)
    s = named or refused or (told[0] if told else worker)
    if s is None:
        yield from _openmm_cpu_platform(f)
        return
    feature = str(s.get("feature") or "").strip()
    from_frame = not feature and _frame_isa(s)
    if from_frame:
        feature = from_frame
    where = ""
    flags = f.get("cpu.flags")
    wanted = [_FLAG.get(x) for x in feature.replace(",", " ").split()] if feature else []
    if isinstance(flags, list) and flags and wanted and all(wanted):
        lacking = [w for w in wanted if w not in flags]
        where = (f"; this node's CPU lacks {', '.join(lacking)}" if lacking
                 else f"; this node's CPU has {', '.join(wanted)}: the failing run was on another machine")
    frame = f" in {s['frame']}" if s.get("frame") else ""
    absent = [str(t.get("absent")) for t in ticket_all(f, "isa:cpuid-feature-false")]
    if from_frame and _FLAG.get(from_frame) and from_frame in absent:
        where = f"; the cpuid dump pasted says {from_frame} = false"
    what = (f"the process died of SIGILL{frame}, a function whose name says it is built for {from_frame}: the "
            f"CPU it ran on lacks {from_frame}, and the program ran that code path anyway" if from_frame
            else f"the build needs {feature}, which the CPU it ran on does not have" if feature
            else "the program checked the CPU it ran on and refused it: it was built for instructions this CPU "
                 "does not have" if s.get("id") in _REFUSED
            else f"the process died of SIGILL{frame}: the CPU met an instruction it does not have (AVX/AVX2/FMA, "
                 "most often), as a build made for a newer CPU does")
    # A SIGILL that names no instruction set shows the crash, not its cause: a build for a newer CPU is
    # the usual one, but a library's own CPU-detection bug (OpenBLAS under NumPy 1.19.5 on Arm) dies the same way.
    # A loader's or runtime's own refusal states the cause even where it names no instruction set.
    bare = not feature and s.get("id") not in _REFUSED
    if bare:
        what += "; a library's CPU-detection bug dies the same way, so this is the usual cause, not a shown one"
    yield Hit(message=f"{what} (line {s.get('line')}: \"{told_text(s)}\"){where}",
              fix=_LIST_ISA.get(f.get("cpu.arch"), _LIST_ISA[None]) + "   # the instruction sets this CPU offers\n"
                  "# then run on a node whose CPU has what the build needs, give a VM the host's CPU model, "
                  "or install a build compiled for this CPU",
              evidence=ticket_evidence(s), **({"severity": "info"} if bare else {}))
