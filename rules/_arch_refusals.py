"""A library's own refusal of the GPU's generation, for framework-missing-arch: flash-attn's checks in
every wording it has had (1.x's bare TORCH_CHECK(is_sm8x || is_sm75), 2.x's bf16 and backward
head-dim checks, FlashAttention-3's Hopper check), vLLM's attention-backend fallback and LMCache's
assertion that needs the backend vLLM fell back from, Transformer Engine's FP8 check and vLLM's
quantisation minimum (knowledge/messages/frameworks.toml); and programs that refuse the GPU by its
capability themselves: text-generation-inference's flash attention check (knowledge/messages/tgi.toml)
and PG-Strom's device checks (knowledge/messages/pgstrom.toml). Each finding names the library, the
GPU and the compute capability its kernels need."""

from __future__ import annotations

from typing import Optional

from hpcdoctor import knowledge
from hpcdoctor.knowledge import messages
from hpcdoctor.engine import Hit
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, gpu_of_ticket, ticket_evidence, told_text, version_of

# flash-attn's own device flags, as the generations each admits (knowledge/frameworks.toml).
_FLAGS = knowledge.load("frameworks")["flash_attn_flags"]["flags"]

_SDPA = ("# PyTorch's own attention (scaled_dot_product_attention) runs on every GPU torch supports:\n"
         "model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16, attn_implementation=\"sdpa\")\n"
         "# elsewhere: pip uninstall flash-attn, so the library falls back; or torch.nn.MultiheadAttention in place of "
         "flash-attn's module")
_SM80_FIX = ("import torch\n"
             "torch.backends.cuda.enable_flash_sdp(False)   # torch's own SDPA: its other kernels run on every GPU "
             "(pytorch/pytorch#94883)\n"
             "# flash-attn 1.x: a smaller head dimension, or its forward only (no backward) on GPUs other than A100/H100")
_CC = "nvidia-smi --query-gpu=name,compute_cap --format=csv   # the GPU's compute capability, against the {need} the kernels need\n"


def generation_refusal(f: FactView, sym: dict) -> Optional[Hit]:
    """The first of the catalogued refusals in the paste, as a finding; None where there is none."""
    gpu = gpu_of_ticket(f)
    on = f" on {gpu['name']} (compute capability {gpu['cc']})" if gpu else ""
    s = sym.get("frameworks:flash-attn-bare-arch-check")
    if s and not ({c.strip() for c in str(s.get("cond") or "").split("||")} & {"is_sm75", "is_sm8x", "is_sm8x_min"}):
        # A100/H100 only (is_sm80, is_sm80 || is_sm90): flash-attn 0.2-1.x's backward for large head
        # dimensions needs their shared memory, but torch 2.0's own SDPA raised the same words on
        # sm86/sm89 through a dispatch bug (pytorch/pytorch#94883, #98140): consistent, not stated.
        return Hit(message=f"\"Expected {s.get('cond')} to be true\" (line {s['line']}){on}: a flash attention kernel "
                           "that runs only on A100/H100 (compute capability 8.0 or 9.0) was used on another GPU: "
                           "flash-attn 1.x's backward for large head dimensions needs their shared memory, and torch "
                           "2.0's own scaled_dot_product_attention picked such a kernel on RTX 30/40 GPUs "
                           "(pytorch/pytorch#94883)",
                   severity="warning", fix=_SM80_FIX, fix_lang="python",
                   evidence={**ticket_evidence(s), "framework.min_cc": "8.0"})
    if s:
        flags = [c.strip() for c in str(s.get("cond") or "").split("||")]
        admitted = [f"{_FLAGS[c]['gpus']} ({_FLAGS[c]['cc']})" for c in flags if c in _FLAGS]
        floor = min((_FLAGS[c]["floor"] for c in flags if c in _FLAGS), key=version_of, default="7.5")
        return Hit(message=f"flash-attn's own GPU check failed{on} (line {s['line']}: \"Expected {s.get('cond')} to be "
                           f"true\"): its kernels run only on {', '.join(admitted) or 'newer GPUs'} (compute capability "
                           f"{floor} at the lowest); Volta (7.0) and older are not supported by any flash-attn release, "
                           "and a GPU newer than these flags needs a newer flash-attn",
                   fix=_SDPA, fix_lang="python",
                   evidence={**ticket_evidence(s), "framework.min_cc": floor})
    for key, need, what in (("frameworks:flash-attn-bf16-ampere-only", "8.0", "flash-attn 2 refused bfloat16"),
                            ("frameworks:flash-attn-backward-hdim-a100", "8.0", "flash-attn's backward pass for this head "
                             "dimension needs an A100/A800 or H100/H800 (compute capability 8.0 or 9.0, for their shared memory)"),
                            ("frameworks:flash-attn-hopper-only", "9.0", "FlashAttention-3 (flash-attn's hopper build) "
                             "refused the GPU")):
        s = sym.get(key)
        if s:
            tail = (": use float16, or PyTorch's SDPA" if "bf16" in key else "")
            return Hit(message=f"{what}{on} (line {s['line']}: \"{told_text(s)}\"); its kernels need compute capability "
                               f"{need}{'' if 'hdim' in key else ' and newer'}{tail}",
                       fix=_SDPA, fix_lang="python",
                       evidence={**ticket_evidence(s), "framework.min_cc": need})
    s = sym.get("frameworks:te-fp8-min-cc")
    if s:
        return Hit(message=f"Transformer Engine refused {s.get('what') or 'FP8'}{on} (line {s['line']}): it needs compute "
                           f"capability {s.get('min_cc')} or higher (FP8 tensor cores: Ada 8.9, Hopper 9.0)",
                   fix=_CC.format(need=f"{s.get('min_cc')}+") + "# run without fp8_autocast (bf16/fp16) on this GPU, "
                       "or on a GPU of that capability", evidence={**ticket_evidence(s), "framework.min_cc": s.get("min_cc")})
    s = sym.get("frameworks:vllm-quant-min-capability")
    if s:
        need, cur = _cc_of(s.get("min")), _cc_of(s.get("cur"))
        return Hit(message=f"vLLM refused the {s.get('method')} quantisation on this GPU (line {s['line']}): its kernels "
                           f"need compute capability {need}, the GPU is {cur}",
                   fix=f"nvidia-smi --query-gpu=name,compute_cap --format=csv   # {cur} here; {s.get('method')} needs {need}+\n"
                       "# serve an unquantised (fp16) or GPTQ checkpoint this GPU's kernels support, or run on a "
                       f"GPU of compute capability {need}+",
                   evidence={**ticket_evidence(s), "framework.min_cc": need})
    return program_refusal(f, gpu) or _lmcache_backend(f, sym, gpu, on)


# Programs whose own check refuses the GPU by its capability; each catalogue entry names the program
# and the minimum (min_cc) its release line needs, read from the program's source.
_PROGRAMS = ("tgi", "pgstrom")
_TGI_FAILED = ("tgi:requires-capability-75-80-90", "tgi:requires-flash-attention-models", "tgi:error-initializing-model")
_PROGRAM_FIX = {
    "tgi": ("nvidia-smi --query-gpu=name,compute_cap --format=csv   # TGI's flash attention needs {need}\n"
            "# TGI serves the models it can without flash attention on this GPU (one shard: --num-shard 1); a sharded "
            "or flash-only model needs a GPU of that capability, or a server whose kernels list this GPU"),
    "pgstrom": ("nvidia-smi --query-gpu=name,compute_cap --format=csv   # PG-Strom needs {need}\n"
                "# PG-Strom uses only GPUs of that capability: run it on a node with one (for a fatbin that lacks "
                "the GPU: a PG-Strom build for this GPU's architecture)"),
}


def program_refusal(f: FactView, gpu) -> Optional[Hit]:
    """A program that is not torch refusing the GPU for its capability (TGI, PG-Strom): the GPU and
    its capability as the program printed them, else as the paste names them (NVIDIA's, not for
    TGI's ROCm refusals)."""
    s = next((t for t in catalogued(f, "framework-missing-arch") if t.get("family") in _PROGRAMS), None)
    if s is None:
        return None
    family = str(s.get("family"))
    entry = messages.entry_data(str(s.get("id")))
    program = entry.get("program") or family
    rocm = "ROCm" in str(program)
    cc = s.get("cc") or (f"{s['major']}.{s['minor']}" if s.get("major") and s.get("minor") and not rocm else None)
    named = gpu if gpu and not rocm else None
    name = s.get("name") or (named or {}).get("name")
    cc = cc or (named or {}).get("cc")
    what = " ".join(x for x in (name or "the GPU", f"(compute capability {cc})" if cc else "") if x)
    need = str(entry.get("min_cc") or "")
    needs = (f"its kernels need compute capability {need} or newer" if need else
             "its installed build carries no code for this GPU's architecture" if family == "pgstrom" else
             "its flash attention kernels are built for AMD Instinct MI210/MI250-class GPUs only")
    # TGI catches its refusal, logs it as a warning and serves the models it can without flash
    # attention: an error where the paste shows the model then failing, a warning alone.
    failed = family != "tgi" or any(str(t.get("id")) in _TGI_FAILED for t in f.get("ticket.symptoms") or [])
    return Hit(message=f"{program} refused {what} (line {s.get('line')}: \"{told_text(s)}\"): {needs}; the refusal is the "
                       "program's own check, not torch's" + ("" if failed else ": TGI then serves the models it can "
                                                             "without flash attention, a sharded or flash-only model fails"),
               severity="error" if failed else "warning",
               fix=_PROGRAM_FIX[family].format(need=f"compute capability {need}+" if need else "a GPU its build lists"),
               evidence={**ticket_evidence(s), **({"framework.min_cc": need} if need else {}),
                         **({"compute_capability": cc} if cc else {})})


def _cc_of(n) -> str:
    """vLLM's capability as major*10+minor ("75", "100") to "7.5", "10.0"."""
    t = str(n or "")
    return f"{t[:-1]}.{t[-1]}" if t.isdigit() and len(t) >= 2 else t


def _lmcache_backend(f: FactView, sym: dict, gpu, on: str) -> Optional[Hit]:
    """vLLM's fallback from FlashAttention on a GPU below 8.0: an error where LMCache then asserts
    it needs that backend (or the paste names such a GPU beside the assertion), info alone (vLLM
    runs on XFormers or SDPA; nothing failed)."""
    fell = sym.get("frameworks:vllm-fa2-volta-turing")
    lm = sym.get("frameworks:lmcache-flash-attn-backend-only")
    old = bool(gpu) and version_of(gpu["cc"]) < version_of("8.0")
    if lm and (fell or old):
        why = (f"vLLM fell back from FlashAttention-2 because the GPU is Volta or Turing (line {fell['line']})" if fell
               else f"the GPU{on} is below compute capability 8.0, so vLLM cannot use FlashAttention-2")
        return Hit(message=f"LMCache needs vLLM's FlashAttention backend (line {lm['line']}: \"{told_text(lm)}\") and {why}: "
                           "FlashAttention-2 needs compute capability 8.0 (Ampere) and newer",
                   fix="nvidia-smi --query-gpu=name,compute_cap --format=csv   # LMCache's KV offload needs 8.0+ here\n"
                       "# serve without --kv-transfer-config (vLLM alone runs on XFormers/SDPA on this GPU), or run "
                       "vLLM with LMCache on a GPU of compute capability 8.0+",
                   evidence={**ticket_evidence(lm), "framework.min_cc": "8.0"})
    return None


def fallback_info(f: FactView, sym: dict) -> Optional[Hit]:
    """vLLM's fallback from FlashAttention-2 alone, quoted back at info: read last, after every
    finding that states a failure."""
    fell = sym.get("frameworks:vllm-fa2-volta-turing")
    gpu = gpu_of_ticket(f)
    on = f" ({gpu['name']}, compute capability {gpu['cc']})" if gpu else ""
    if fell:
        return Hit(message=f"vLLM cannot use FlashAttention-2 on a Volta or Turing GPU{on} (line {fell['line']}) and "
                           "picked another attention backend: nothing failed by itself, but a component that needs "
                           "FlashAttention (LMCache's KV connector, FA-only features) fails on this GPU",
                   severity="info", fix="nvidia-smi --query-gpu=name,compute_cap --format=csv   # FlashAttention-2 "
                                        "needs 8.0+; below it vLLM runs XFormers or SDPA",
                   evidence={**ticket_evidence(fell), "framework.min_cc": "8.0"})
    return None
