"""The rules of rules/nccl_messages.py and rules/torch_messages.py on verbatim cuts of public
tickets (the URL beside each): what NCCL's and torch's own messages establish, and silence where
a paste holds none of them."""

from __future__ import annotations

import pytest
from hpcdoctor.triage.messages import find_messages
from rulekit import facts, fired, recorded_paste_facts, run_rule, with_env

H100 = "h100-kvm-1gpu"


def pasted(text: str, **changes):
    return facts(H100, **{"ticket.symptoms": find_messages(text)}, **changes)


# --- NET005 nccl-ib-memlock ---------------------------------------------------------------------

# https://github.com/NVIDIA/nccl-tests/issues/206 (title; ulimit -l was 8192, limits.conf fixed it)
NCCL_TESTS_206 = "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory\n"


def test_ib_memlock_from_the_pasted_warn():
    (f,) = fired("nccl-ib-memlock", pasted(NCCL_TESTS_206))
    assert "ibv_reg_mr_iova2 failed with Cannot allocate memory (line 1)" in f.message and "ulimit -l" in f.message
    # a paste names no place: the container and the Slurm commands, no prose line
    assert [line.split()[0] for line in f.fix.splitlines()] == ["docker", "srun"]
    assert "--ulimit memlock=-1" in f.fix and "PropagateResourceLimitsExcept=MEMLOCK" in f.fix


def test_ib_memlock_fix_on_a_slurm_node_is_the_sites():
    g = with_env(H100, {"SLURM_JOB_ID": "77", "SLURM_JOB_NUM_NODES": "2"},
                 **{"ticket.symptoms": find_messages(NCCL_TESTS_206)})
    (f,) = fired("nccl-ib-memlock", g)
    assert f.fix.startswith("srun sh -c 'ulimit -l'") and "\n" not in f.fix


def test_no_ib_line_no_memlock_finding():
    assert not fired("nccl-ib-memlock", pasted("NCCL WARN Call to posix_fallocate failed : No space left on device\n"))


# --- NET006 nccl-duplicate-gpu -------------------------------------------------------------------

# https://github.com/NVIDIA/Megatron-LM/issues/661
MEGATRON_661 = """.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3
ncclInvalidUsage: This usually reflects invalid usage of NCCL library.
Last error:
Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000
"""


def test_duplicate_gpu_names_the_ranks_and_selects_a_device_per_rank():
    (f,) = fired("nccl-duplicate-gpu", pasted(MEGATRON_661))
    assert "ranks 3 and 0" in f.message and "f000" in f.message and "line 4" in f.message
    assert f.fix_lang == "python" and 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))' in f.fix


def test_the_error_code_alone_names_no_duplicate():
    assert not fired("nccl-duplicate-gpu", pasted(MEGATRON_661.split("Last error:")[0]))


# --- NET007 nccl-roce-gid ------------------------------------------------------------------------

# https://github.com/NVIDIA/nccl-tests/issues/185
NCCL_TESTS_185 = ("dgxh100-3:225140:225355 [0] misc/ibvwrap.cc:187 NCCL WARN Call to ibv_modify_qp failed with error "
                  "Network is unreachable\n")
# https://github.com/NVIDIA/nccl/issues/2013 (NCCL 2.27's wording, with the GID index it used)
NCCL_2013 = ("[2026-03-13 22:26:02] host-01.example.com:XXXXXX [5] ibvwrap.c:262 NCCL WARN Call to ibv_modify_qp failed "
             "with 110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID index 3, local GID "
             "::ffff:xxx.xx.xx.xx, remote GID ::ffff:xxx.xx.xxx.xx\n")
# https://github.com/NVIDIA/nccl/issues/426 (error 12 right away; NCCL_IB_GID_INDEX=3 fixed it)
NCCL_426 = ("-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error 12, opcode 1, "
            "len 0, vendor err 129\n")


@pytest.mark.parametrize("text, words", [
    (NCCL_TESTS_185, "queue pair to a peer failed (Network is unreachable)"),
    (NCCL_2013, "NCCL used GID index 3"),
    (NCCL_426, "completion status 12"),
])
def test_roce_gid_from_the_pasted_warn(text, words):
    (f,) = fired("nccl-roce-gid", pasted(text))
    assert words in f.message, f.message
    assert f.fix.startswith("ibv_devinfo -v") and "NCCL_IB_GID_INDEX" in f.fix


def test_a_completion_error_other_than_retries_exceeded_is_not_a_gid():
    # the same line of nccl#426 with status 5 (IBV_WC_WR_FLUSH_ERR: flushed after an earlier error)
    assert not fired("nccl-roce-gid", pasted(NCCL_426.replace("with error 12", "with error 5")))


# --- ENV007 nccl-watchdog-timeout, ENV008 nccl-watchdog-stuck ------------------------------------

# https://github.com/XPixelGroup/BasicSR/issues/737
BASICSR_737 = ("[rank1]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation "
               "timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000) "
               "ran for 600020 milliseconds before timing out.\n")
# https://github.com/verl-project/verl/issues/1158
VERL_1158 = ("[rank2]:[E419 10:53:25.421620797 ProcessGroupNCCL.cpp:1484] [PG ID 2 PG GUID 9 Rank 2] ProcessGroupNCCL's "
             "watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically "
             "indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog, and could be triggered by another "
             "thread holding the GIL inside a CUDA api (for example, CudaEventDestroy), or other deadlock-prone behaviors.\n")


def test_watchdog_timeout_says_what_the_line_establishes():
    (f,) = fired("nccl-watchdog-timeout", pasted(BASICSR_737))
    assert "ALLREDUCE number 808 waited 600 s, past the process group's 600 s timeout" in f.message
    assert "did not reach it in that time" in f.message and "export TORCH_NCCL_TRACE_BUFFER_SIZE=2000" in f.fix
    assert f.severity == "info"  # the line shows the job stopped waiting, not what is wrong, nor on which node
    assert f.env == {}  # a pasted log's answer goes in the job script, not in `hpcdoctor env` on this node
    assert not fired("nccl-watchdog-stuck", pasted(BASICSR_737))


def test_a_rank_validating_past_the_timeout_is_said_without_blaming_the_node():
    # open_clip#1087: the other ranks waited while one validated; the reporter's NCCL_TIMEOUT left 1800000 ms.
    (f,) = fired("nccl-watchdog-timeout", recorded_paste_facts("open-clip-1087-nccl-watchdog-long-validation-healthy.txt"))
    assert "ALLGATHER number 266392 waited 1803 s, past the process group's 1800 s timeout" in f.message
    assert "still busy longer than the timeout" in f.message and f.severity == "info"
    assert "init_process_group(..., timeout=datetime.timedelta(hours=2))" in f.fix


def test_watchdog_stuck_is_not_a_collective_timeout():
    (f,) = fired("nccl-watchdog-stuck", pasted(VERL_1158))
    assert "for 480 s" in f.message and f.fix.startswith("nvidia-smi")
    assert not fired("nccl-watchdog-timeout", pasted(VERL_1158))


# --- ENV009 c10d-store-unreachable ---------------------------------------------------------------

# https://github.com/vllm-project/vllm/issues/19670
VLLM_19670 = ("[E616 02:08:15.931416442 socket.cpp:1023] [c10d] The client socket has timed out after 600000ms while "
              "trying to connect to (172.17.0.9, 50437).\n")
# https://github.com/hpcaitech/Open-Sora/issues/667
OPEN_SORA_667 = """[W socket.cpp:697] [c10d] The client socket has failed to connect to [::ffff:0.104.99.143]:47389 (errno: 110 - Connection timed out).
[E socket.cpp:753] [c10d] The client socket has failed to connect to any network address of (6841231, 47389).
"""


def test_store_timeout_tests_the_address_it_names():
    (f,) = fired("c10d-store-unreachable", pasted(VLLM_19670))
    assert "172.17.0.9:50437" in f.message and f.fix.startswith("nc -zv 172.17.0.9 50437")


def test_store_connect_failure_of_an_older_torch():
    # the failure is line 2's "any network address of (6841231, 47389)", not line 1's per-address
    # warning before it; the host is a bare number, which the resolver read as 0.104.99.143
    (f,) = fired("c10d-store-unreachable", pasted(OPEN_SORA_667))
    assert "6841231:47389 (line 2)" in f.message and "IPv4 address 0.104.99.143" in f.message
    assert f.fix.startswith('echo "MASTER_ADDR=$MASTER_ADDR"')


# --- MEM004 dataloader-open-files ----------------------------------------------------------------

# https://github.com/zju3dv/NeuralRecon/issues/91
NEURALRECON_91 = ("RuntimeError: Too many open files. Communication with the workers is no longer possible. Please increase "
                  "the limit using `ulimit -n` in the shell or change the sharing strategy by calling "
                  "`torch.multiprocessing.set_sharing_strategy('file_system')` at the beginning of your code\n")


def test_dataloader_open_files():
    (f,) = fired("dataloader-open-files", pasted(NEURALRECON_91))
    assert f.fix.startswith('ulimit -n "$(ulimit -Hn)"')


# --- SW020 triton-gpu-too-old, SW021 xformers-without-cuda ---------------------------------------

# https://github.com/MIC-DKFZ/nnUNet/issues/2188
NNUNET_2188 = ("`RuntimeError: Found NVIDIA GeForce GTX 1080 Ti which is too old to be supported by the triton GPU compiler, "
               "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is "
               "of CUDA capability 6.1`\n")
# https://github.com/kijai/ComfyUI-DepthAnythingV2/issues/27
DEPTHANYTHING_27 = """NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:
     query       : shape=(1, 5617, 16, 64) (torch.float32)
     key         : shape=(1, 5617, 16, 64) (torch.float32)
     value       : shape=(1, 5617, 16, 64) (torch.float32)
     attn_bias   : <class 'NoneType'>
     p           : 0.0
`fa3F@0.0.0` is not supported because:
    xFormers wasn't build with CUDA support
"""


def test_triton_too_old_turns_compile_off():
    (f,) = fired("triton-gpu-too-old", pasted(NNUNET_2188))
    assert "NVIDIA GeForce GTX 1080 Ti (compute capability 6.1, Triton needs 7.0)" in f.message
    assert "export TORCH_COMPILE_DISABLE=1 TORCHDYNAMO_DISABLE=1" in f.fix and f.env == {}


def test_xformers_without_cuda():
    (f,) = fired("xformers-without-cuda", pasted(DEPTHANYTHING_27))
    assert "line 8" in f.message and f.fix.startswith("python -m xformers.info")


def test_a_live_node_without_a_paste_is_silent():
    for sym in ("nccl-ib-memlock", "nccl-duplicate-gpu", "nccl-roce-gid", "nccl-watchdog-timeout",
                "nccl-watchdog-stuck", "c10d-store-unreachable", "dataloader-open-files",
                "triton-gpu-too-old", "xformers-without-cuda"):
        findings, skipped = run_rule(sym, facts(H100))
        assert not findings and not skipped, sym


# https://github.com/deepseek-ai/DeepEP/issues/143
DEEPEP_143 = ("msm-h200-2:4016:4653 [7] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_create_cq failed with error Cannot "
              "allocate memory\n")


def test_ib_memlock_on_a_completion_queue():
    (f,) = fired("nccl-ib-memlock", pasted(DEEPEP_143))
    assert "ibv_create_cq failed with Cannot allocate memory" in f.message


def test_a_named_cause_silences_the_generic_system_error():
    """nccl#875's torch line ("unhandled system error", no cause) alone gets nccl-system-error;
    with nccl-tests#206's WARN line before it, as one log holds both, only nccl-ib-memlock answers."""
    torch_line = ("RuntimeError: NCCL error in: /home/builder/mc3/envs/pytorch-build/envs/pytorch-build/conda-bld/"
                  "pytorch_1673601922403/work/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system "
                  "error, NCCL version 2.10.3\n")
    assert fired("nccl-system-error", pasted(torch_line))
    both = pasted(NCCL_TESTS_206 + torch_line)
    assert not fired("nccl-system-error", both) and fired("nccl-ib-memlock", both)


# https://github.com/NVIDIA/nccl/issues/1726 (the vendor topology file missed the cpu node's arch)
NCCL_1726 = "Attribute arch of node cpu not found\n"


def test_topo_file_refused():
    (f,) = fired("nccl-topo-file", pasted(NCCL_1726))
    assert "line 1" in f.message and f.fix.startswith("unset NCCL_TOPO_FILE NCCL_GRAPH_FILE")
    assert not fired("nccl-topo-file", pasted(NCCL_TESTS_206))
