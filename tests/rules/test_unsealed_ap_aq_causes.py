"""Causes and non-causes the pastes of sets AP and AQ (unsealed 2026-11-29) show in their emitters'
own words, each read from the real paste; where a variant is needed, the real paste is edited in
memory and the edit is said."""

from __future__ import annotations

import json

from conftest import FIXTURES, run_main
from hpcdoctor.facts import FactView
from hpcdoctor.rules.site import nccl_node_issue
from rulekit import fired, message_ids, read_paste, run_rule, ticket_file_facts

AP = FIXTURES / "tickets_blind_ap"
AQ = FIXTURES / "tickets_blind_aq"
B = FIXTURES / "tickets_blind_b"


# --- HIP: no code object for the GPU, torch's build or another program's -----------------------

def test_llama_cpps_hip_build_without_the_gpus_code_object_is_its_own_build(tmp_path):
    g = ticket_file_facts(tmp_path, AQ / "llama-cpp-19949-no-code-object-for-gfx1152.txt")
    (f,) = fired("framework-missing-arch", g)
    assert "gfx1152" in f.message and "--offload-arch" in f.fix
    assert run_rule("torch-rocm-missing-gfx", g)[0] == []


def test_a_hip_sample_without_the_gpus_code_object_is_its_own_build(tmp_path):
    g = ticket_file_facts(tmp_path, AQ / "hip-2166-sample-no-code-object-for-gpu.txt")
    assert fired("framework-missing-arch", g)
    assert run_rule("torch-rocm-missing-gfx", g)[0] == []


def test_the_same_message_from_a_program_not_shown_stays_torchs_rocm_build(tmp_path):
    # set B's KoboldAI paste: hipErrorNoBinaryForGpu and nothing naming the program
    g = ticket_file_facts(tmp_path, B / "rocm-build-2061-rx6600-no-binary-koboldai.txt")
    assert fired("torch-rocm-missing-gfx", g)
    assert run_rule("framework-missing-arch", g)[0] == []


def test_llama_cpps_line_beside_torch_named_is_not_ggmls_alone(tmp_path):
    path = AQ / "llama-cpp-19949-no-code-object-for-gfx1152.txt"
    text = "Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/torch/__init__.py\", line 1, in <module>\n" + read_paste(path)
    g = ticket_file_facts(tmp_path, path, text)   # edited: a torch import frame added on top
    assert run_rule("framework-missing-arch", g)[0] == []


# --- ROCr's GPU page fault: read, not refused ----------------------------------------------------

def test_rocr_memory_access_fault_is_read_in_both_forms():
    old = "Memory access fault by GPU node-2 on address (nil). Reason: unknown"
    assert "rocr_vm_fault:memory-access-fault" in message_ids(read_paste(AQ / "legacy-rocm-build-5238-stale-hsa-override-on-mi210.txt"))
    assert "rocr_vm_fault:memory-access-fault" in message_ids(old + "\n")
    ecc = "Memory access fault by GPU node-4 (Agent handle: 0x5581f2f0a0b0) on address 0x7f0c00000000. Reason: DRAM ECC failure."
    assert message_ids(ecc + "\n") >= {"rocr_vm_fault:memory-access-fault-ecc"}
    assert "rocr_vm_fault:memory-access-fault" not in message_ids(ecc + "\n")


# --- kmod before v22, a user's "falls out of the bus", amd-smi's groups -------------------------

def test_old_modprobe_without_the_nvidia_uvm_module(tmp_path):
    (f,) = fired("gpu-driver-unusable", ticket_file_facts(tmp_path, AQ / "bumblebee-623-nvidia-uvm-module-not-loaded.txt"))
    assert "another name" in f.message and "find /lib/modules" in f.fix


def test_old_modprobe_without_another_module_is_not_the_nvidia_driver(tmp_path):
    path = AQ / "bumblebee-623-nvidia-uvm-module-not-loaded.txt"
    text = read_paste(path).replace("Module nvidia-uvm not found.", "Module vboxdrv not found.")   # edited: another module
    assert "kmod:nvidia-module-not-found-old" not in message_ids(text)
    assert "kmod:module-not-found-old" in message_ids(text)


def test_a_gpu_that_falls_out_of_the_bus_in_the_users_words(tmp_path):
    (f,) = fired("gpu-fallen-off-bus", ticket_file_facts(tmp_path, AQ / "open-gpu-kernel-modules-387-gpu-falls-off-bus-reseated.txt"))
    assert "reboot" in f.fix


def test_amd_smi_stopping_on_its_group_check(tmp_path):
    (f,) = fired("gpu-device-permission-denied", ticket_file_facts(tmp_path, AQ / "amdsmi-184-user-not-in-video-render-groups.txt"))
    assert f.severity == "error" and "render,video" in f.fix


def test_amd_smi_listing_the_nodes_it_was_refused_is_a_warning(tmp_path):
    path = AQ / "amdsmi-184-user-not-in-video-render-groups.txt"
    text = "\n".join(line for line in read_paste(path).splitlines() if "RuntimeError" not in line)   # edited: 7.1.1's output only
    (f,) = fired("gpu-device-permission-denied", ticket_file_facts(tmp_path, path, text))
    assert f.severity == "warning" and "/dev/dri/card" in f.message and "group video" in f.message


def test_amd_smis_group_warning_alone_is_no_fault(tmp_path):
    text = "WARNING: User is missing the following required groups: render, video. Please add user to these groups.\n"
    assert message_ids(text) == {"amd_smi:cli-required-groups-missing"}


# --- Open MPI's ppr mapping, TF-TRT, apex on ROCm ---------------------------------------------

def test_more_ranks_than_the_ppr_mapping_places(tmp_path):
    (f,) = fired("mpi-not-enough-slots", ticket_file_facts(tmp_path, AP / "picongpu-3659-more-gpus-requested-than-node-has.txt"))
    assert "ppr" in f.message and "GPU" in f.message


def test_tensorflow_loading_another_tensorrt_than_it_was_built_with(tmp_path):
    (f,) = fired("cuda-library-version-mismatch", ticket_file_facts(tmp_path, AP / "tf-tensorrt-85-tf-built-against-other-tensorrt.txt"))
    assert "TensorRT 5.0.2" in f.message and "5.1.2" in f.message and "libnvinfer" in f.fix


def test_apex_cuda_none_is_rocms_hip_version_check(tmp_path):
    (f,) = fired("torch-extension-cuda-mismatch", ticket_file_facts(tmp_path, AQ / "therock-3628-nightly-torch-wheel-without-rocm.txt"))
    assert "hipcc" in f.message and "torch.version.hip" in f.fix


# --- NCCL 2.19-2.21's Ring fallback ignoring NCCL_PROTO -----------------------------------------

_NCCL_1304 = AQ / "nccl-1304-algo-tree-fallback-ignores-proto-fixed-2-22.txt"


def test_ring_with_a_protocol_nccl_proto_excluded_is_the_fallback_bug(tmp_path):
    (f,) = fired("nccl-known-issue", ticket_file_facts(tmp_path, _NCCL_1304))
    assert "Ring with LL" in f.message and "2.22.3" in f.message and "NCCL_ALGO=Tree,Ring" in f.fix


def _issue(tmp_path, text):
    g = ticket_file_facts(tmp_path, _NCCL_1304, text)
    return nccl_node_issue(FactView(g["facts"], g["unknown"]))


def test_the_same_choice_under_a_version_in_the_range_names_it(tmp_path):
    text = "node1:1234:1234 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n" + read_paste(_NCCL_1304)   # edited: a version line on top
    issue, _, version, _ = _issue(tmp_path, text)
    assert issue["id"] == "ring-fallback-ignores-nccl-proto" and version == "2.21.5"


def test_the_same_choice_under_a_fixed_nccl_is_not_that_bug(tmp_path):
    text = "node1:1234:1234 [0] NCCL INFO NCCL version 2.23.4+cuda12.4\n" + read_paste(_NCCL_1304)   # edited: a version line on top
    assert _issue(tmp_path, text) is None


def test_ring_with_a_protocol_nccl_proto_allows_is_no_issue(tmp_path):
    text = read_paste(_NCCL_1304).replace("Algo 1 proto 0", "Algo 1 proto 2")   # edited: Ring with Simple
    assert _issue(tmp_path, read_paste(_NCCL_1304)) is not None and _issue(tmp_path, text) is None


def test_ring_named_in_nccl_algo_is_chosen_as_itself(tmp_path):
    text = read_paste(_NCCL_1304).replace("NCCL_ALGO=Tree,NCCL_PROTO", "NCCL_ALGO=Tree,Ring; NCCL_PROTO")   # edited: Ring allowed
    assert _issue(tmp_path, text) is None


# --- explicit huge pages -------------------------------------------------------------------------

_SDSL = AP / "sdsl-lite-131-hugepage-allocator-cannot-allocate-memory.txt"


def test_a_huge_page_arena_refused_is_the_pool_not_reserved(tmp_path):
    (f,) = fired("hugepages-not-reserved", ticket_file_facts(tmp_path, _SDSL))
    assert "huge-page pool" in f.message and "vm.nr_hugepages" in f.fix


def test_sdsl_built_without_map_hugetlb_is_not_the_pool(tmp_path):
    text = read_paste(_SDSL).replace("hugepage_allocator could not allocate hugepages",
                                 "hugepage_allocator: MAP_HUGETLB / hugepage support not available")   # edited: the #else message
    assert not fired("hugepages-not-reserved", ticket_file_facts(tmp_path, _SDSL, text))


# --- Vulkan's return codes: read, and a healthy control's stays without a fault ----------------

def test_omniverses_unprefixed_vkresult_is_read_and_names_no_fault():
    path = AP / "adam-140-jax-preallocation-starves-isaaclab-healthy.txt"
    assert "vulkan:VK_ERROR_OUT_OF_DEVICE_MEMORY" in message_ids(read_paste(path))
    r = run_main("check", "--from", str(path), "--format", "json")
    assert r.returncode == 0, r.stderr   # read (no refusal, exit 2) and nothing raised above a hint (exit 0)
    assert not [f for f in json.loads(r.stdout)["findings"] if f["severity"] in ("error", "warning")]


def test_sascha_willems_check_and_the_plain_name_read_the_same_code():
    quoted = 'Fatal : VkResult is "ERROR_DEVICE_LOST" in /home/sam/Vulkan/examples/renderheadless/renderheadless.cpp at line 147\n'
    assert "vulkan:VK_ERROR_DEVICE_LOST" in message_ids(quoted)
    assert "vulkan:VK_ERROR_DEVICE_LOST" in message_ids("Failed to acquire fence: vkQueueSubmit VK_ERROR_DEVICE_LOST\n")
