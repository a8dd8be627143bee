"""Frameworks above torch whose own kernels lack the GPU (framework-missing-arch), and intent a
ticket states in its text (bf16, flash-attn 2) beside a GPU it names. Real messages from real
tickets (tests/fixtures/tickets), real nvidia-smi recordings for the GPUs; the held-out tickets
were added after the rule was written and are checked through the CLI."""

from __future__ import annotations

import json

import pytest

from conftest import report_of, ticket
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import find_gpu_names
from rulekit import PASTES, facts, fired, nvsmi_node, run_rule, set_path

H100 = "h100-kvm-1gpu"
V100S = "datakit_8x_v100s-pcie-32gb.xml"


def ticket_text(name: str) -> str:
    return ticket(name).read_text(encoding="utf-8")


def with_ticket(g, text: str, **changes):
    set_path(g["facts"], "ticket.symptoms", find_messages(text))
    set_path(g["facts"], "ticket.gpus_named", find_gpu_names(text))
    for path, value in changes.items():
        set_path(g["facts"], path, value)
        g["unknown"].pop(path, None)
    return g


def symbols(name: str) -> dict:
    doc = report_of("check", "--from", str(ticket(name)))
    return {f["symbol"]: f for f in doc["findings"] if f["severity"] in ("error", "warning")}


def test_flash_attn_refusal_on_a_v100s(tmp_path):
    g = with_ticket(nvsmi_node(V100S, tmp_path), ticket_text("flash-attention-1230-t1000-turing"))
    (f,) = fired("framework-missing-arch", g)
    assert "7.0" in f.message and "8.0" in f.message and 'attn_implementation="sdpa"' in f.fix


def test_flash_attention_2_asked_for_on_an_h100_is_fine():
    g = with_ticket(facts(H100), ticket_text("flash-attention-762-t4-bf16-flash-attn2"))
    assert not fired("framework-missing-arch", g)


def test_flash_attention_2_asked_for_on_a_v100s(tmp_path):
    g = with_ticket(nvsmi_node(V100S, tmp_path), ticket_text("flash-attention-762-t4-bf16-flash-attn2"))
    (f,) = fired("framework-missing-arch", g)
    assert "flash_attention_2" in f.message and "V100S" in f.message


def test_framework_kernel_without_code_but_torch_lacks_the_gpu_is_torchs_finding(tmp_path):
    text = ticket_text("sglang-831-v100-rmsnorm-no-kernel-image")
    runs = {"torch.installed": True, "torch.build": "cuda", "torch.version": "2.4.0+cu124",
            "torch.arch_list": ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]}
    (f,) = fired("framework-missing-arch", with_ticket(nvsmi_node(V100S, tmp_path / "a"), text, **runs))
    assert "RMSNorm" in f.message
    # The same message under a torch whose own list stops short of the V100 (sm_70): one cause,
    # reported once, by torch-missing-arch.
    lacks = dict(runs, **{"torch.arch_list": ["sm_80", "sm_86", "sm_90"]})
    g = with_ticket(nvsmi_node(V100S, tmp_path / "b"), text, **lacks)
    assert not fired("framework-missing-arch", g)
    assert fired("torch-missing-arch", g)


def test_torch_warning_pasted_beside_a_framework_message_is_torchs_finding():
    text = (ticket_text("cryodrgn-91-rtx3090-sm86-prose") + "\n"
            + ticket_text("sglang-24302-rtx2080-gemma-rmsnorm-sm80-only"))
    assert not fired("framework-missing-arch", with_ticket(facts(H100), text))


def test_gpu_names_in_prose_are_whole_product_names():
    names = {g["gpu"]: g["cc"] for g in find_gpu_names(ticket_text("litgpt-205-bf16-mixed-t4-prose"))}
    assert names == {"T4": "7.5"}
    names = {g["gpu"]: g["cc"] for g in find_gpu_names(ticket_text("minference-51-v100s-flash-attn-ampere-only"))}
    assert names == {"Tesla V100S": "7.0"}
    # Model numbers without a brand before them or "GPU" after them are not GPU names.
    assert find_gpu_names("We ran A100 tests and T4 configs with the a10 preset; version P100 of the tool.") == []


def test_gpus_named_with_different_capabilities_are_no_answer():
    text = "Works on my NVIDIA A100 but not on the Tesla T4.\nmodel = X(attn_implementation=\"flash_attention_2\")\n"
    assert not fired("framework-missing-arch", with_ticket(facts(H100, gpus=[]), text))


def test_bf16_intent_tokens():
    found = {s["id"] for s in find_messages("deepspeed train.py --bf16 False --fp16 True\n")}
    assert "prose:bf16-intent" not in found
    for line in ("fabric = L.Fabric(precision=\"bf16-mixed\")", "python train.py --bf16 --tf32",
                 "model.to(torch.bfloat16)"):
        assert "prose:bf16-intent" in {s["id"] for s in find_messages(line + "\n")}, line


def test_bf16_intent_on_a_gpu_with_bf16_is_silent():
    g = with_ticket(facts(H100), "trainer = Trainer(precision=\"bf16-mixed\")\n")
    assert not fired("bf16-unsupported", g)


def test_bf16_intent_in_prose_beside_a_named_t4():
    g = with_ticket(facts(H100, gpus=[]), ticket_text("litgpt-205-bf16-mixed-t4-prose"))
    (f,) = fired("bf16-unsupported", g)
    assert "16-mixed" in f.fix and "T4" in f.message


@pytest.mark.parametrize("name, must", [
    ("flash-attention-1230-t1000-turing", {"framework-missing-arch"}),
    ("flash-attention-762-t4-bf16-flash-attn2", {"framework-missing-arch", "bf16-unsupported"}),
    ("sglang-24302-rtx2080-gemma-rmsnorm-sm80-only", {"framework-missing-arch"}),
    ("sglang-831-v100-rmsnorm-no-kernel-image", {"framework-missing-arch"}),
    ("minference-51-v100s-flash-attn-ampere-only", {"framework-missing-arch"}),
    ("litgpt-205-bf16-mixed-t4-prose", {"bf16-unsupported"}),
])
def test_tickets_through_the_cli(name, must):
    found = symbols(name)
    assert must <= set(found), sorted(found)
    assert "torch-missing-arch" not in found


def test_prose_that_only_names_a_gpu_is_answered_with_what_was_read_and_no_verdict(tmp_path):
    """Issue 24: what was read is answered, never refused; a GPU name alone judges nothing, and the
    reply says so instead of passing."""
    from conftest import run_main

    prose = tmp_path / "prose.txt"
    prose.write_text("Training on our Tesla T4 got slower since last week, any idea?\n")
    r = run_main("check", "--from", str(prose))
    assert r.returncode == 0, r.stderr
    assert "GPU named in the text: Tesla T4 (line 1)" in r.stdout
    assert "no findings in what the paste shows" in r.stdout and "✓" not in r.stdout
    doc = json.loads(run_main("check", "--from", str(prose), "--format", "json").stdout)
    assert not [f for f in doc["findings"] if f["severity"] in ("error", "warning")]


def test_a_paste_with_nothing_read_is_still_refused(tmp_path):
    from conftest import run_main

    prose = tmp_path / "prose.txt"
    prose.write_text("Training got slower since last week, any idea?\n")
    r = run_main("check", "--from", str(prose))
    assert r.returncode == 2 and "nothing hpcdoctor can read" in r.stderr and r.stderr.count("\n") == 1


def test_torch_wheel_named_with_an_older_cuda_than_the_gpus_major():
    g = with_ticket(facts(H100, gpus=[], torch=None), ticket_text("dinet-100-rtx3090-cu101-prose"))
    (f,) = fired("torch-missing-arch", g)
    assert "CUDA 10.1" in f.message and "8.6" in f.message


@pytest.mark.parametrize("text", [
    "I have a RTX 3090 and installed torch==1.12.1+cu113 as the README says.\n",   # CUDA 11.3 builds sm_86
    "Our Tesla V100 runs torch==1.7.1+cu101 from the requirements.\n",              # 7.0 needs CUDA 9.0
    "torch==1.7.1+cu101 on a Tesla T4 and an NVIDIA A100.\n",                       # two GPUs: no answer
    "The NVIDIA H100 box has torch==1.7.1+cu101.\n",                               # major 9: not in the table
])
def test_torch_wheel_named_silent(text):
    # torch unknown and nothing in the ticket to judge: skipped as unknown, never a finding.
    findings, _ = run_rule("torch-missing-arch", with_ticket(facts(H100, gpus=[], torch=None), text))
    assert not findings


@pytest.mark.parametrize("name, sid, fields", [
    ("flashinfer-1107-v100-decode-kernel-launch-failed", "frameworks:framework-kernel-no-image", {"kernel": "SingleDecodeWithKVCache"}),
    ("sglang-865-topktopp-sampling-no-kernel-image", "frameworks:framework-kernel-no-image", {"kernel": "TopKTopPSamplingFromProbs"}),
    ("sglang-1058-t4-flashinfer-cuda-error-209", "frameworks:framework-cuda-error-209", {"framework": "flashinfer"}),
])
def test_flashinfer_error_forms(name, sid, fields):
    found = {s["id"]: s for s in find_messages(ticket_text(name))}
    assert sid in found, sorted(found)
    for k, v in fields.items():
        assert found[sid][k] == v


def test_torchs_own_no_kernel_image_is_not_a_framework_message():
    # torch's generic error (c10's CUDA check) names no framework kernel: it stays torch-missing-arch's.
    text = ticket_text("sd-webui-nix-9-rtx5090-journald-prefixed")
    found = {s["id"] for s in find_messages(text)}
    assert not {"frameworks:framework-kernel-no-image", "frameworks:framework-cuda-error-209"} & found


@pytest.mark.parametrize("name", [
    "transformers-41875-a100-flash-attn-installed-healthy",
    "litgpt-150-bf16-mixed-rtx-a6000-healthy",
])
def test_held_out_healthy_controls_stay_silent(name):
    found = symbols(name)
    assert not {"framework-missing-arch", "bf16-unsupported"} & set(found), sorted(found)


def test_vllm_lora_refusal_names_the_merge_fix(tmp_path):
    g = with_ticket(nvsmi_node(V100S, tmp_path), ticket_text("vllm-3197-v100-punica-lora-cc80"))
    (f,) = fired("framework-missing-arch", g)
    assert "8.0" in f.message and "merge_and_unload" in f.fix
    # vLLM's own minimum is keyed by release (sdists 0.19.1 / 0.20.0: 7.0, then 7.5): a V100S (7.0)
    # runs the base model only before 0.20.0, and the message says which releases.
    assert "vLLM documents 7.0+ before 0.20.0, 7.5+ from it" in f.message


def test_flash_attn_installed_is_a_warning_asked_for_is_an_error():
    # minference#51 lists flash-attn==2.6.0.post1 beside a Tesla V100S: code that selects it fails,
    # but an installed package may never be used (libraries fall back to SDPA): a warning.
    installed = symbols("minference-51-v100s-flash-attn-ampere-only")["framework-missing-arch"]
    assert installed["severity"] == "warning" and "is installed" in installed["message"]
    # flash-attention#762 passes attn_implementation="flash_attention_2" on a T4: it will fail.
    asked = symbols("flash-attention-762-t4-bf16-flash-attn2")["framework-missing-arch"]
    assert asked["severity"] == "error" and "asks for flash-attn 2" in asked["message"]


# vLLM's LoRA on a GPU below 8.0 (knowledge/frameworks.toml, vllm-lora-punica). The lines are
# verbatim from public vLLM issues (Apache-2.0 repository; issue text quoted for testing, read
# 2026-11-23): #2810's title and engine arguments, #3826's "args: Namespace(..., enable_lora=True"
# and start-up lines (a cut from inside the first of them: the stored excerpt starts there).
VLLM_2810 = ("# Error when initializing LLMEngine with multi lora using vllm==0.3.0 - RuntimeError: CUDA error: "
             "no kernel image is available for execution on the device\n"
             "    engine_args = EngineArgs(model=\"meta-llama/Llama-2-7b-chat-hf\",\n"
             "                             revision=\"c1b0db933684edbfe29a06fa47eb19cc48025e93\",\n"
             "                             enable_lora=True,\n")
VLLM_3826 = ("m_gpu_blocks=None, max_num_batched_tokens=None, max_num_seqs=256, max_logprobs=5, disable_log_stats=False, "
             "quantization=None, enforce_eager=True, max_context_len_to_capture=8192, disable_custom_all_reduce=False, "
             "tokenizer_pool_size=0, tokenizer_pool_type='ray', tokenizer_pool_extra_config=None, enable_lora=True, "
             "max_loras=1, max_lora_rank=64, lora_extra_vocab_size=256, lora_dtype='auto', max_cpu_loras=None, "
             "device='auto', image_input_type=None, image_token_id=None, image_input_shape=None, image_feature_size=None, "
             "scheduler_delay_factor=0.0, enable_chunked_prefill=False, engine_use_ray=False, disable_log_requests=True, "
             "max_log_len=None)\n"
             "WARNING 04-03 18:43:13 config.py:767] Casting torch.bfloat16 to torch.float16.\n"
             "INFO 04-03 18:43:13 llm_engine.py:74] Initializing an LLM engine (v0.4.0.post1) with config: "
             "model='/export/models/qwen/Qwen1.5-14B-Chat', tokenizer='/export/models/qwen/Qwen1.5-14B-Chat', "
             "tokenizer_mode=auto, revision=None, tokenizer_revision=None, trust_remote_code=False, dtype=torch.float16, "
             "max_seq_len=512, download_dir=None, load_format=auto, tensor_parallel_size=1, disable_custom_all_reduce=False, "
             "quantization=None, enforce_eager=True, kv_cache_dtype=auto, device_config=cuda, seed=0)\n")


@pytest.mark.parametrize("text, version", [(VLLM_2810, "0.3.0"), (VLLM_3826, "0.4.0.post1")])
def test_vllm_lora_with_a_punica_release_on_a_v100s_is_an_error(tmp_path, text, version):
    g = with_ticket(nvsmi_node(V100S, tmp_path), text)
    (f,) = fired("framework-missing-arch", g)
    assert f.severity == "error" and f"vLLM {version}" in f.message and "7.0" in f.message
    assert f.evidence["vllm.version"] == version and "merge_and_unload" in f.fix


@pytest.mark.parametrize("text", [VLLM_2810, VLLM_3826])
def test_vllm_lora_on_an_h100_is_silent(text):
    assert not fired("framework-missing-arch", with_ticket(facts(H100), text))


def test_vllm_lora_without_a_release_named_is_a_warning():
    # vllm#4604: --enable-lora on a "Tesla V100-SXM2-16GB" named in prose, the releases in prose only.
    found = symbols("vllm-4604-lora-v100-no-kernel-image")
    f = found["framework-missing-arch"]
    assert f["severity"] == "warning" and "does not say which vLLM ran" in f["message"]
    assert "torch-missing-arch" not in found


def test_vllm_lora_only_in_releases_after_the_punica_kernels_is_silent(tmp_path):
    # The same engine arguments with a release from the Triton kernels on: the range ends there.
    from hpcdoctor import knowledge

    fixed = knowledge.load("frameworks")["framework"]["vllm-lora-punica"]["fixed_in"]
    text = VLLM_3826.replace("(v0.4.0.post1)", f"(v{fixed})")
    assert not fired("framework-missing-arch", with_ticket(nvsmi_node(V100S, tmp_path), text))
    last = VLLM_3826.replace("(v0.4.0.post1)", "(v0.5.3.post1)")
    assert fired("framework-missing-arch", with_ticket(nvsmi_node(V100S, tmp_path / "b"), last))


def test_punica_refusal_of_vllm_0_3_0_without_spaces():
    # vllm-0.3.0's vllm/lora/punica.py wrote "capability>=8.0" (no spaces); later releases ">= 8.0".
    (s,) = [s for s in find_messages("ImportError: punica LoRA kernels require compute capability>=8.0\n")
            if s["id"] == "frameworks:vllm-lora-punica-cc"]
    assert s["min_cc"] == "8.0"


# cuBLAS of a CUDA 9.0 torch build on Turing (knowledge/frameworks.toml, cublas_turing): the two
# held-out problem tickets and two healthy controls were found after the rule was written.
@pytest.mark.parametrize("name, gpu", [
    ("pytorch-20860-2080ti-cu90-build-cublas", "GeForce RTX 2080 Ti"),
    ("pytorch-21459-2080-cu90-build-cublas-prose-says-cuda10", "GeForce RTX 2080"),
])
def test_cublas_error_on_turing_under_a_cuda9_build(name, gpu):
    f = symbols(name)["torch-missing-arch"]
    assert f["severity"] == "error" and gpu in f["message"] and "9.0.176" in f["message"]
    assert "framework-missing-arch" not in symbols(name)


@pytest.mark.parametrize("name", [
    "pytorch-7548-cublas-input-data-healthy",             # CUDA 9.0, no Turing GPU: bad input data
    "mmdetection-1455-2080ti-cublas-batch-size-healthy",  # a 2080Ti, no build named: batch size
])
def test_cublas_error_without_a_known_cuda9_build_on_turing_is_silent(name):
    assert "torch-missing-arch" not in symbols(name)
    assert "torch:cublas-execution-failed" in {s["id"] for s in find_messages(ticket_text(name))}


def test_cublas_error_on_turing_under_a_cuda10_build_is_silent(tmp_path):
    text = ticket_text("pytorch-20860-2080ti-cu90-build-cublas")
    assert "CUDA used to build PyTorch: 9.0.176" in text
    paste = tmp_path / "cu100.txt"
    paste.write_text(text.replace("CUDA used to build PyTorch: 9.0.176", "CUDA used to build PyTorch: 10.0.130"))
    doc = report_of("check", "--from", str(paste))
    assert "torch-missing-arch" not in {f["symbol"] for f in doc["findings"]}


# The user's own line naming CUDA and torch together ("CUDA 9.0 pytorch 1.1.0", "Pytorch 1.0.1 and
# cuda 9.0"): that CUDA may be the system toolkit's, so the finding is a warning that says so and
# gives the line that tells the build's CUDA for certain.
@pytest.mark.parametrize("name, gpu, said", [
    ("structureflow-12-titan-rtx-cuda90-prose", "NVIDIA TITAN RTX", "CUDA 9.0 with torch 1.1.0"),
    ("pytorch-18620-2080ti-pytorch-101-cuda90-cublas.txt", "RTX 2080 Ti", "CUDA 9.0 with torch 1.0.1"),
])
def test_cublas_error_on_turing_with_cuda9_in_the_users_words_is_a_warning(name, gpu, said):
    path = PASTES / name if name.endswith(".txt") else ticket(name)
    (f,) = [f for f in report_of("check", "--from", str(path))["findings"] if f["symbol"] == "torch-missing-arch"]
    assert f["severity"] == "warning" and gpu in f["message"] and said in f["message"]
    assert "if it is the CUDA torch was built with" in f["message"]
    assert f["fix"].startswith("python -c 'import torch; print(torch.__version__, torch.version.cuda)'")
    assert f["evidence"]["torch.cuda_from"] == "the user's words"


def test_cuda9_in_the_users_words_without_a_turing_gpu_named_is_silent():
    """pdtb3#8: the same cuBLAS failure and "PyTorch 1.1.0,CUDA 9.0.176", but no GPU named."""
    path = PASTES / "pdtb3-8-cublas-pytorch-110-cuda90-no-gpu-named.txt"
    read = {s["id"]: s for s in find_messages(path.read_text(encoding="utf-8"))}
    assert read["prose:torch-cuda-versions-said"]["cuda"] == "9.0"
    assert "torch-missing-arch" not in {f["symbol"] for f in report_of("check", "--from", str(path))["findings"]}


def test_cuda10_in_the_users_words_on_turing_is_silent(tmp_path):
    text = ticket_text("structureflow-12-titan-rtx-cuda90-prose")
    assert "CUDA 9.0 pytorch 1.1.0" in text
    paste = tmp_path / "cuda10.txt"
    paste.write_text(text.replace("CUDA 9.0 pytorch 1.1.0", "CUDA 10.0 pytorch 1.1.0"))
    assert "torch-missing-arch" not in {f["symbol"] for f in report_of("check", "--from", str(paste))["findings"]}


def test_the_users_versions_line_never_demotes_torchs_own_no_kernel_image():
    """pytorch#52736: "PyTorch 1.7.1 installed with CUDA 10.2 on a Geforce RTX 3070" beside torch's
    own "CUDA error: no kernel image ...": the stated fault is the error, the words change nothing."""
    path = PASTES / "pytorch-52736-rtx3070-pytorch-171-cuda102-no-kernel-image.txt"
    read = {s["id"]: s for s in find_messages(path.read_text(encoding="utf-8"))}
    assert (read["prose:torch-cuda-versions-said"]["torch"], read["prose:torch-cuda-versions-said"]["cuda"]) == ("1.7.1", "10.2")
    (f,) = [f for f in report_of("check", "--from", str(path))["findings"] if f["symbol"] == "torch-missing-arch"]
    assert f["severity"] == "error" and "RTX 3070" in f["message"] and "torch.cuda_from" not in f["evidence"]
