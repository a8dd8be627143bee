"""Number formats the hardware runs: TF32 for fp32 matmuls, bf16 where the GPU has no bf16 units."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import cuda_gpus, gpu_of_ticket, ticket_evidence, told_text, version_of


@rule("SW006", "tf32-disabled", "advice", "fp32 matmuls without TF32 on an Ampere-or-newer GPU", impact=7)
def tf32_disabled(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        An NVIDIA GPU of compute capability 8.0 or newer while torch computes fp32 matrix
        multiplications at full precision (float32 matmul precision "highest", torch's default),
        said only where it matters: the setting was read (--deep), a benchmark measured fp32
        against TF32, or a pasted log shows fp32 work (Lightning's tensor-core warning, a vLLM
        engine in float32). From torch's default alone it stays quiet.

    Why it matters:
        TF32 tensor cores run fp32 matmuls many times faster (on an H100, ~51 TFLOP/s without and
        ~380 with, measured here), at a 10-bit mantissa for the multiplication inputs; accumulation
        stays fp32. Most training converges the same; the Alliance guide discusses the trade-off.

    How to fix:
        In the script: torch.backends.cuda.matmul.allow_tf32 = True, or
        torch.set_float32_matmul_precision("high"). Keep "highest" where fp32 accuracy is required.

    References:
        - 001_dd2fe1913b91ca0a.txt (TF32: Performance vs numerical accuracy)
        - https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
    """
    t = f["torch"]
    if t.get("build") != "cuda":
        return
    precision = f["torch.float32_matmul_precision"]
    # Worth saying only where something shows fp32 work or the setting itself: torch's default
    # alone (a release's default, from knowledge) would make it the only line of every reply.
    read = "float32_matmul_precision" not in (t.get("from_knowledge") or [])
    symptoms = {s["id"] for s in (f.get("ticket.symptoms") or [])}
    if not (read or symptoms & {"frameworks:fp32-matmul-warned", "frameworks:fp32-requested"} or _tf32_measured(f)):
        return
    ampere = [g for g in cuda_gpus(f)
              if isinstance(g.get("compute_capability"), str) and version_of(g["compute_capability"]) >= version_of(_min_cc("tf32"))]
    if precision == "highest" and ampere:
        proof = _tf32_measured(f)
        source = " (this release's default, from hpcdoctor's knowledge)" if "float32_matmul_precision" in (t.get("from_knowledge") or []) else ""
        yield Hit(message=f"float32 matmul precision is \"highest\"{source} on {ampere[0].get('name')}: fp32 matmuls "
                          "skip the TF32 tensor cores" + (proof or ", several times slower")
                          + "; TF32 trades input precision (10-bit mantissa)",
                  fix='torch.set_float32_matmul_precision("high")   # or torch.backends.cuda.matmul.allow_tf32 = True', fix_lang="python",
                  evidence={"torch.float32_matmul_precision": precision, "compute_capability": ampere[0].get("compute_capability")})


def _tf32_measured(f: FactView):
    for g in (f.get("bench.gpus") or []):
        fp32 = ((g.get("gemm") or {}).get("fp32") or {}).get("tflops")
        tf32 = ((g.get("gemm") or {}).get("tf32") or {}).get("tflops")
        if isinstance(fp32, (int, float)) and isinstance(tf32, (int, float)) and fp32 > 0:
            return f": TF32 would make them {tf32 / fp32:.1f}x faster here ({fp32:.0f} -> {tf32:.0f} TFLOP/s measured)"
    return None


@rule("SW007", "bf16-unsupported", "warning", "bf16 requested on hardware without it", impact=7)
def bf16_unsupported(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        bf16 asked for on GPUs older than Ampere (V100, T4, P100) or on a CPU without native bf16
        (A64FX, Graviton2, Skylake): by the environment (ACCELERATE_MIXED_PRECISION=bf16,
        DNNL_DEFAULT_FPMATH_MODE=BF16), or, in a pasted ticket, by the framework's own log
        (vLLM's engine configuration with dtype=torch.bfloat16, or its refusal "Bfloat16 is only
        supported on GPUs with compute capability of at least 8.0"), or another framework's refusal
        (transformers' "Your setup doesn't support bf16/gpu", accelerate's "bf16 mixed precision
        requires PyTorch >= 1.10 and a supported device", DeepSpeed's "Type bf16 is not supported on
        your device", torch.autocast's "Current CUDA Device does not support bfloat16", xFormers'
        "bf16 is only supported on A100+ GPUs" among an attention operator's reasons), or ptxas'
        "Feature '.bf16' requires .target sm_80 or higher" assembling a kernel (Triton's) for the GPU,
        or cuBLAS's CUBLAS_STATUS_NOT_SUPPORTED on a call whose operands are bf16 (CUDA_R_16BF); on
        the CPU, torch's oneDNN refusals ("mkldnn_linear: bf16 path needs the cpu support ...", ideep's
        "DNNL does not support bf16/f16 backward on the platform with avx2_vnni_2") and Intel's
        extension's "BF16 weight prepack needs the cpu support ...".

    Why it matters:
        On GPUs without bf16 units, torch either refuses bf16 autocast or emulates it far slower
        than fp16, and vLLM refuses to load the model; on CPUs without bf16 the fast-math mode
        gains nothing.

    How to fix:
        On V100/T4 use fp16 mixed precision with a gradient scaler (ACCELERATE_MIXED_PRECISION=fp16),
        or for vLLM --dtype=half (LLM(..., dtype="half")); accelerate's mixed_precision="fp16",
        DeepSpeed's "fp16": {"enabled": true} with bf16 off, torch.autocast(dtype=torch.float16) with a
        GradScaler; on the CPU, unset DNNL_DEFAULT_FPMATH_MODE, and where oneDNN refuses bf16 or fp16
        run the model in float32 there.

    References:
        - 004_3c12714629749d50.txt (data types supported per GPU generation)
        - 000_6e25303b50457a54.txt (section 3.2: bf16 support on Grace)
        - https://github.com/vllm-project/vllm/pull/2374
        - https://github.com/pytorch/pytorch/pull/50442 (torch's bf16 GEMM before and after Ampere)
        - https://github.com/pytorch/pytorch/issues/57773 (cuBLAS refusing bf16 GEMMs on a P100)
        - https://github.com/intel/ideep/blob/ac05afa028d776ef4d5e75a3fee4d9562bc7fb20/include/ideep/operators/batchnorm.hpp (bf16/f16 backward refused on avx2_vnni_2)
    """
    symptoms = {s["id"]: s for s in (f.get("ticket.symptoms") or [])}
    refusal = next((sid for sid in _REFUSALS if sid in symptoms), None)
    if refusal is not None and "frameworks:vllm-bf16-refused" not in symptoms:
        s = symptoms[refusal]
        who, fix = _REFUSALS[refusal]
        check = _CHECKS.get(refusal, "torch.cuda.is_bf16_supported() is False")
        g = _first_without_bf16(f, f.gpus())
        on = f" on {g.get('name')}" if g is not None else ""
        yield Hit(message=f"{who} refused bf16{on}: {check} (line {s['line']}), "
                          "the GPU has no bf16 units (pre-Ampere: V100, T4, P100, RTX 20xx)",
                  fix=fix, fix_lang="python", evidence=ticket_evidence(s))
        return
    cpu = next((symptoms[k] for k in _CPU_REFUSALS if k in symptoms), None)
    if cpu is not None:
        yield _bf16_cpu_refused(cpu)
        return
    gemm = symptoms.get("torch:cublas-bf16-gemm-not-supported")
    if gemm is not None:
        yield from _bf16_gemm_refused(f, gemm)
        return
    if "frameworks:vllm-bf16-refused" in symptoms or "frameworks:bf16-requested" in symptoms:
        yield from _bf16_in_ticket(f, symptoms)
        return
    if "prose:bf16-intent" in symptoms:
        yield from _bf16_intent(f, symptoms["prose:bf16-intent"])
        return
    env = f["env.vars"]
    if (env.get("ACCELERATE_MIXED_PRECISION") or "").lower() == "bf16":
        g = _first_without_bf16(f, f.gpus())
        if g is not None:
            yield Hit(message=f"ACCELERATE_MIXED_PRECISION=bf16 but {g.get('name')} has no bf16 units",
                      subject=f"GPU {g.get('index')}", fix="export ACCELERATE_MIXED_PRECISION=fp16",
                      evidence={"env.ACCELERATE_MIXED_PRECISION": "bf16", "compute_capability": g.get("compute_capability")})
    mode = (env.get("DNNL_DEFAULT_FPMATH_MODE") or env.get("ONEDNN_DEFAULT_FPMATH_MODE") or "").upper()
    if mode == "BF16" and f.get("cpu.capabilities.bf16") is False:
        yield Hit(message=f"DNNL_DEFAULT_FPMATH_MODE=BF16 but this CPU ({f.get('cpu.microarch')}) has no native bf16",
                  fix="unset DNNL_DEFAULT_FPMATH_MODE", evidence={"env.DNNL_DEFAULT_FPMATH_MODE": mode,
                                                                  "cpu.capabilities.bf16": False})


# Each framework's refusal of bf16 (knowledge/messages/frameworks.toml, read at the versions named
# there) and the setting that asks it for fp16 instead.
_REFUSALS = {
    "frameworks:bf16-refused-hf": ("transformers", "# on the command line, --fp16 in place of --bf16; in code:\n"
                                   "args = TrainingArguments(output_dir=\"out\", fp16=True, bf16=False)"),
    "frameworks:accelerate-bf16-refused": ("accelerate", "# mixed_precision \"fp16\" where the job sets \"bf16\" (its config, --mixed_precision fp16); in code:\n"
                                           "from accelerate import Accelerator\naccelerator = Accelerator(mixed_precision=\"fp16\")"),
    "frameworks:deepspeed-bf16-refused": ("DeepSpeed", "# the DeepSpeed config's precision sections: fp16 on, bf16 off\n"
                                          "ds_config = {\"fp16\": {\"enabled\": True}, \"bf16\": {\"enabled\": False}}"),
    "frameworks:torch-autocast-bf16-refused": ("torch.autocast", "import torch\nscaler = torch.amp.GradScaler(\"cuda\")   # fp16 needs loss scaling\n"
                                               "autocast = torch.autocast(\"cuda\", dtype=torch.float16)"),
    "frameworks:inductor-bf16-skipped": ("torch.compile", "# keep the model in fp16 where it is compiled\nimport torch\n"
                                         "autocast = torch.autocast(\"cuda\", dtype=torch.float16)"),
    "frameworks:xformers-bf16-refused": ("xFormers' memory_efficient_attention",
                                         "# give attention fp16 tensors: the model (or the pipeline's dtype) in fp16\n"
                                         "model = model.to(torch.float16)   # diffusers: DiffusionPipeline.from_pretrained(..., torch_dtype=torch.float16)"),
    "ptxas:feature-bf16-requires-sm80": ("ptxas, assembling a kernel compiled for this GPU,",
                                         "# the kernel's inputs in fp16: the model's dtype (and autocast's) float16 in place of bfloat16\n"
                                         "model = model.to(torch.float16)   # transformers: from_pretrained(..., torch_dtype=torch.float16)"),
}
# What each refusal tested, where it is not torch.cuda.is_bf16_supported() (each emitter's source).
_CHECKS = {
    "frameworks:xformers-bf16-refused": "its operators need compute capability 8.0 or newer for bf16",
    "ptxas:feature-bf16-requires-sm80": "bf16 instructions need .target sm_80 or newer",
}


# torch's oneDNN CPU path and Intel's extension refusing bf16/fp16 on a CPU without the instructions
# (knowledge/messages/mkldnn_cpu.toml): the CPU has no kernels for that precision, so fp32 is the fix.
_CPU_REFUSALS = ("mkldnn_cpu:ideep-xf16-backward-avx2-vnni-2", "mkldnn_cpu:bf16-path-needs-cpu",
                 "mkldnn_cpu:fp16-path-needs-cpu", "mkldnn_cpu:ipex-weight-prepack-needs-cpu")
_CPU_CHECK = ("import torch\n"
              "print(torch.backends.cpu.get_cpu_capability())   # the widest ISA torch dispatches to on this CPU "
              "(AVX2, AVX512, ...)\n")


def _bf16_cpu_refused(s: dict) -> Hit:
    said = f"line {s.get('line')}: \"{told_text(s)}\""
    if s["id"].endswith("avx2-vnni-2"):
        why = ("this CPU's widest ISA is AVX2 with AVX-NE-CONVERT (oneDNN's avx2_vnni_2, no AVX-512): oneDNN runs bf16 "
               "and fp16 forward there, but ideep refuses every backward pass in them")
        fix = _CPU_CHECK + ("model = model.float()   # train in float32 on this CPU; drop torch.autocast(\"cpu\", "
                            "dtype=torch.bfloat16) or the trainer's bf16/fp16 precision (fp32 forward and backward run)")
    elif s["id"].endswith("ipex-weight-prepack-needs-cpu"):
        why = f"this CPU lacks {s.get('isa') or 'the AVX-512 subsets'}, which oneDNN's {str(s.get('dtype') or 'bf16').lower()} kernels need"
        fix = ("import torch, intel_extension_for_pytorch as ipex\n"
               "model = ipex.optimize(model.eval(), dtype=torch.float32)   # as IPEX's message says: float32 on this CPU "
               "(or keep the dtype with weights_prepack=False)")
    else:
        dtype = "fp16" if "fp16" in s["id"] else "bf16"
        op = f"{s.get('op')} " if s.get("op") else ""
        why = f"torch's {op}{dtype} path needs {s.get('isa') or 'instructions'} this CPU lacks"
        fix = _CPU_CHECK + ("model = model.float()   # run in float32 on this CPU: inputs and weights float32, "
                            f"no torch.autocast(\"cpu\") in {dtype}")
    return Hit(message=f"torch's oneDNN CPU kernels refused a low-precision (bf16/fp16) operation ({said}): {why}",
               fix=fix, fix_lang="python", evidence=ticket_evidence(s))


def _bf16_intent(f: FactView, seen):
    """bf16 asked for by a framework's own flag or dtype (bf16-mixed, torch.bfloat16, --bf16) in a
    ticket, on the GPU its tool outputs show or, with none, the one its text names (all names of
    one compute capability, see _gpu_of_ticket)."""
    if f.gpus():
        g = _first_without_bf16(f, f.gpus())
        gpu = {"name": g.get("name"), "cc": g.get("compute_capability")} if g is not None else None
    else:
        gpu = gpu_of_ticket(f)
        if gpu and not _lacks_bf16(f, gpu["name"], gpu["cc"]):
            gpu = None
    if gpu is None:
        return
    said = seen["text"]
    if "bf16-mixed" in said:
        fix = ("# no bf16 units on this GPU: fp16 mixed precision with loss scaling instead (litgpt: --precision 16-mixed)\n"
               "trainer = L.Trainer(precision=\"16-mixed\")")
    elif "bfloat16" in said:
        fix = ("# no bf16 units on this GPU: load and run the model in fp16 instead\n"
               "model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16)")
    else:
        fix = ("# no bf16 units on this GPU: transformers' fp16 mixed precision instead (--fp16 on the command line)\n"
               "args = TrainingArguments(output_dir=\"out\", fp16=True, bf16=False)")
    yield Hit(message=f"the job asks for bf16 (line {seen['line']}: {said[:80]}) but {gpu['name']} (compute capability "
                      f"{gpu['cc']}) has no bf16 units: torch refuses bf16 there or emulates it far slower than fp16",
              fix=fix, fix_lang="python",
              evidence={"ticket.line": seen["line"], "ticket.text": said[:160], "compute_capability": gpu["cc"]})


def _bf16_gemm_refused(f: FactView, s: dict):
    """cuBLAS refusing a GEMM whose operands are bf16 (CUDA_R_16BF): it runs them on compute capability
    8.0 and newer, and only some of them before (torch's bf16 GEMM needed Ampere until pytorch#50442;
    pytorch#57773: refused on a P100 with CUDA 11.3). A pasted GPU with bf16 units: another cause."""
    gpu = gpu_of_ticket(f)
    if gpu is not None and not _lacks_bf16(f, gpu["name"], gpu["cc"]):
        return
    on = (f"{gpu['name']} (compute capability {gpu['cc']}) has no bf16 units" if gpu is not None
          else f"bf16 GEMMs need compute capability {_min_cc('bf16')} or newer (Ampere), so this GPU is older")
    yield Hit(message=f"cuBLAS refused a bf16 matrix multiply (CUBLAS_STATUS_NOT_SUPPORTED on CUDA_R_16BF operands, "
                      f"line {s['line']}): {on}",
              fix=("import torch\n"
                   "print(torch.cuda.get_device_name(), torch.cuda.get_device_capability())  # below (8, 0): no bf16 GEMMs "
                   "(torch.cuda.is_bf16_supported() may still say True, by emulation)\n"
                   "model = model.to(torch.float16)  # fp16 (a GradScaler in training) or fp32 in place of bfloat16; "
                   "transformers: from_pretrained(..., torch_dtype=torch.float16)"),
              fix_lang="python",
              evidence=ticket_evidence(s))


def _min_cc(feature: str) -> str:
    """The first compute capability with ``feature`` (bf16, tf32), from knowledge/thresholds.toml."""
    return str(knowledge.load("thresholds")["compute_capability"][feature])


def _lacks_bf16(f: FactView, name, cc, vendor="nvidia"):
    sku = f.gpu_datasheet(name or "")
    return (sku is not None and sku.get("has_bf16") is False) or (
        vendor == "nvidia" and isinstance(cc, str) and version_of(cc) < version_of(_min_cc("bf16")))


def _first_without_bf16(f: FactView, gpus):
    return next((g for g in gpus if _lacks_bf16(f, g.get("name"), g.get("compute_capability"), g.get("vendor"))), None)


def _bf16_in_ticket(f: FactView, symptoms):
    """A pasted log asked for bf16 (or vLLM refused it): on which GPU, from the pasted GPU facts or,
    with none pasted, from the refusal itself, which names the GPU and its compute capability."""
    refused = symptoms.get("frameworks:vllm-bf16-refused")
    gpus = f.gpus()
    g = _first_without_bf16(f, gpus)
    if g is not None:
        name, cc, subject = g.get("name"), g.get("compute_capability"), f"GPU {g.get('index')}"
    elif refused and not gpus and refused.get("gpu"):
        name, cc, subject = refused["gpu"], refused.get("cc"), None
    else:
        return  # the pasted GPUs have bf16 units, or none is known: nothing to say
    seen = refused or symptoms["frameworks:bf16-requested"]
    yield Hit(message=f"the job asks for bf16 but {name} (compute capability {cc}) has no bf16 units"
                      + (": vLLM refused to start" if refused else ""),
              subject=subject,
              fix='vllm serve MODEL --dtype=half   # in Python LLM(..., dtype="half"); in training, fp16 with a GradScaler',
              evidence={"ticket.line": seen["line"], "ticket.text": seen["text"][:160], "compute_capability": cc})
