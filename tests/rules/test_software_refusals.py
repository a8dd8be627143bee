"""Rules that read a program's own refusal of this software stack (xFormers' import warning,
Triton's, a CPU instruction set missing, a DataLoader worker killed for memory, an extension built
for another torch), on verbatim cuts of public tickets (URL beside each), and their silence where
the same words say something else."""

from __future__ import annotations

import re

from conftest import CPUINFO
from hpcdoctor.triage.messages import find_messages
from rulekit import cpuinfo_facts, facts, fired, paste_facts, recorded_paste_facts, run_rule

H100 = "h100-kvm-1gpu"


def silent(symbol: str, gathered) -> bool:
    """No finding (a rule skipped for a fact the paste lacks says nothing either)."""
    return not run_rule(symbol, gathered)[0]


def pasted(text: str):
    return facts(H100, **{"ticket.symptoms": find_messages(text)})




# --- xFormers' import warning: torch-cpu-only (SW002), xformers-without-cuda (SW021) ---------------

# https://github.com/facebookresearch/xformers/issues/982
XFORMERS_982 = """python -m xformers.info
WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)
    Python  3.10.11 (you have 3.10.13)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
"""
# https://github.com/TheLastBen/fast-stable-diffusion/issues (sd-paperspace-85; backticks as pasted)
SD_PAPERSPACE_85 = """`WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
`
`PyTorch 2.0..0+cu118 with CUDA 1108 (you have 1.13.1+cu117)`
"""
# https://github.com/Vchitect/SEINE/issues/21 (a Mac M1: no CUDA, the same torch on both sides)
SEINE_21 = """WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.0.1 with CUDA 1106 (you have 2.0.1)
    Python  3.10.12 (you have 3.10.12)
"""


def test_xformers_finding_a_cpu_torch_is_the_cpu_build(tmp_path):
    told = paste_facts(tmp_path, XFORMERS_982)
    (f,) = fired("torch-cpu-only", told)
    assert "2.2.0+cpu" in f.message and "built for 2.2.0+cu121" in f.message
    assert silent("xformers-without-cuda", told)


def test_xformers_built_for_another_torch(tmp_path):
    told = paste_facts(tmp_path, SD_PAPERSPACE_85)
    (f,) = fired("xformers-without-cuda", told)
    assert "1.13.1+cu117" in f.message and f.fix.startswith("python -m xformers.info")
    assert silent("torch-cpu-only", told)


def test_xformers_same_torch_on_both_sides_is_not_judged(tmp_path):
    told = paste_facts(tmp_path, SEINE_21)
    for sym in ("torch-cpu-only", "xformers-without-cuda"):
        assert silent(sym, told), sym


# --- SW020 triton-gpu-too-old from a title cut short ------------------------------------------

# https://github.com/vllm-project/vllm/issues/14547 (title, cut by GitHub)
VLLM_14547 = ("# [Bug]: RuntimeError: Found Tesla P100-SXM2-16GB which is too old to be supported by the triton GPU "
              "compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but y\n")


def test_triton_too_old_from_a_cut_title():
    (f,) = fired("triton-gpu-too-old", pasted(VLLM_14547))
    assert "Tesla P100-SXM2-16GB (Triton needs compute capability 7.0 or newer)" in f.message


def test_a_live_node_without_a_paste_is_silent():
    for sym in ("torch-cpu-only", "xformers-without-cuda", "triton-gpu-too-old", "host-memory-oom-killed",
                "cpu-lacks-required-isa", "torch-extension-version-mismatch",
                "bitsandbytes-cuda-binary-missing", "torch-extension-cuda-mismatch"):
        findings, _skipped = run_rule(sym, facts(H100))
        assert not findings, sym


# --- MEM006 host-memory-oom-killed --------------------------------------------------------------

# https://github.com/hezhangsprinter/DCPDN/issues/12 (16 GB of RAM; num_workers=0 ran)
DCPDN_12 = """  File "/home/littlemonster/anaconda3/envs/pic/lib/python2.7/site-packages/torch/utils/data/dataloader.py", line 175, in handler
    _error_if_any_worker_fails()
RuntimeError: DataLoader worker (pid 19597) is killed by signal: Killed.
"""
# https://github.com/NVIDIA/Megatron-LM/issues/878 (blind set A: /dev/shm, not host memory)
MEGATRON_878 = ("RuntimeError: DataLoader worker (pid 56811) is killed by signal: Bus error. It is possible that "
                "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n")
# A public job log quoting slurmstepd (code index; the job script's bash line above it)
SLURM_OOM = """/var/spool/slurmd/job18835145/slurm_script: line 46: 2113061 Killed                  python3 Experiments.py
slurmstepd: error: Detected 1 oom_kill event in StepId=18835145.batch. Some of the step tasks have been OOM Killed.
"""


def test_dataloader_worker_killed_by_sigkill_is_host_memory(tmp_path):
    (f,) = fired("host-memory-oom-killed", paste_facts(tmp_path, DCPDN_12))
    assert "SIGKILL" in f.message and "line 3" in f.message
    assert "journalctl -k" in f.fix and "num_workers=0" in f.fix
    assert silent("shm-too-small", paste_facts(tmp_path, DCPDN_12))


def test_a_bus_error_is_shared_memory_not_host_memory(tmp_path):
    assert silent("host-memory-oom-killed", paste_facts(tmp_path, MEGATRON_878))


def test_slurm_oom_kill_names_the_job_to_look_up(tmp_path):
    (f,) = fired("host-memory-oom-killed", paste_facts(tmp_path, SLURM_OOM))
    assert f.fix.startswith("sacct -j 18835145 -o JobID,State,ReqMem,MaxRSS")
    assert "slurm-oom-kill-events" in f.message


# https://github.com/chatchat-space/Langchain-Chatchat/issues/35 (blind set E: killed while loading the shards)
CHATCHAT_35 = ("python knowledge_based_chatglm.py\n"
               "Loading checkpoint shards:  38%|██████▊           | 3/8 [00:02<00:03,  1.28it/s]Killed\n")


def test_killed_while_loading_checkpoint_shards_is_host_memory(tmp_path):
    (f,) = fired("host-memory-oom-killed", paste_facts(tmp_path, CHATCHAT_35))
    assert "SIGKILL" in f.message and "checkpoint shards" in f.message and "line 2" in f.message
    assert f.fix.startswith("journalctl -k") and 'device_map="auto"' in f.fix and "num_workers" not in f.fix


def test_a_bare_shell_killed_is_not_read_as_memory():
    from hpcdoctor.triage.messages import find_messages

    # the job script's line alone: a SIGKILL, sent by whom it does not say; slurmstepd's line says it
    # (read as bash's report of a script's command a signal ended, signals.toml, which feeds no rule
    # through the catalogue: host-memory-oom-killed reads it by id only at info, with nothing else read)
    got = find_messages(SLURM_OOM.splitlines()[0] + "\n")
    assert [(s["id"], s.get("rules", [])) for s in got] == [("signals:SIGKILL", [])]
    assert [s["key"] for s in find_messages(CHATCHAT_35)] == ["shell-killed-loading-checkpoint-shards"]


# --- CPU005 cpu-lacks-required-isa --------------------------------------------------------------

# https://github.com/zylon-ai/private-gpt/issues/326 (an ESX host's CPU without AVX2)
PRIVATE_GPT_326 = """[root@ privateGPT]# python3.11 privateGPT.py
Using embedded DuckDB with persistence: data will be stored in: db
Illegal instruction (core dumped)
"""
# https://github.com/pytorch/pytorch/issues/37577 (a CPU without AVX)
PYTORCH_37577 = """`gdb -ex r --args python -c "import torch"` gives

```
Program received signal SIGILL, Illegal instruction.
0x00007fffe9076f17 in _GLOBAL__sub_I_BinaryOpsKernel.cpp.AVX2.cpp ()
   from /home/j/src/pytorch/torch/lib/libtorch_cpu.so
```
"""
TF_GUARD = ("F tensorflow/core/platform/cpu_feature_guard.cc:37] The TensorFlow library was compiled to use AVX "
            "instructions, but these aren't available on your machine.\n")
# torch's own words for a GPU kernel's fault: not the CPU's instruction set
GPU_ILLEGAL = "RuntimeError: CUDA error: an illegal instruction was encountered\n"


def test_the_shell_reporting_sigill():
    (f,) = fired("cpu-lacks-required-isa", pasted(PRIVATE_GPT_326))
    assert "SIGILL" in f.message and "line 3" in f.message
    assert f.fix.startswith("grep -o -w -E 'sse4_2|avx|avx2|fma|avx512f' /proc/cpuinfo")


def test_gdb_names_the_kernel_that_faulted():
    (f,) = fired("cpu-lacks-required-isa", pasted(PYTORCH_37577))
    assert "_GLOBAL__sub_I_BinaryOpsKernel.cpp.AVX2.cpp" in f.message


def test_a_named_instruction_set_is_compared_with_the_node_flags():
    node = facts(H100)
    flags = node["facts"]["cpu"]["flags"]
    assert "avx" in flags, "the recorded H100 node has AVX"
    (f,) = fired("cpu-lacks-required-isa", pasted(TF_GUARD))
    assert "needs AVX" in f.message and "this node's CPU has avx: the failing run was on another machine" in f.message
    without = facts(H100, **{"ticket.symptoms": find_messages(TF_GUARD), "cpu.flags": [x for x in flags if x != "avx"]})
    (f,) = fired("cpu-lacks-required-isa", without)
    assert "this node's CPU lacks avx" in f.message


def test_a_gpu_illegal_instruction_is_not_the_cpu():
    assert silent("cpu-lacks-required-isa", pasted(GPU_ILLEGAL))


# --- SW024 torch-extension-version-mismatch -----------------------------------------------------

# https://github.com/ayulockin/neurips-llm-efficiency-challenge/issues/12
NEURIPS_LLM_12 = """**ImportError:** lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 10, in <module>
    import flash_attn_2_cuda as flash_attn_cuda
ImportError: /lib/python3.10/site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi
"""
# https://github.com/pytorch/pytorch/issues/2091 (torch's own _C against another build: torch-import-failed's)
PYTORCH_2091 = ("ImportError: /home/mranzinger/anaconda3/lib/python3.6/site-packages/torch/_C.cpython-36m-x86_64-linux-gnu.so: "
                "undefined symbol: _ZN4thpp10THCSTensorIlEC1EP8THCStateP14THCSLongTensor\n")
# Built from the loader's format (glibc dl-lookup.c) with a c10 symbol, for the libtorch exclusion.
TORCH_OWN_C10 = ("ImportError: /opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
                 "_ZN3c1010cuda_dlsymEv\n")


def test_an_extension_built_for_another_torch(tmp_path):
    (f,) = fired("torch-extension-version-mismatch", paste_facts(tmp_path, NEURIPS_LLM_12))
    assert "flash_attn_2_cuda" in f.message and "_ZN3c104cuda9SetDeviceEi" in f.message
    assert "p.name.startswith('flash_attn_2_cuda.')" in f.fix and "--no-build-isolation" in f.fix


def test_torch_own_libraries_are_not_an_extension(tmp_path):
    for text in (PYTORCH_2091, TORCH_OWN_C10):
        assert silent("torch-extension-version-mismatch", paste_facts(tmp_path, text))


# --- SW025 bitsandbytes-cuda-binary-missing ----------------------------------------------------

# https://github.com/TimDettmers/bitsandbytes/issues/487 (a source-built 0.39.0 egg without the CUDA 11.8 library)
BNB_487 = """CUDA SETUP: Highest compute capability among GPUs detected: 8.0
CUDA SETUP: Detected CUDA version 118
CUDA SETUP: Required library version not found: libbitsandbytes_cuda118.so.
Maybe you need to compile it from source?
CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...
"""
# https://github.com/TimDettmers/bitsandbytes/issues/492 (healthy control: an old release's bug, fixed by upgrading)
BNB_492 = """        CUDA Setup failed despite GPU being available. Please run the following
        command to get more information:
"""


def test_bitsandbytes_without_the_library_for_this_cuda(tmp_path):
    (f,) = fired("bitsandbytes-cuda-binary-missing", paste_facts(tmp_path, BNB_487))
    assert "for CUDA 11.8" in f.message and "line 3" in f.message
    assert f.fix.startswith("python -m bitsandbytes") and "pip install -U bitsandbytes" in f.fix


def test_bitsandbytes_generic_setup_failure_is_not_read(tmp_path):
    assert silent("bitsandbytes-cuda-binary-missing", paste_facts(tmp_path, BNB_492))


def test_bitsandbytes_cpu_library_where_torch_saw_a_gpu_is_a_warning():
    # https://github.com/bitsandbytes-foundation/bitsandbytes/issues/418
    (f,) = fired("bitsandbytes-cuda-binary-missing",
                 recorded_paste_facts("bitsandbytes-418-cpu-library-loaded-cuda-paths-missing.txt"))
    assert f.severity == "warning" and "although torch saw a GPU" in f.message
    assert "/usr/local/cuda-12.0/lib64" in f.message
    assert f.fix.startswith("python -m bitsandbytes") and "pip install -U bitsandbytes" in f.fix
    assert "LD_LIBRARY_PATH" in f.fix


def test_bitsandbytes_gpu_symbol_looked_up_in_the_cpu_library_is_info():
    # https://github.com/bitsandbytes-foundation/bitsandbytes/issues/779
    (f,) = fired("bitsandbytes-cuda-binary-missing", recorded_paste_facts("bitsandbytes-779-cpu-library-loaded.txt"))
    assert f.severity == "info" and "cadam32bit_grad_fp32" in f.message and "line 13" in f.message


# The lines bitsandbytes 0.38.0 prints on a machine where torch sees no GPU (cuda_setup/main.py returns
# the CPU library before any CUDA search; cextension.py warns): the format strings filled in, no public
# paste of a CPU-only machine found.
BNB_CPU_ONLY = """bin /opt/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so
/opt/venv/lib/python3.10/site-packages/bitsandbytes/cextension.py:33: UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.
CUDA SETUP: Loading binary /opt/venv/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cpu.so...
"""


def test_bitsandbytes_cpu_library_alone_is_only_info(tmp_path):
    # a machine without a GPU prints these too: the CPU library is established, a fault is not
    (f,) = fired("bitsandbytes-cuda-binary-missing", paste_facts(tmp_path, BNB_CPU_ONLY))
    assert f.severity == "info" and "does not show whether torch saw a GPU" in f.message
    assert f.fix.startswith("python -c 'import torch;")


def test_bitsandbytes_cpu_library_warning_in_real_pastes_is_info():
    # https://github.com/nvidia-cosmos/cosmos-predict1/issues/35 and
    # https://github.com/deepseek-ai/DeepSeek-Coder/issues/97: the warning (and the CPU library's path), nothing
    # that shows torch saw a GPU
    for name in ("cosmos-predict1-35-bitsandbytes-compiled-without-gpu.txt", "deepseek-coder-97-bitsandbytes-cpu-library-loaded.txt"):
        (f,) = fired("bitsandbytes-cuda-binary-missing", recorded_paste_facts(name))
        assert f.severity == "info" and "loaded its CPU library" in f.message


# --- THR003 cpu-oversubscribed from a paste -----------------------------------------------------

# https://github.com/rasmushaugaard/surfemb/issues/33
SURFEMB_33 = """# Number of threads explodes when training

In the training script, an additional environment variable needs to be set in the worker_init_fn function

os.environ['OMP_NUM_THREADS'] = 1
"""
# https://github.com/Motphys/UniLab/issues/686 (title)
UNILAB_686 = "# Bug: 默认训练流程存在 Torch 线程池超订阅\n"
OMP_34 = "OMP: Error #34: System unable to allocate necessary resources for OMP thread:\n"
# A code comment that says to avoid it (as pasted scripts carry) is not a report of it.
AVOIDED_ZH = "# 设置线程数，避免线程池超订阅\n"


def test_users_words_for_threads_outnumbering_cpus(tmp_path):
    for text in (SURFEMB_33, UNILAB_686):
        (f,) = fired("cpu-oversubscribed", paste_facts(tmp_path, text))
        assert "line 1" in f.message and f.fix.startswith("export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1")


def test_an_openmp_runtime_that_cannot_start_threads(tmp_path):
    (f,) = fired("cpu-oversubscribed", paste_facts(tmp_path, OMP_34))
    assert f.message.startswith("a thread pool could not start its threads")


def test_a_comment_avoiding_oversubscription_is_not_a_report(tmp_path):
    assert silent("cpu-oversubscribed", paste_facts(tmp_path, AVOIDED_ZH))


# --- SW026 torch-extension-cuda-mismatch --------------------------------------------------------

# torch 2.13.0 torch/utils/cpp_extension.py: the RuntimeError's arguments as Python prints them.
CPP_EXT_MISMATCH = ("RuntimeError: ('The detected CUDA version (%s) mismatches the version that was used to compilePyTorch "
                    "(%s). Please make sure to use the same CUDA versions.', '12.4', '11.8')\n")
CPP_EXT_MINOR = ("The detected CUDA version (12.4) has a minor version mismatch with the version that was used to compile "
                 "PyTorch (12.1). Most likely this shouldn't be a problem.\n")


def test_extension_build_with_another_cuda_major(tmp_path):
    (f,) = fired("torch-extension-cuda-mismatch", paste_facts(tmp_path, CPP_EXT_MISMATCH))
    assert "found CUDA 12.4" in f.message and "built with CUDA 11.8" in f.message
    assert "export CUDA_HOME=/usr/local/cuda-11.8 PATH=/usr/local/cuda-11.8/bin:$PATH" in f.fix


def test_a_minor_version_difference_is_not_a_refusal(tmp_path):
    assert silent("torch-extension-cuda-mismatch", paste_facts(tmp_path, CPP_EXT_MINOR))


def test_the_listing_command_fits_the_nodes_architecture(tmp_path):
    # the same real SIGILL paste on a real Grace (Neoverse V2) capture and a real Zen 4 one: each fix
    # greps the names its kernel prints (arm64's Features line, x86's flags line), and each lists some
    sigill = find_messages(PRIVATE_GPT_326)
    for capture, names in (("linux-ubuntu22.04-neoverse_v2", {"asimd", "sve", "sve2", "bf16"}),
                           ("linux-rocky8.5-zen4", {"avx", "avx2", "avx512f"})):
        node = cpuinfo_facts(capture, tmp_path / capture)
        node["facts"].setdefault("ticket", {})["symptoms"] = sigill
        (f,) = fired("cpu-lacks-required-isa", node)
        command = f.fix.split("   #")[0]
        pattern = command.split("'")[1]
        text = (CPUINFO / capture).read_text()
        listed = set(re.findall(rf"\b(?:{pattern})\b", text))
        assert names <= listed, (capture, command)
    # a paste alone does not say which: the command greps both kinds of names
    (f,) = fired("cpu-lacks-required-isa", paste_facts(tmp_path, PRIVATE_GPT_326))
    assert "avx2" in f.fix.split("   #")[0] and "sve" in f.fix.split("   #")[0]
