"""Causes the pastes of sets AJ and AK (unsealed 2026-11-29) state in their emitters' own words,
each read from the real paste: Slurm's cgroup OOM sentence quoted from "in StepId=" on, torch's
store host that does not resolve, ssh's unresolvable hostfile name, cuDNN 9's shim without its
sub-library, gdb's core of a SIGILL in a function built for AVX2; and NCCL's refusal of a CUDA graph
that set AK's vllm#5679 met without its WARN line, tested on vllm#3069's paste, which shows it."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages
from rulekit import PASTES, fired, paste_facts, recorded_paste_facts, ticket_file_facts

AJ = FIXTURES / "tickets_blind_aj"
AK = FIXTURES / "tickets_blind_ak"


def test_slurms_oom_sentence_quoted_alone_names_the_job(tmp_path):
    (f,) = fired("host-memory-oom-killed", ticket_file_facts(tmp_path, AJ / "fragpipe-703-slurm-cgroup-oom-kill.txt"))
    assert f.fix.startswith("sacct -j 5770797 -o JobID,State,ReqMem,MaxRSS")


def test_the_whole_slurm_line_still_reads_its_count():
    (s,) = [s for s in find_messages("slurmstepd: error: Detected 2 oom-kill event(s) in StepId=7.batch. Some of your "
                                     "processes may have been killed by the cgroup out-of-memory handler.")
            if s["id"] == "oom:slurm-oom-kill-events-old"]
    assert s["count"] == "2" and s["jobid"] == "7"


def test_a_store_host_that_does_not_resolve_is_named(tmp_path):
    facts = ticket_file_facts(tmp_path, AJ / "ai-on-eks-240-rdzv-endpoint-hostname-not-resolvable.txt")
    (f,) = fired("c10d-store-unreachable", facts)
    assert "host name slinky-0 does not resolve" in f.message
    assert f.fix.startswith("getent hosts slinky-0")


def test_torchs_own_resolver_warning_is_read():
    # the string as libtorch_cpu.so 2.13.0 holds it, filled in as socket.cpp fills it
    (s,) = [s for s in find_messages("[W socket.cpp:663] [c10d] The IPv4 network addresses of (node-7, 29500) cannot "
                                     "be retrieved (gai error: -2 - Name or service not known).")
            if s["id"] == "torch:store-address-unresolved"]
    assert (s["host"], s["port"], s["gai"]) == ("node-7", "29500", "Name or service not known")


def test_a_store_that_times_out_is_not_called_unresolved(tmp_path):
    text = ("[W1126 09:06:31.489161483 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to host "
            "127.0.0.1:29547 - retrying (try=0, timeout=5000ms, delay=3582ms): The client socket has timed out after "
            "5000ms while trying to connect to (127.0.0.1, 29547).\n")
    ids = [s["id"] for s in find_messages(text)]
    assert "torch:store-client-name-unresolved" not in ids and "torch:store-client-retrying" in ids


def test_an_unresolvable_hostfile_name_is_not_answered_with_ssh_keys(tmp_path):
    (f,) = fired("ssh-between-nodes-refused", ticket_file_facts(tmp_path, AJ / "eva-4-hostfile-placeholder-node-0-healthy.txt"))
    assert "names a node this host does not know" in f.message
    assert f.fix.startswith("getent hosts node-0") and "ssh-keygen" not in f.fix


def test_a_refused_login_still_gets_the_keys(tmp_path):
    text = "user@node002: Permission denied (publickey,gssapi-keyex,gssapi-with-mic).\n"
    (f,) = fired("ssh-between-nodes-refused", paste_facts(tmp_path, text, "denied.txt"))
    assert "ssh-keygen" in f.fix


def test_cudnn9s_shim_without_its_sub_library(tmp_path):
    # the shape of the WhisperLiveKit#271 paste: libcudnn.so.9's own two lines
    text = ("Simulstreaming will use Faster Whisper for the encoder.\n"
            "Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}\n"
            "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor\n")
    (f,) = fired("cuda-runtime-library-missing", paste_facts(tmp_path, text, "cudnn9.txt"))
    assert "libcudnn.so.9 was loaded but could not open its sub-library libcudnn_ops.so.9.1.0" in f.message
    assert "ctypes.CDLL('libcudnn.so.9')" in f.fix and "mmcv" not in f.fix


def test_gdbs_core_of_a_sigill_in_an_avx2_function(tmp_path):
    (f,) = fired("cpu-lacks-required-isa", ticket_file_facts(tmp_path, AK / "svt-vp9-9-avx2-kernel-on-sandy-bridge-xeon.txt"))
    assert "a function whose name says it is built for AVX2" in f.message
    assert "the cpuid dump pasted says AVX2 = false" in f.message
    assert f.severity == "error"


def test_a_frame_that_names_no_instruction_set_stays_a_hint(tmp_path):
    path = AK / "svt-vp9-9-avx2-kernel-on-sandy-bridge-xeon.txt"
    text = path.read_text(encoding="utf-8").replace("_avx2_intrin", "_intrin")
    (f,) = fired("cpu-lacks-required-isa", ticket_file_facts(tmp_path, path, text))
    assert f.severity == "info" and "built for AVX2" not in f.message


def test_an_nccl_built_with_cuda_11_0_in_a_cuda_graph(tmp_path):
    # vllm#3069: "NCCL version 2.19.3+cuda11.0" and NCCL's own WARN; no driver makes that build capturable
    (f,) = fired("nccl-not-graph-capturable", recorded_paste_facts("vllm-3069-nccl-cu11-build-in-cuda-graph.txt"))
    assert "built with CUDA 11.0 (line 6), older than 11.3" in f.message
    assert "525.60.13 or newer" in f.fix


def test_a_capturable_build_points_at_the_driver(tmp_path):
    text = (PASTES / "vllm-3069-nccl-cu11-build-in-cuda-graph.txt").read_text(encoding="utf-8").replace("+cuda11.0", "+cuda11.8")
    (f,) = fired("nccl-not-graph-capturable", paste_facts(tmp_path, text, "cu118.txt"))
    assert "which can be captured: the driver is older than R465" in f.message


def test_without_the_banner_both_causes_are_named(tmp_path):
    text = "\n".join(line for line in (PASTES / "vllm-3069-nccl-cu11-build-in-cuda-graph.txt").read_text(encoding="utf-8")
                     .splitlines() if "NCCL version" not in line)
    (f,) = fired("nccl-not-graph-capturable", paste_facts(tmp_path, text, "no-banner.txt"))
    assert "either this NCCL was built with a CUDA runtime older than 11.3" in f.message


def test_nccls_other_warnings_are_not_this(tmp_path):
    text = "node1:1234:1250 [0] init.cc:1043 NCCL WARN Mismatched NCCL version detected : rank 8 version 22105 rank 0 version 22304\n"
    assert not fired("nccl-not-graph-capturable", paste_facts(tmp_path, text, "other.txt"))


def test_the_cu11_wheel_named_beside_cuda_graphs_and_an_nccl_error(tmp_path):
    # set AK's vllm#5679: pip list's nvidia-nccl-cu11 2.20.5 (built with CUDA 11.0), CUDA graphs on, no WARN pasted
    (f,) = fired("nccl-not-graph-capturable", ticket_file_facts(tmp_path, AK / "vllm-5679-nccl-cu11-2-20-5-cuda-graph-bug.txt"))
    assert f.severity == "warning" and "nvidia-nccl-cu11 2.20.5 (line 20), built with CUDA 11.0" in f.message


def test_a_cu11_wheel_built_with_cuda_11_8_is_capturable(tmp_path):
    path = AK / "vllm-5679-nccl-cu11-2-20-5-cuda-graph-bug.txt"
    text = path.read_text(encoding="utf-8").replace("nvidia-nccl-cu11 2.20.5", "nvidia-nccl-cu11 2.16.5")
    assert not fired("nccl-not-graph-capturable", ticket_file_facts(tmp_path, path, text))
