"""Frameworks on top of torch: their own kernels against the GPU they run on (flash-attn, vLLM, sglang,
flashinfer), and compiled extensions against the torch they were built for."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import wheels
from hpcdoctor.rules._common import (catalogued, cuda_gpus, gpu_of_ticket, hip_program_not_torch, nvidia_gpus_only, ticket_evidence, ticket_symptoms, told_evidence,
                                     told_text, torch_hip_invalid_function, torch_import_frame_before, version_of)
from hpcdoctor.rules._arch_refusals import fallback_info, generation_refusal
from hpcdoctor.rules._fatbin import native_binary_lacks_arch
from hpcdoctor.rules._gpu_libraries import library_lacks_gpu
from hpcdoctor.rules._stacks import tf_or_jax_framework_missing_arch
from hpcdoctor.rules._torch_carries import torch_build_verdict, torch_works_said


def _paddle_missing_arch(f: FactView, sym) -> Optional[Hit]:
    """PaddlePaddle's warning at its first GPU context that its wheel has no kernels for the GPU
    (knowledge/messages/paddle.toml): Paddle goes on, so what runs there may fail or be wrong."""
    s = sym.get("paddle:gpu-arch-not-compiled") or sym.get("paddle:gpu-capability-not-supported")
    if s is None:
        return None
    props = sym.get("paddle:device-properties") or {}
    cc = props.get("capability") or s.get("capability")
    what = f"{s['arch']} GPU" if s.get("arch") else "GPU"
    built = f": it was built for {' '.join((s.get('archs') or '').split())}" if s.get("archs") else ""
    return Hit(message=f"the installed PaddlePaddle wheel has no kernels for this {what}"
                       f"{f' (compute capability {cc})' if cc else ''}{built} (line {s['line']}); Paddle warns and "
                       "goes on, so what it runs on this GPU fails or gives wrong results",
               fix=("nvidia-smi --query-gpu=name,compute_cap --format=csv   # the GPU's capability: install the Paddle "
                    "wheel whose CUDA variant lists it (paddlepaddle.org.cn's install page), build Paddle with it, or "
                    "run on a GPU the wheel lists"),
               evidence=ticket_evidence(s))


@rule("SW013", "framework-missing-arch", "error", "a framework's own kernels have no code for this GPU", impact=9,
      also={"warning": "flash-attn 2 is only installed, not seen asked for or failing; or vLLM LoRA on a GPU "
                                "below 8.0 with no vLLM release named; or an A100/H100-only flash attention check "
                                "(is_sm80) that torch 2.0's own SDPA also tripped; or text-generation-inference's capability refusal "
                                "with no failure after it (TGI then serves without flash attention)",
            "info": "vLLM's fallback from FlashAttention-2 on a Volta or Turing GPU alone (nothing failed)"})
def framework_missing_arch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        A framework above torch whose own CUDA kernels are not built for the GPU while torch's
        build is not the problem: flash-attn 2's refusal "FlashAttention only supports Ampere GPUs
        or newer", vLLM's "punica LoRA kernels require compute capability >= 8.0", a framework
        kernel reporting CUDA's error by name ("RMSNorm failed with error code no kernel image is
        available for execution on the device", flashinfer's norms inside sglang; "... kernel
        launch failed, error: ..."; "CUDA Error: ... (209)" from flashinfer's own source), or
        flash-attn 2 asked for (attn_implementation="flash_attention_2") or installed
        on a GPU below its minimum compute capability (knowledge/frameworks.toml); vLLM started
        with LoRA (--enable-lora, enable_lora=True) on a GPU below 8.0 in the releases whose LoRA
        ran punica CUDA kernels (0.3.0 to 0.5.3.post1): an error where the paste names such a
        release ("Initializing an LLM engine (v0.4.2)", vllm==0.4.2), a warning where it names
        none, silent where it names only later ones. Silent where
        torch's own arch list lacks the GPU: that is torch-missing-arch, one cause, one finding.
        A program that is not torch reporting CUDA's error 209 by its enum name: CuPy's and
        numba's CUDA_ERROR_NO_BINARY_FOR_GPU, Thrust's and CuPy's cudaErrorNoKernelImageForDevice,
        cudarc's DriverError(CUDA_ERROR_NO_BINARY_FOR_GPU, ...), RustaCUDA's NoBinaryForGpu, and
        glog's "Check failed: error == cudaSuccess (48 vs. 0) no kernel image ..." from Caffe's
        CUDA_CHECK (OpenPose's bundled Caffe; 48 is the number before CUDA 10.1, 209 after): its
        own fatbin has no code for the GPU. A program's own refusal of the GPU by its capability:
        TensorRT-LLM's "Assertion failed: Unsupported architecture (.../fmhaRunner.cpp:87)", its
        kernel runner's check of the GPU's SM against the list it has kernels for;
        text-generation-inference's "GPU with CUDA capability 7 0 is not supported" (its flash
        attention needs 7.5; an error where the model then fails to load, a warning alone, since
        TGI serves on without flash attention), PG-Strom's "capability 3.0, NOT SUPPORTED" (3.5 in
        1.x) and "CC 5.2 is not supported" (6.0 from 2.0). Kokkos' own refusal at Kokkos::Cuda::initialize
        (knowledge/messages/kokkos.toml): its architecture probe did not run ("compiled for compute
        capability 0.0 (< 5.0)", "likely mismatch of architecture"), or ran code for an architecture
        above the GPU's ("... is not supported by CUDA!"; Kokkos 3.1.00/3.1.01's reversed check of a
        lower minor, kokkos#3026, at info). Where a paste names the torch release (and its CUDA
        variant) and the GPU, and torch's own official wheels carry the GPU (binary compatibility
        within a major), CUDA's "no kernel image is available" raised through torch is an
        extension's (knowledge/torch_wheels.toml), as it is where the user says plain torch runs.
        Libraries with no code for the GPU (rules/_gpu_libraries.py): cuDNN's ARCH_MISMATCH status
        (cuDNN 9's NOT_SUPPORTED_ARCH_MISMATCH, Mocha.jl's "Arch mismatch"); RAPIDS cuDF's refusal at
        import ("A GPU with NVIDIA Pascal (Compute Capability 6.0) or newer architecture is
        required. Detected GPU 0: ...", "This cuDF installation is missing the necessary PTX files
        that are <=52"), naming the GPU and its capability; CUDA's "invalid device symbol" from a
        program's own check, which has two causes (a symbol that is not the module's, or a module
        with no code for the GPU): an error where the paste names a build architecture that cannot
        run the GPU, a warning where it names the symbol call (cudaMemcpyToSymbol) or a build
        architecture alone, silent otherwise.

    Why it matters:
        torch runs on the GPU, so its checks pass, and the job dies at the framework's first
        kernel. Reinstalling torch, the usual advice for "no kernel image", changes nothing: the
        framework's wheel carries no code for this architecture (flash-attn 2 and sgl-kernel start
        at compute capability 8.0, vLLM at 7.0 up to 0.19.1 and 7.5 from 0.20.0).

    How to fix:
        Use the framework's fallback that runs on this GPU: in transformers,
        attn_implementation="sdpa" (PyTorch's scaled_dot_product_attention) instead of
        "flash_attention_2"; uninstall flash-attn where a library picks it up by itself; for
        vLLM's LoRA, merge the adapter into the base model and serve that; or run
        the framework on a GPU of the compute capability its kernels are built for.

    References:
        - https://github.com/Dao-AILab/flash-attention/blob/main/README.md
        - https://github.com/sgl-project/sglang/blob/main/sgl-kernel/CMakeLists.txt
        - https://docs.vllm.ai/en/v0.7.2/getting_started/installation/gpu/
        - https://huggingface.co/docs/transformers/v4.49.0/perf_infer_gpu_one
        - https://github.com/vllm-project/vllm/issues/4434
        - https://github.com/vllm-project/vllm/pull/5036
        - https://pypi.org/project/vllm/0.5.3.post1/ (sdist: CMakeLists.txt, _punica_C arches >= 8.0)
        - https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TYPES.html (CUDA_ERROR_NO_BINARY_FOR_GPU = 209)
        - https://github.com/bheisler/RustaCUDA/blob/c74efcb14fa24d53ac5ca1ce57e6f5794b62ce25/src/error.rs
        - https://docs.nvidia.com/cuda/cuda-binary-utilities/index.html (cuobjdump --list-elf, --list-ptx)
        - https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#binary-compatibility (sm_XY runs on X.z, z >= y)
        - https://github.com/kokkos/kokkos/blob/4.6.01/core/src/Cuda/Kokkos_Cuda_Instance.cpp (Cuda::impl_initialize's checks)
        - https://github.com/kokkos/kokkos/issues/1944 (the probe kernel fails to launch: "compiled for compute capability 0.0")
        - https://github.com/kokkos/kokkos/issues/3026 (3.1's reversed minor check, fixed by #3035)
        - https://github.com/pluskid/Mocha.jl/blob/022f222bbd0e974a62fec0a966d6e85399c2178b/src/cuda/cudnn.jl (CuDNNError's words)
        - https://github.com/rapidsai/cudf/blob/v24.02.00/python/cudf/cudf/utils/gpu_utils.py (validate_setup's minimum)
        - https://github.com/rapidsai/cudf/blob/v24.02.00/python/cudf/cudf/utils/_numba.py (the missing PTX)
        - https://github.com/UCI-CARL/CARLsim6/issues/15 (invalid device symbol: code built for another GPU)
        - https://github.com/bakks/virginian/issues/1 (invalid device symbol: the program's own symbol argument)
        - https://github.com/lumark/PWP3D/issues/4 (invalid device symbol at cudaMemcpyToSymbol: fixed by the GPU's -gencode)
        - https://github.com/huggingface/text-generation-inference/blob/v3.3.7/server/text_generation_server/layers/attention/cuda.py
        - https://github.com/huggingface/text-generation-inference/issues/211 (the refusal is a warning: other models still run)
        - https://github.com/heterodb/pg-strom/blob/v6.1/src/gpu_device.c (COMPUTE_CAPABILITY_MAJOR < 6)
        - https://github.com/heterodb/pg-strom/commit/321f85200fe3aa2b4391aac1863b0e44604392d2 (1.x: below 3.5, NOT SUPPORTED)
        - https://github.com/BVLC/caffe/blob/master/include/caffe/util/device_alternate.hpp (CUDA_CHECK)
        - https://github.com/NVIDIA/TensorRT-LLM/blob/00dbe288d2a76e0ad79107e4ef0907d614744c89/cpp/tensorrt_llm/kernels/contextFusedMultiHeadAttention/fmhaRunner.cpp
    """
    sym = ticket_symptoms(f)
    if not sym or _torch_lacks_the_gpu(f, sym):
        return
    stack = tf_or_jax_framework_missing_arch(f) or _paddle_missing_arch(f, sym)
    if stack is not None:
        yield stack
        return
    table = knowledge.load("frameworks")["framework"]
    fa = table["flash-attn"]
    gpu = gpu_of_ticket(f)
    on = f" on {gpu['name']} (compute capability {gpu['cc']})" if gpu else ""
    if "frameworks:flash-attn-ampere-only" in sym:
        s = sym["frameworks:flash-attn-ampere-only"]
        yield Hit(message=f"flash-attn 2 refused the GPU{on} (line {s['line']}): its kernels run on compute capability "
                          f"{fa['min_cc']} (Ampere) and newer only; the refusal is flash-attn's own check, not torch's",
                  fix=_SDPA_FIX, fix_lang="python", evidence={**ticket_evidence(s), "framework.min_cc": fa["min_cc"]})
        return
    if "frameworks:tensorrt-llm-unsupported-architecture" in sym:
        s = sym["frameworks:tensorrt-llm-unsupported-architecture"]
        yield Hit(message=f"TensorRT-LLM refused the GPU{on} (line {s['line']}: \"Unsupported architecture\" from "
                          f"{str(s.get('file') or '').rsplit('/', 1)[-1] or 'a kernel runner'}): that kernel runner has "
                          "no kernels for this GPU's SM"
                          f"{' (the fused multi-head attention runner has them for SM 8.0 and newer)' if 'fmhaRunner' in str(s.get('file')) else ''}; "
                          "the check is TensorRT-LLM's own, not torch's or the driver's",
                  fix=("nvidia-smi --query-gpu=name,compute_cap --format=csv   # below 8.0: build the engine without "
                       "the fused attention kernels (trtllm-build --context_fmha disable; the examples' older build.py: "
                       "without --enable_context_fmha), or on a GPU of 8.0 or newer"),
                  evidence=ticket_evidence(s))
        return
    refused = generation_refusal(f, sym)
    if refused is not None:
        yield refused
        return
    if "frameworks:vllm-lora-punica-cc" in sym:
        s = sym["frameworks:vllm-lora-punica-cc"]
        yield Hit(message=f"vLLM refused LoRA on this GPU{on} (line {s['line']}): its punica LoRA kernels need compute "
                          f"capability {s['min_cc']} or newer; the base model runs where vLLM itself supports the GPU ({_vllm_minimum()})",
                  fix=_MERGE_LORA_FIX, fix_lang="python", evidence={**ticket_evidence(s), "framework.min_cc": s["min_cc"]})
        return
    built = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "frameworks:vllm-build-cc-below-7"), None)
    if built:
        yield Hit(message=f"vLLM refused the GPU{on} (line {built['line']}): its kernels are built for compute capability "
                          f"{built.get('min_cc')} and newer ({_vllm_minimum()}); torch itself may still run on it",
                  fix="nvidia-smi --query-gpu=name,compute_cap --format=csv   # vLLM needs 7.0+: run it on such a GPU, "
                      "or serve this one with a framework whose kernels list it (transformers with torch's own kernels)",
                  evidence={**told_evidence(built), "framework.min_cc": built.get("min_cc")})
        return
    hip = _hip_kernel_outside_torch(f) or native_binary_lacks_arch(f) or library_lacks_gpu(f)
    if hip:
        yield hip
        return
    lora = _vllm_lora_on_old_gpu(f, sym, table["vllm-lora-punica"], gpu)
    if lora:
        yield lora
        return
    if "frameworks:framework-kernel-no-image" in sym or "frameworks:framework-cuda-error-209" in sym:
        s = sym.get("frameworks:framework-kernel-no-image") or sym["frameworks:framework-cuda-error-209"]
        what = f"the framework kernel {s['kernel']}" if s.get("kernel") else f"a kernel of {s['framework']}"
        sgl = table["sgl-kernel"]
        yield Hit(message=f"{what} has no code for this GPU{on} (line {s['line']}: \"no kernel image is available\" from "
                          "the framework's own kernel, not torch's); flashinfer's norm and sampling kernels come built "
                          f"into sglang's sgl-kernel, which is built for compute capability {sgl['min_cc']} and newer",
                  fix="pip list 2>/dev/null | grep -i -E '^(sglang|sgl.kernel|flashinfer|vllm) '   "
                      "# the package whose kernel failed is built for newer GPUs: run it on a GPU of compute "
                      f"capability {sgl['min_cc']}+, or serve this GPU with a framework that lists it ({_vllm_minimum()})",
                  evidence={**ticket_evidence(s), "framework.min_cc": sgl["min_cc"]})
        return
    kokkos = _kokkos_arch(f)
    if kokkos is not None:
        yield kokkos
        return
    cmake = _cmake_architectures_above_gpu(f)
    if cmake is not None:
        yield cmake
        return
    ext = _extension_kernel_missing(f)
    if ext is not None:
        yield ext
        return
    asked = sym.get("prose:flash-attn2-requested") or sym.get("frameworks:flash-attn2-installed")
    if not (asked and gpu and version_of(gpu["cc"]) < version_of(fa["min_cc"])):
        info = fallback_info(f, sym)
        if info is not None:
            yield info
        return
    requested = "prose:flash-attn2-requested" in sym
    what = ("the code asks for flash-attn 2 (attn_implementation=\"flash_attention_2\")"
            if requested else f"flash-attn {asked.get('version')} is installed")
    yield Hit(message=f"{what}, but {gpu['name']} is compute capability {gpu['cc']}: flash-attn 2's kernels run "
                      f"on {fa['min_cc']} (Ampere) and newer only, and "
                      + ("it fails" if requested else "code that selects it fails")
                      + " with \"FlashAttention only supports Ampere GPUs or newer\"",
              # Installed is not used: many stacks install it and fall back to SDPA on older GPUs.
              severity="error" if requested else "warning",
              fix=_SDPA_FIX, fix_lang="python",
              evidence={**ticket_evidence(asked), "compute_capability": gpu["cc"], "framework.min_cc": fa["min_cc"]})


def _vllm_minimum() -> str:
    v = knowledge.load("frameworks")["framework"]["vllm"]
    return f"vLLM documents {v['min_cc_before']}+ before {v['since']}, {v['min_cc']}+ from it"


def _vllm_lora_on_old_gpu(f: FactView, sym, punica, gpu):
    """vLLM started with LoRA (--enable-lora, enable_lora=True) on a GPU below the compute
    capability of its punica CUDA kernels, in the releases that ran them (knowledge/frameworks.toml,
    vllm-lora-punica): an error where the paste names a release in that range, a warning where it
    names none (the releases after it run LoRA on Triton kernels), silence where every release it
    names lies outside the range."""
    asked = sym.get("frameworks:vllm-lora-enabled") or sym.get("frameworks:vllm-lora-enabled-kwarg")
    if not asked or not gpu or version_of(gpu["cc"]) >= version_of(punica["min_cc"]):
        return None
    first, fixed = version_of(punica["first"]), version_of(punica["fixed_in"])
    named = [s for s in f.get("ticket.symptoms") or [] if s["id"] in ("frameworks:vllm-version-logged", "prose:vllm-version-pinned")]
    inside = [s for s in named if first <= version_of(s["version"]) < fixed]
    if named and not inside:
        return None
    why = (f"vLLM {punica['first']} up to {punica['fixed_in']} (not included) runs LoRA on punica CUDA kernels built "
           f"for compute capability {punica['min_cc']} and newer only, which fail on this GPU with \"no kernel image is "
           "available\" or \"punica LoRA kernels require compute capability >= 8.0\" while the base model runs")
    evidence = {**ticket_evidence(asked), "compute_capability": gpu["cc"], "framework.min_cc": punica["min_cc"]}
    if inside and len(inside) == len(named):
        v = inside[0]
        return Hit(message=f"LoRA is enabled (line {asked['line']}) with vLLM {v['version']} (line {v['line']}) on "
                           f"{gpu['name']} (compute capability {gpu['cc']}): {why}",
                   fix=_LORA_FIX_HEAD + _MERGE_LORA_FIX, fix_lang="python",
                   evidence={**evidence, "vllm.version": v["version"]})
    return Hit(message=f"LoRA is enabled (line {asked['line']}) on {gpu['name']} (compute capability {gpu['cc']}) and the "
                       f"paste does not say which vLLM ran: {why}; from {punica['fixed_in']} on, LoRA runs Triton kernels instead",
               severity="warning", fix=_LORA_FIX_HEAD + _MERGE_LORA_FIX, fix_lang="python", evidence=evidence)


# Which vLLM ran decides it (knowledge/frameworks.toml, vllm-lora-punica); the way round the
# punica kernels' minimum that vLLM's maintainers give is the merged adapter (#4434).
_LORA_FIX_HEAD = ("import vllm\n"
                  "print(vllm.__version__)  # 0.3.0 to 0.5.3.post1 run LoRA on punica kernels built for compute capability "
                  "8.0+ only; from 0.5.4 LoRA runs Triton kernels (vllm-project/vllm#5036)\n")


_SDPA_FIX = ("# transformers: PyTorch's own attention (scaled_dot_product_attention) runs on every GPU torch supports;\n"
             "# flash-attn 2 needs compute capability 8.0+. Elsewhere: pip uninstall flash-attn, so libraries fall back.\n"
             "model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float16, attn_implementation=\"sdpa\")")


# vLLM maintainers' advice for LoRA on GPUs its punica kernels lack (vllm-project/vllm#4434): merge the
# adapter into the base model (PEFT's merge_and_unload) and serve the merged model without --enable-lora.
_MERGE_LORA_FIX = ("# punica LoRA needs compute capability 8.0+: merge the adapter into the base model, then serve the\n"
                   "# merged directory without --enable-lora (vllm-project/vllm#4434)\n"
                   "merged = PeftModel.from_pretrained(base_model, adapter_path).merge_and_unload()\n"
                   "merged.save_pretrained(\"merged-model\")")


def _hip_kernel_outside_torch(f: FactView):
    """HIP's "invalid device function" (hipErrorInvalidDeviceFunction) printed by a program's own
    HIP check, not torch's (torch raises it as "RuntimeError: HIP error: ...", see
    torch_hip_invalid_function): the library's kernels have no code object for the GPU's gfx
    target (rocALUTION's "HIP error: invalid device function" with its file and line). And the
    HIP runtime finding no code object for the GPU (hipErrorNoBinaryForGpu, clr's "No compatible
    code objects found for: gfx..."), where the paste shows another HIP program and no torch
    (llama.cpp's ggml start-up line, HIP's samples); otherwise torch-rocm-missing-gfx answers."""
    none = _no_code_object_outside_torch(f)
    if none is not None:
        return none
    # Positive evidence only: the bare words at the start of their line, as a library's check prints
    # them (a line cut inside torch's "RuntimeError: HIP error: ..." must not read as a library's).
    s = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") == "hip:hipErrorInvalidDeviceFunction"
              and str(s.get("text", "")).startswith("HIP error: invalid device function")), None)
    if s is None or torch_hip_invalid_function(f) or any(t.get("id") in ("torch:torch-import-frame", "torch:torch-c-import")
                                                          for t in f.get("ticket.symptoms") or []):
        return None
    return Hit(message=f"a HIP kernel of the program has no code object for this GPU's gfx target (line {s.get('line')}: "
                       f"\"{told_text(s)}\"): the library was not built for this GPU's architecture",
               fix="rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # the GPU's target: rebuild the library with it "
                   "(-DAMDGPU_TARGETS=<gfx> / --offload-arch=<gfx>), or use a ROCm release that lists the GPU",
               evidence=told_evidence(s))


def _no_code_object_outside_torch(f: FactView):
    if not hip_program_not_torch(f) or nvidia_gpus_only(f):
        return None  # torch's, or a HIP program not shown (torch-rocm-missing-gfx); a ROCm build on NVIDIA (torch-rocm-build-on-nvidia)
    s = next((t for t in catalogued(f, "framework-missing-arch") if t.get("family") == "hip"), None)
    if s is None:
        return None
    gfx = f" ({s['gfx']})" if s.get("gfx") else ""
    return Hit(message=f"the program's HIP code has no code object for this GPU's target{gfx} (line {s.get('line')}: "
                       f"\"{told_text(s)}\"): it was not built for this GPU's architecture",
               fix="rocminfo | grep -m1 -o 'gfx[0-9a-f]*'   # the GPU's target: rebuild the program for it "
                   "(hipcc --offload-arch=<gfx>; CMake -DAMDGPU_TARGETS=<gfx> or -DGPU_TARGETS=<gfx>), or run a ROCm "
                   "release that lists the GPU",
               evidence=told_evidence(s))


_KOKKOS_FIX = ("nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader   # the GPU's compute capability\n"
               "grep -h -o -E 'Kokkos_ARCH_[A-Z]+[0-9]+:BOOL=ON' CMakeCache.txt   # in the program's build directory: "
               "the GPU architecture Kokkos was built for; rebuild Kokkos and the program with the GPU's own "
               "(-DKokkos_ARCH_VOLTA70=ON for 7.0, AMPERE86 for 8.6; Makefile builds: KOKKOS_ARCH=Volta70)")


def _kokkos_arch(f: FactView):
    """Kokkos' own refusal at Kokkos::Cuda::initialize (knowledge/messages/kokkos.toml): its probe kernel
    did not run ("compiled for compute capability 0.0", "likely mismatch of architecture"), ran code of
    an architecture above the GPU's ("... is not supported by CUDA!"), or the GPU is below Kokkos'
    minimum. Kokkos 3.1.00/3.1.01 refused a lower minor of the same major by a reversed check
    (kokkos/kokkos#3026, fixed by #3035): that is said at info, the build runs there."""
    s = next((t for t in catalogued(f, "framework-missing-arch") if t.get("family") == "kokkos"), None)
    if s is None:
        return None
    key, said = s.get("key"), f"line {s.get('line')}: \"{told_text(s)}\""
    compiled, device = s.get("compiled"), s.get("device")
    if key == "cuda-insufficient-capability":
        return Hit(message=f"{said}: Kokkos supports no GPU below compute capability {s.get('min_cc')}; this one is "
                           f"{device}", fix=_KOKKOS_FIX, evidence=told_evidence(s))
    if key == "cuda-compiled-not-supported" and compiled and device:
        c, d = version_of(compiled), version_of(device)
        if c.major == d.major and c < d:
            return Hit(message=f"{said}: code for {compiled} runs on a {device} GPU (binary compatibility within a "
                               "major); Kokkos 3.1.00 and 3.1.01 compared the minor the wrong way round "
                               "(kokkos/kokkos#3026, fixed in 3.2.00 by #3035)",
                       severity="info", fix="# update Kokkos to 3.2.00 or later, or build for this GPU's own architecture\n"
                                            + _KOKKOS_FIX, evidence=told_evidence(s))
        return Hit(message=f"{said}: the program's Kokkos was built for compute capability {compiled}, the GPU is "
                           f"{device}: its kernels cannot run here", fix=_KOKKOS_FIX, evidence=told_evidence(s))
    on = f" on a GPU of compute capability {device}" if device else ""
    return Hit(message=f"{said}: Kokkos' probe kernel did not run{on}: the program's Kokkos build has no code for this "
                       "GPU (Kokkos_ARCH set for another GPU; kokkos/kokkos#1944). A driver older than the CUDA the "
                       "build used fails the probe the same way: nvidia-smi shows the driver's CUDA",
               fix=_KOKKOS_FIX, evidence=told_evidence(s))


# CUDA's error 209 in the runtime's words (cuda.toml, driver.toml): raised through torch's check by
# an extension's kernel as much as by torch's own.
_NO_IMAGE = frozenset({"cuda:cudaErrorNoKernelImageForDevice", "cuda_driver:CUDA_ERROR_NO_BINARY_FOR_GPU"})


_NO_CODE = _NO_IMAGE | {"cuda:cudaErrorInvalidDeviceFunction"}


def _cmake_architectures_above_gpu(f: FactView):
    """CUDA saying a kernel has no code for the GPU ("invalid device function", "no kernel image") in a
    paste that shows the CMake build's own CMAKE_CUDA_ARCHITECTURES (knowledge/messages/cmake_cuda.toml):
    a plain number makes real and virtual (PTX) code, which runs on that compute capability and newer, so
    the GPU is older than the lowest one set. A GPU the paste names at or above it: another cause."""
    s = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") in _NO_CODE), None)
    setting = next((t for t in f.get("ticket.symptoms") or [] if t.get("id") == "cmake_cuda:cuda-architectures-set"), None)
    if s is None or setting is None:
        return None
    archs = re.findall(r"([0-9]{2,3})[a-z]?(?:-(real|virtual))?", str(setting.get("archs") or ""))
    if not archs:
        return None
    low = min(int(a) for a, _ in archs)
    cc = f"{low // 10}.{low % 10}"
    gpu = gpu_of_ticket(f)
    if all(kind == "real" for _, kind in archs):
        # machine code alone (-real, no PTX): it runs on the same major at that minor or above only
        if gpu is not None and any(gpu["cc"].split(".")[0] == a[:-1] and version_of(gpu["cc"]) >= version_of(f"{a[:-1]}.{a[-1]}")
                                   for a, _ in archs):
            return None
        reach = "as machine code alone (-real: no PTX for newer GPUs)"
        on = (f"{gpu['name']} is compute capability {gpu['cc']}" if gpu else "this GPU is none of those architectures")
    else:
        if gpu is not None and version_of(gpu["cc"]) >= version_of(cc):
            return None
        reach = f"for compute capability {cc} and newer only"
        on = f"{gpu['name']} is compute capability {gpu['cc']}" if gpu else f"this GPU is older than compute capability {cc}"
    return Hit(message=f"the build compiled its CUDA code {reach} (line "
                       f"{setting.get('line')}: \"{told_text(setting)}\"), and {on}: its kernels have no code the GPU "
                       f"runs (line {s.get('line')}: \"{told_text(s)}\")",
               fix=("nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader   # the GPU's compute capability: "
                    "8.6 is 86\n"
                    "# in CMakeLists.txt: set(CMAKE_CUDA_ARCHITECTURES 86) with that number, or native (CMake 3.24+: the "
                    "GPUs of the machine that builds), then rebuild from an empty build directory"),
               evidence={**told_evidence(s), "cmake.line": setting.get("line"), "cmake.archs": setting.get("archs"),
                         **({"compute_capability": gpu["cc"]} if gpu else {})})


def _extension_kernel_missing(f: FactView):
    """CUDA's "no kernel image is available for execution on the device" where torch's own build
    carries the GPU: the paste names the torch release (its CUDA variant where said) and the GPU, and
    every official wheel of it runs that GPU by NVIDIA's binary compatibility (rules/_torch_carries.py),
    or the user says plain torch runs. The kernel without code is an extension's or another
    framework's, built without the GPU's architecture."""
    s = next((s for s in f.get("ticket.symptoms") or [] if s.get("id") in _NO_IMAGE), None)
    if s is None:
        return None
    verdict = torch_build_verdict(f)
    works = torch_works_said(f)
    if not (verdict["carries"] or works):
        return None
    gpu = verdict.get("gpu")
    reasons = []
    if verdict["carries"]:
        lists = wheels.release_arch_lists(verdict["torch"], verdict.get("cuda")) or wheels.release_arch_lists(verdict["torch"])
        archs = sorted({a for w in lists for a in w["arch"]}, key=lambda a: (len(a), a))
        reasons.append(f"torch {verdict['torch']}'s official wheels"
                       + (f" (CUDA {verdict['cuda']}, line {verdict['line']})" if verdict.get("cuda") else "")
                       + f" carry {', '.join(archs)}, which run compute capability {gpu['cc']} (binary compatibility "
                       "within a major)")
    if works:
        reasons.append(f"the user says plain torch runs (line {works.get('line')})")
    cc = gpu["cc"] if gpu else None
    on = f" on {gpu['name']} (compute capability {cc})" if gpu else ""
    arch = f"\"{cc}\"" if cc else "\"$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1)\""
    why = "the GPU's compute capability"
    if gpu and gpu.get("ccs"):   # a name two GPUs share: code for both runs on either
        arch, why = f"\"{';'.join(gpu['ccs'])}\"", f"both GPUs {gpu['name']} may be"
    return Hit(message=f"a kernel has no code for this GPU{on} (line {s.get('line')}: \"no kernel image is available for "
                       f"execution on the device\"), and it is not torch's: {'; '.join(reasons)}. The extension or "
                       "framework built against torch was compiled without this GPU's architecture",
               fix=f"export TORCH_CUDA_ARCH_LIST={arch}   # {why}, for torch.utils.cpp_extension\n"
                   "pip install --no-build-isolation --no-cache-dir --force-reinstall --no-deps .   "
                   "# in the extension's source tree: rebuilt with code for this GPU",
               evidence={**told_evidence(s), "torch.version": verdict.get("torch"), "torch.cuda": verdict.get("cuda"),
                         **({"compute_capability": cc} if cc and not gpu.get("ccs") else {}), **({"user_said": works.get("text")} if works else {})})


def _torch_lacks_the_gpu(f, sym) -> bool:
    """Whether torch's own build lacks the GPU (torch-missing-arch's cause, not a framework's):
    torch's architecture warnings pasted, or a known arch list without the GPU's capability."""
    if {"torch:gpu-arch-not-compatible", "torch:gpu-cc-old-form", "torch:gpu-cc-list-form"} & set(sym) or torch_hip_invalid_function(f):
        return True
    arch = f.get("torch.arch_list")
    if f.get("torch.build") == "cuda" and isinstance(arch, list) and arch:
        return any(isinstance(g.get("compute_capability"), str) and not wheels.arch_supported(g["compute_capability"], arch)
                   for g in cuda_gpus(f))
    return False



# torch's CUDA library split in two by BUILD_SPLIT_CUDA (pytorch#49050, December 2020, for the CUDA 11
# binaries; torch/utils/cpp_extension.py then links extensions with -ltorch_cuda_cu -ltorch_cuda_cpp),
# an option pytorch#87502 deleted in October 2022: an extension that needs either file was built against
# such a torch, and a torch without them is installed now.
_SPLIT_CUDA_LIBS = frozenset({"libtorch_cuda_cpp.so", "libtorch_cuda_cu.so"})


def _split_cuda_library_missing(s: dict) -> Hit:
    lib = str(s.get("library"))
    return Hit(message=f"an extension loaded through torch needs {lib} (line {s.get('line')}: \"{told_text(s)}\"), a "
                       "library only torch builds made with BUILD_SPLIT_CUDA had (the CUDA 11 binaries from December "
                       "2020; the option was deleted in October 2022): it was built against such a torch, and the torch "
                       "installed is another build (a later release with one libtorch_cuda.so, an earlier one, a CPU "
                       "build)",
               fix=("python3 -c 'import torch, os; print(torch.__version__, torch.version.cuda, "
                    "sorted(os.listdir(os.path.join(os.path.dirname(torch.__file__), \"lib\"))))'   # this torch and its "
                    "libraries\n"
                    "python3 -m pip list 2>/dev/null | grep -iE '^torch|scatter|sparse|cluster|spline|geometric|pyg'   "
                    "# the compiled extensions beside it (PyG's are the usual ones loaded through torch.ops)\n"
                    "# reinstall each extension built for this torch and CUDA (PyG's from the wheel index named for this "
                    "torch's minor release and CUDA: https://data.pyg.org/whl/torch-X.Y.0+cuXYZ.html), or go back to the "
                    "torch they were built for"),
               evidence=told_evidence(s))


_OWN_TORCH_DIRS = frozenset({"torch", "lib"})   # torch/_C*.so and torch/lib/*.so: torch's own, torch-import-failed's


@rule("SW024", "torch-extension-version-mismatch", "error", "a compiled extension built against another torch",
      impact=9)
def torch_extension_version_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the dynamic loader refusing a compiled extension module because a C++
        symbol of torch is missing: "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined
        symbol: _ZN3c104cuda9SetDeviceEi", where the symbol is mangled in torch's namespaces (c10::,
        at::, torch::) and the library is not torch's own (torch/_C, torch/lib/libtorch*: that is
        torch's import failing, torch-import-failed). An extension that needs libtorch_cuda_cpp.so or
        libtorch_cuda_cu.so (the loader's "cannot open shared object file" outside torch's own
        import): those two existed only in torch builds made with BUILD_SPLIT_CUDA (pytorch#49050,
        deleted by pytorch#87502), so the extension was built against another torch build.

    Why it matters:
        torch keeps no binary compatibility for its C++ API between releases: an extension
        (flash-attn, xFormers, torchvision's ops, apex, a project's own CUDA op) compiled against
        one torch cannot load with another. Upgrading or downgrading torch after installing the
        extension, or a prebuilt wheel made for a different torch, ends here; reinstalling the
        same wheel does not help.

    How to fix:
        Find the distribution that owns the module and reinstall it built against the installed
        torch: from source with the environment's torch (pip install --no-build-isolation
        --no-binary <dist> --force-reinstall --no-deps <dist>), or the release whose prebuilt
        wheel names this torch (flash-attn's wheels carry torch and CUDA in their names); or
        go back to the torch the extension was built for.

    References:
        - https://github.com/Dao-AILab/flash-attention/issues/940 (undefined c10 symbol with torch 2.3.0; a matching flash-attn fixed it)
        - https://github.com/bminor/glibc/blob/master/elf/dl-lookup.c ("undefined symbol: ")
        - https://pytorch.org/docs/stable/cpp_extension.html
        - https://github.com/pytorch/pytorch/pull/49050 (BUILD_SPLIT_CUDA: torch_cuda_cu and torch_cuda_cpp)
        - https://github.com/pytorch/pytorch/pull/87502 (Delete BUILD_SPLIT_CUDA option)
    """
    sym = ticket_symptoms(f)
    s = sym.get("torch:extension-undefined-torch-symbol")
    if s is None:
        split = sym.get("torch:import-missing-library")
        if split is not None and split.get("library") in _SPLIT_CUDA_LIBS and not torch_import_frame_before(f, split):
            yield _split_cuda_library_missing(split)
        return
    path = str(s.get("file") or "")
    parts = path.split("/")
    if len(parts) > 1 and parts[-2] in _OWN_TORCH_DIRS and (parts[-2] == "torch" or "/torch/lib/" in path):
        return
    module = str(s.get("module"))
    torch_version = f.get("torch.version") if isinstance(f.get("torch.version"), str) else None
    installed = f" ({torch_version} here)" if torch_version else ""
    owner = ("python3 -c \"import importlib.metadata as m; print(next(d.metadata['Name'] for d in m.distributions() "
             f"for p in (d.files or []) if p.name.startswith('{module}.')))\"")
    yield Hit(message=f"the extension {module} was built against another torch than the one installed{installed}: "
                      f"torch does not export {str(s.get('symbol'))[:80]} (line {s.get('line')})",
              fix=f"pkg=$({owner})   # the distribution that installed {module}\n"
                  "pip install --no-build-isolation --no-binary \"$pkg\" --force-reinstall --no-deps \"$pkg\"   "
                  "# rebuilt against this torch (needs its CUDA toolkit); or the release built for this torch",
              evidence=ticket_evidence(s))


@rule("SW025", "bitsandbytes-cuda-binary-missing", "warning", "bitsandbytes has no binary for this CUDA version",
      impact=7, also={"info": "bitsandbytes loaded its CPU library (or looked a GPU function up in it), and the paste does "
                              "not show that torch saw a GPU"})
def bitsandbytes_cuda_binary_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, bitsandbytes saying it has no native library for the CUDA version it
        detected: "CUDA SETUP: Required library version not found: libbitsandbytes_cuda118.so.
        Maybe you need to compile it from source?" (0.3x-0.42), "Could not find the bitsandbytes
        CUDA binary at ..." (0.43-0.45), "No compatible CUDA binary found at ..." (0.46 and later),
        or python -m bitsandbytes' "Library not found: ...". Its generic "CUDA Setup failed despite
        GPU being available" alone, a bug of some old releases, is not read. Also (0.35-0.42) its CPU
        library loaded ("compiled without GPU support", "bin .../libbitsandbytes_cpu.so", "CUDA SETUP:
        Loading binary .../libbitsandbytes_cpu.so...") beside a line its CUDA setup logs only after
        torch.cuda.is_available() was True ("Unknown CUDA exception!", "CUDA exception! Error code:",
        "No GPU detected! Check your CUDA paths", "No libcudart.so found!", "PyTorch settings found",
        "CUDA detection failed!"): a warning, naming the CUDA paths it complained about; and, at info,
        "libbitsandbytes_cpu.so: undefined symbol: cadam32bit_grad_fp32" alone, which says the CPU
        library was loaded where GPU code was wanted but not that a GPU was there (0.39-0.42 print
        it from their own probe, on a machine without a GPU too). "compiled without GPU support"
        (or the CPU library's path) alone is info as well: a machine without a GPU prints it too,
        so it establishes the CPU library, not a fault.

    Why it matters:
        bitsandbytes ships one library per CUDA version; without the one for the CUDA that torch
        uses, it loads its CPU library (or refuses, from 0.46), and 8-bit optimizers and 4/8-bit
        quantisation on the GPU fail. A source build made for one CUDA, or a release older than
        the CUDA torch was built with, ends here.

    How to fix:
        python -m bitsandbytes shows the CUDA version it detected and the library it looked for.
        Install a bitsandbytes release that ships that library (pip install -U bitsandbytes), or
        compile it from source for that CUDA version; BNB_CUDA_VERSION picks another of the
        libraries it ships.

    References:
        - https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.42.0/bitsandbytes/cuda_setup/main.py
        - https://github.com/bitsandbytes-foundation/bitsandbytes/blob/0.50.1/bitsandbytes/cextension.py
        - https://github.com/TimDettmers/bitsandbytes/issues/487
    """
    sym = ticket_symptoms(f)
    s = next((sym[k] for k in ("frameworks:bnb-required-library-not-found", "frameworks:bnb-cuda-binary-not-found",
                               "frameworks:bnb-no-compatible-binary", "frameworks:bnb-diagnostics-library-not-found")
              if k in sym), None)
    if s is None:
        hit = _bnb_cpu_library_where_gpu_wanted(sym)
        if hit is not None:
            yield hit
        return
    cuda = str(s.get("cuda") or "")
    named = f" for CUDA {cuda[:-1]}.{cuda[-1]}" if cuda.isdigit() and len(cuda) >= 2 else ""
    yield Hit(message=f"bitsandbytes has no native library{named} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): its GPU code (8-bit optimizers, 4/8-bit "
                      "quantisation) cannot run",
              fix="python -m bitsandbytes   # the CUDA version it detected and the library it looked for\n"
                  "pip install -U bitsandbytes   # a release that ships that library; or compile it from source for "
                  "that CUDA version",
              evidence=ticket_evidence(s))


# bitsandbytes 0.36-0.42 cuda_setup/main.py: evaluate_cuda_setup returns the CPU library at once where
# torch.cuda.is_available() is False; these lines are logged only past that return (check_cuda_result,
# the driver query, "PyTorch settings found"), or, for the last, by cextension.py where it is True.
_BNB_GPU_SEEN = ("frameworks:bnb-unknown-cuda-exception", "frameworks:bnb-cuda-exception",
                 "frameworks:bnb-no-gpu-detected", "frameworks:bnb-no-libcudart", "frameworks:bnb-pytorch-settings-found",
                 "frameworks:bnb-cuda-detection-failed", "frameworks:bnb-cuda-setup-failed")
# What its path search complained about (the fix names them).
_BNB_PATHS = ("frameworks:bnb-nonexistent-dirs", "frameworks:bnb-dir-without-libcudart",
              "frameworks:bnb-libcudart-not-in-env", "frameworks:bnb-libcuda-not-found", "frameworks:bnb-no-libcudart")


def _bnb_cpu_library_where_gpu_wanted(sym: dict):
    """bitsandbytes' CPU library loaded, with the evidence that a GPU was there (a warning), or alone or with
    GPU code looked up in it (info: a machine without a GPU prints it too)."""
    loaded = sym.get("frameworks:bnb-compiled-without-gpu") or sym.get("frameworks:bnb-bin-cpu")
    binary = sym.get("frameworks:bnb-loading-binary")
    if loaded is None and binary is not None and "libbitsandbytes_cpu" in str(binary.get("path") or ""):
        loaded = binary
    symbol = sym.get("frameworks:bnb-cpu-undefined-symbol")
    seen = next((sym[k] for k in _BNB_GPU_SEEN if k in sym), None)
    if seen is None and symbol is None:
        if loaded is None:
            return None
        return Hit(message=f"bitsandbytes loaded its CPU library (line {loaded.get('line')}: \"{told_text(loaded)}\"): its "
                           "GPU functions (8-bit optimizers, 4/8-bit quantisation) are unavailable in this process. The "
                           "paste does not show whether torch saw a GPU: on a machine without one this is expected; "
                           "where this node has one, bitsandbytes found no CUDA library for it.",
                   fix="python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'   "
                       "# whether torch sees a GPU at all, and the CUDA it was built with\n"
                       "python -m bitsandbytes   # the CUDA version it detected and the library it loaded\n"
                       "pip install -U bitsandbytes   # 0.43 and later pick their CUDA library from torch's own CUDA "
                       "version and ship it in the wheel",
                   evidence=ticket_evidence(loaded), severity="info")
    if loaded is None and symbol is None:
        return None
    paths = [sym[k] for k in _BNB_PATHS if k in sym]
    said = []
    for p in paths:
        if p.get("dirs"):
            said.append(f"directories on its search path that do not exist: {str(p['dirs'])[:200]}")
        elif p.get("path"):
            said.append(f"{str(p['path'])[:120]} holds no libcudart.so")
        else:
            said.append(f"line {p.get('line')}: \"{told_text(p)}\"")
    complained = (" It complained about its CUDA paths: " + "; ".join(said) + ".") if said else ""
    fix = ["python -m bitsandbytes   # the CUDA version it detected, the paths it searched and the library it loaded",
           "python -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'   "
           "# the CUDA torch was built with, and whether it sees the GPU",
           "echo \"$LD_LIBRARY_PATH\"   # 0.3x searches CONDA_PREFIX/lib, LD_LIBRARY_PATH and /usr/local/cuda/lib64 "
           "for libcudart.so: drop directories that do not exist, add the one that holds it"]
    if any(p.get("dirs") for p in paths):
        fix.append("ls -d $(echo \"$LD_LIBRARY_PATH\" | tr ':' ' ')   # the directories it named as non-existent "
                   "show here as 'No such file or directory'")
    fix.append("pip install -U bitsandbytes   # 0.43 and later pick their CUDA library from torch's own CUDA "
               "version and ship it in the wheel")
    if seen is not None:
        first = loaded or symbol
        return Hit(message=f"bitsandbytes loaded its CPU library (line {first.get('line')}: \"{told_text(first)}\") "
                           f"although torch saw a GPU: line {seen.get('line')}, \"{told_text(seen)}\", is logged "
                           "only after torch.cuda.is_available() returned True. Its own CUDA setup failed, so "
                           "8-bit optimizers and 4/8-bit GPU quantisation fail." + complained,
                   fix="\n".join(fix), evidence=ticket_evidence(seen))
    return Hit(message=f"line {symbol.get('line')}: \"{told_text(symbol)}\": bitsandbytes looked its GPU function "
                       f"{str(symbol.get('symbol'))[:60]} up in its CPU library: the CUDA library was not loaded. The "
                       "paste does not show whether torch saw a GPU (0.39-0.42 print this line from their own "
                       "probe, on a machine without a GPU too); where this node has one, bitsandbytes' CUDA setup "
                       "did not find it." + complained,
               fix="\n".join(fix), evidence=ticket_evidence(symbol), severity="info")
