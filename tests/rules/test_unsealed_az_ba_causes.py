"""Causes and non-causes the pastes of sets AZ and BA (unsealed 2026-11-30) show in their emitters'
own words, each read from the real paste; where a variant is needed, the real paste is edited in
memory and the edit is said."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, read_paste, run_rule, ticket_file_facts

AZ = FIXTURES / "tickets_blind_az"
BA = FIXTURES / "tickets_blind_ba"

TRTLLM_TITLE = AZ / "tensorrt-llm-198-fmha-unsupported-architecture.txt"
TRTLLM_SM75 = AZ / "tensorrt-llm-1515-fmha-unsupported-on-sm75.txt"
ROCM_BF16 = AZ / "transformers-24451-bf16-check-ignores-rocm-healthy.txt"
DRBD_OFED = BA / "drbd-59-rdma-module-built-against-inbox-not-ofed-headers.txt"
BUMBLEBEE = BA / "bumblebee-207-persistence-mode-cleared-by-bumblebee-healthy.txt"


# --- TensorRT-LLM's own architecture check ------------------------------------------------------

def test_tensorrt_llms_unsupported_architecture_assertion_is_framework_missing_arch(tmp_path):
    for paste in (TRTLLM_TITLE, TRTLLM_SM75):
        (f,) = fired("framework-missing-arch", ticket_file_facts(tmp_path, paste))
        assert "TensorRT-LLM" in f.message and "fmhaRunner.cpp" in f.message and "SM 8.0" in f.message
        assert "trtllm-build --context_fmha disable" in f.fix


def test_an_unsupported_architecture_assertion_outside_tensorrt_llm_is_not_read():
    # edited: the same assertion words from a path that is not TensorRT-LLM's
    text = read_paste(TRTLLM_SM75).replace("/tensorrt_llm/cpp/tensorrt_llm/kernels/contextFusedMultiHeadAttention/",
                                           "/src/mylib/")
    assert "frameworks:tensorrt-llm-unsupported-architecture" in {s["id"] for s in find_messages(read_paste(TRTLLM_SM75))}
    assert "frameworks:tensorrt-llm-unsupported-architecture" not in {s["id"] for s in find_messages(text)}


# --- torch.version.cuda is None on a ROCm build too ---------------------------------------------

def test_version_cuda_none_said_of_a_hip_build_is_not_a_cpu_build(tmp_path):
    findings, _ = run_rule("torch-cpu-only", ticket_file_facts(tmp_path, ROCM_BF16))
    assert not findings


def test_version_cuda_none_without_hip_on_the_line_is_still_a_cpu_build(tmp_path):
    # edited: the same sentence without "when using hip"
    text = read_paste(ROCM_BF16).replace("`torch.version.cuda=None` when using hip", "`torch.version.cuda=None`")
    (f,) = fired("torch-cpu-only", ticket_file_facts(tmp_path, ROCM_BF16, text))
    assert "torch.version.cuda is None" in f.message


# --- the kernel's symbol-version refusal of a module --------------------------------------------

def test_a_module_disagreeing_about_a_symbol_version_is_kernel_module_symbol_version_mismatch(tmp_path):
    (f,) = fired("kernel-module-symbol-version-mismatch", ticket_file_facts(tmp_path, DRBD_OFED))
    assert "drbd_transport_rdma" in f.message and "ib_dealloc_pd_user" in f.message
    assert "modinfo -F vermagic drbd_transport_rdma" in f.fix and "modules.symbols" in f.fix


def test_the_err_22_line_alone_is_the_same_refusal_and_err_2_is_not(tmp_path):
    lines = read_paste(DRBD_OFED).splitlines()
    alone = "\n".join(x for x in lines if "disagrees" not in x)   # edited: only the "(err -22)" line left
    (f,) = fired("kernel-module-symbol-version-mismatch", ticket_file_facts(tmp_path, DRBD_OFED, alone))
    assert "(err -22)" in f.message
    missing = alone.replace("(err -22)", "(err -2)")   # edited: a symbol nothing exports
    assert not fired("kernel-module-symbol-version-mismatch", ticket_file_facts(tmp_path, DRBD_OFED, missing))


# --- a laptop's GPU switcher and "fallen off the bus" -------------------------------------------

def test_fallen_off_the_bus_under_a_laptop_gpu_switcher_is_an_info_not_a_drain(tmp_path):
    findings, _ = run_rule("gpu-fallen-off-bus", ticket_file_facts(tmp_path, BUMBLEBEE))
    assert [f.severity for f in findings] == ["info"]
    assert "optirun" in findings[0].message and "drain" not in findings[0].fix


def test_fallen_off_the_bus_without_a_switcher_is_still_the_error(tmp_path):
    # edited: the optirun steps and the word Bumblebee taken out
    text = "\n".join(x for x in read_paste(BUMBLEBEE).splitlines() if "optirun" not in x and "bumblebee" not in x.lower()
                     or "fallen off the bus" in x)
    text = text.replace("optirun fails", "the program fails")
    (f,) = fired("gpu-fallen-off-bus", ticket_file_facts(tmp_path, BUMBLEBEE, text))
    assert f.severity == "error" and "state=drain" in f.fix


# --- torch's old out-of-memory figures beside the user's "other processes take up 15G" ----------

VLLM_OTHERS = AZ / "vllm-783-other-processes-hold-gpu-memory.txt"


def test_a_third_of_the_card_held_outside_with_other_processes_said_is_gpu_memory_in_use(tmp_path):
    (f,) = fired("gpu-memory-in-use", ticket_file_facts(tmp_path, VLLM_OTHERS))
    assert f.severity == "warning" and "16.1 GiB" in f.message and "other processes" in f.message


def test_the_same_gap_without_the_users_words_stays_below_the_old_forms_half(tmp_path):
    # edited: the user's sentence about other processes taken out
    text = read_paste(VLLM_OTHERS).replace("there are other processes taking up about 15G of Memory-Usage, but ", "")
    findings, _ = run_rule("gpu-memory-in-use", ticket_file_facts(tmp_path, VLLM_OTHERS, text))
    assert not findings


# --- torch's cudaMallocAsync out-of-memory (ComfyUI's allocator) --------------------------------

COMFY_ASYNC = AZ / "comfyui-3278-vram-held-outside-torch.txt"


def test_the_async_allocators_oom_with_more_than_a_context_outside_torch_is_an_info(tmp_path):
    (f,) = fired("gpu-memory-in-use", ticket_file_facts(tmp_path, COMFY_ASYNC))
    assert f.severity == "info" and "2.4 GiB" in f.message and "cudaMallocAsync" in f.message


def test_the_async_allocators_oom_with_only_a_context_outside_is_silent(tmp_path):
    # edited: 23.6 GiB allocated of the 24 GiB card, 0 free: 0.4 GiB outside, a CUDA context's size
    text = read_paste(COMFY_ASYNC).replace("Currently allocated     : 21.55 GiB", "Currently allocated     : 23.60 GiB")
    findings, _ = run_rule("gpu-memory-in-use", ticket_file_facts(tmp_path, COMFY_ASYNC, text))
    assert not findings


# --- Ray's refusal as a title keeps it, without its two figures ---------------------------------

RAY_TITLE = AZ / "kiirkirjutaja-5-ray-object-store-exceeds-dev-shm.txt"


def test_rays_object_store_refusal_without_its_figures_is_shm_too_small(tmp_path):
    (f,) = fired("shm-too-small", ticket_file_facts(tmp_path, RAY_TITLE))
    assert "Ray refused to start" in f.message and "--shm-size" in f.fix


def test_the_title_with_other_words_is_not_rays_refusal(tmp_path):
    # edited: the title's sentence about another limit
    text = read_paste(RAY_TITLE).replace("exceeds /dev/shm size", "exceeds the memory limit")
    findings, _ = run_rule("shm-too-small", ticket_file_facts(tmp_path, RAY_TITLE, text))
    assert not findings


# --- builds without the GPU, in the framework's own words ---------------------------------------

TF_NO_CUDA = AZ / "tensorflow-62080-windows-build-without-cuda.txt"
IPEX_NO_XPU = AZ / "intel-extension-for-pytorch-244-release-without-xpu.txt"


def test_tensorflows_is_built_with_cuda_false_is_framework_built_without_gpu(tmp_path):
    # the paste's machine runs Windows: the fix is native Windows' last GPU release, not the Linux wheel
    (f,) = fired("framework-built-without-gpu", ticket_file_facts(tmp_path, TF_NO_CUDA))
    assert "TensorFlow" in f.message and 'pip install "tensorflow<2.11"' in f.fix and "and-cuda" not in f.fix
    # edited: the operating system line names Ubuntu
    text = read_paste(TF_NO_CUDA).replace("Windows 10 22H2 19045.3448", "Ubuntu 22.04")
    (g,) = fired("framework-built-without-gpu", ticket_file_facts(tmp_path, TF_NO_CUDA, text))
    assert 'pip install "tensorflow[and-cuda]"' in g.fix


def test_is_built_with_cuda_true_is_not_a_build_without_gpu(tmp_path):
    # edited: the answer True
    text = read_paste(TF_NO_CUDA).replace("print(tf.test.is_built_with_cuda())\nFalse", "print(tf.test.is_built_with_cuda())\nTrue")
    assert not fired("framework-built-without-gpu", ticket_file_facts(tmp_path, TF_NO_CUDA, text))


def test_torch_not_linked_with_xpu_is_framework_built_without_gpu(tmp_path):
    (f,) = fired("framework-built-without-gpu", ticket_file_facts(tmp_path, IPEX_NO_XPU))
    assert "xpu devices" in f.message and "download.pytorch.org/whl/xpu" in f.fix


# --- TORQUE: no feasible nodes for the request --------------------------------------------------

TORQUE_32 = BA / "cbio-cluster-130-torque-32-node-request-no-feasible-nodes.txt"


def test_torques_no_feasible_nodes_is_a_request_larger_than_its_nodes_with_torques_commands(tmp_path):
    (f,) = fired("slurm-request-exceeds-node", ticket_file_facts(tmp_path, TORQUE_32))
    assert f.message.startswith("TORQUE refuses the job") and "pbsnodes -a" in f.fix and "sinfo" not in f.fix


def test_torques_other_queue_limit_refusal_is_not_no_feasible_nodes(tmp_path):
    # edited: the same refusal with no reason after it
    text = read_paste(TORQUE_32).replace(" MSG=cannot locate feasible nodes (nodes file is empty or all systems are busy)", "")
    findings, _ = run_rule("slurm-request-exceeds-node", ticket_file_facts(tmp_path, TORQUE_32, text))
    assert not findings


# --- a site's modulefile failing in Lua ---------------------------------------------------------

LUA_COUNTER = BA / "picongpu-3047-site-module-counter-lua-error.txt"


def test_a_lua_error_in_a_sites_modulefile_is_site_modulefile_lua_error(tmp_path):
    (f,) = fired("site-modulefile-lua-error", ticket_file_facts(tmp_path, LUA_COUNTER))
    assert "/trinity/shared/lmod/lmod/modulefiles/counter/count" in f.message and "line 15" in f.message
    assert "sed -n '12,18p' /trinity/shared/lmod/lmod/modulefiles/counter/count" in f.fix


def test_a_lua_error_in_the_users_own_script_is_not_a_modulefiles(tmp_path):
    # edited: the same error from a Lua script of the user's, outside any modulefiles tree
    text = read_paste(LUA_COUNTER).replace("/trinity/shared/lmod/lmod/modulefiles/counter/count", "/home/me/count.lua")
    assert not fired("site-modulefile-lua-error", ticket_file_facts(tmp_path, LUA_COUNTER, text))


# --- a library from the user's own package tree, found before the installation's ---------------

LUAROCKS_LOCAL = AZ / "torch7-243-stale-local-cutorch-shadows-install.txt"


def test_an_undefined_symbol_in_the_users_luarocks_tree_is_a_shadowing_copy(tmp_path):
    (f,) = fired("duplicate-libraries", ticket_file_facts(tmp_path, LUAROCKS_LOCAL))
    assert ".luarocks/lib" in f.message and "THCState_getDeviceMode" in f.message
    assert "luarocks remove --local" in f.fix


def test_the_same_symbol_missing_from_the_installations_own_copy_is_not_a_shadowing_copy(tmp_path):
    # edited: the library lies in the installation's own tree
    text = read_paste(LUAROCKS_LOCAL).replace("/home/users/uri.cohen/.luarocks/lib/lua/5.1/libcutorch.so",
                                              "/home/users/uri.cohen/torch/install/lib/lua/5.1/libcutorch.so")
    findings, _ = run_rule("duplicate-libraries", ticket_file_facts(tmp_path, LUAROCKS_LOCAL, text))
    assert not findings


def test_torch_not_linked_with_xpu_after_code_without_the_extensions_import_is_an_info(tmp_path):
    healthy = AZ / "intel-extension-for-pytorch-392-ipex-not-imported-healthy.txt"
    (f,) = fired("framework-built-without-gpu", ticket_file_facts(tmp_path, healthy))
    assert f.severity == "info" and "import intel_extension_for_pytorch as ipex" in f.fix


def test_torch_not_linked_with_xpu_alone_is_a_warning_naming_both_causes(tmp_path):
    # edited: only the error line kept
    text = "RuntimeError: PyTorch is not linked with support for xpu devices\n"
    (f,) = fired("framework-built-without-gpu", ticket_file_facts(tmp_path, IPEX_NO_XPU, text))
    assert f.severity == "warning" and "did not import" in f.message


# --- TensorFlow's issue template: a release and a CUDA its build cannot load --------------------

TF_TEMPLATE = AZ / "tensorflow-38090-tf-2-1-needs-cuda-10-1.txt"


def test_tf_2_1_with_cuda_10_2_and_no_gpu_found_is_a_cuda_version_mismatch_warning(tmp_path):
    (f,) = fired("cuda-library-version-mismatch", ticket_file_facts(tmp_path, TF_TEMPLATE))
    assert f.severity == "warning" and "CUDA 10.1" in f.message and "10.2" in f.message
    assert "install CUDA 10.1 with cuDNN 7.6" in f.fix


def test_the_tested_cuda_or_a_later_minor_of_11_is_not_a_mismatch(tmp_path):
    # edited: the CUDA the build was tested with
    same = read_paste(TF_TEMPLATE).replace("CUDA/cuDNN version: 10.2.89", "CUDA/cuDNN version: 10.1.243")
    assert not fired("cuda-library-version-mismatch", ticket_file_facts(tmp_path, TF_TEMPLATE, same))
    # edited: TensorFlow 2.5.0 (built for CUDA 11.2) beside CUDA 11.8: one major, one runtime name
    later = read_paste(TF_TEMPLATE).replace("(use command below): 2.1.0", "(use command below): 2.5.0").replace(
        "CUDA/cuDNN version: 10.2.89", "CUDA/cuDNN version: 11.8")
    findings, _ = run_rule("cuda-library-version-mismatch", ticket_file_facts(tmp_path, TF_TEMPLATE, later))
    assert not findings


def test_a_major_apart_from_a_cuda_11_build_names_that_builds_runtime(tmp_path):
    # edited: TensorFlow 2.5.0 (built for CUDA 11.2) beside CUDA 10.2: libcudart.so.11.0 is what it loads
    text = read_paste(TF_TEMPLATE).replace("(use command below): 2.1.0", "(use command below): 2.5.0")
    (f,) = fired("cuda-library-version-mismatch", ticket_file_facts(tmp_path, TF_TEMPLATE, text))
    assert "libcudart.so.11.0" in f.message and "CUDA 11.2" in f.message
