"""gpu-hardware-faulty and faulty-node-in-job (rules/gpu_faults.py) on real public pastes
(tests/fixtures/pastes, SOURCES.md there), DCGM's own format strings, and the node's kernel log read
live (checks/kernel_log.py) with the NVIDIA driver's and the kernel's hardware families."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import NODES
from rulekit import PASTES, fired, paste_facts, recorded_paste_facts
from hpcdoctor import knowledge, pipeline
from hpcdoctor.checks.kernel_log import FAMILIES, SOURCES
from hpcdoctor.runner import Options
from hpcdoctor.sysroot import ReplaySysRoot
from hpcdoctor.triage.messages import find_messages

XID64 = "gpu-operator-1146-xid48-xid64-blacklisting-failed.txt"


def test_a_row_remap_the_gpu_could_not_record_is_its_hardware():
    g = recorded_paste_facts(XID64)
    (hit,) = fired("gpu-hardware-faulty", g)
    assert hit.severity == "error" and "Xid 64" in hit.message and "line 6" in hit.message
    assert hit.fix.startswith("scontrol update nodename=$(hostname -s) state=drain")
    assert "nvidia-bug-report.sh" in hit.fix and "dcgmi diag -r 3" in hit.fix
    assert "reinstall" not in hit.fix
    # Xid 64 is answered here, not as a plain reset; the Xid 48 beside it keeps its ECC rule
    assert not fired("gpu-xid-reset-required", g)
    assert fired("ecc-uncorrectable-errors", g)


DCGM_FAULTS = ["DCGM_FR_RETIRED_PAGES_LIMIT", "DCGM_FR_RETIRED_PAGES_DBE_LIMIT", "DCGM_FR_FAULTY_MEMORY",
               "DCGM_FR_MEMORY_MISMATCH", "DCGM_FR_L1TAG_MISCOMPARE", "DCGM_FR_ROW_REMAP_FAILURE", "DCGM_FR_SRAM_THRESHOLD",
               "DCGM_FR_NAN_VALUE"]


def _dcgm_example(key):
    return next(e["example"] for e in knowledge.load("messages/dcgm_diag")["entry"] if e["key"] == key)


@pytest.mark.parametrize("key", DCGM_FAULTS)
def test_dcgms_isolating_memory_and_cache_failures_state_the_fault(tmp_path, key):
    # the format strings of NVIDIA/DCGM dcgmlib/dcgm_errors.h with values filled in (dcgm_diag.toml)
    (hit,) = fired("gpu-hardware-faulty", paste_facts(tmp_path, _dcgm_example(key) + "\n"))
    assert hit.severity == "error" and key in hit.message


@pytest.mark.parametrize("key", ["DCGM_FR_UNCORRECTABLE_ROW_REMAP", "DCGM_FR_PENDING_ROW_REMAP",
                                 "DCGM_FR_VOLATILE_SBE_DETECTED", "DCGM_FR_NVLINK_DOWN"])
def test_a_remap_that_worked_or_a_link_or_a_monitor_report_is_not_a_faulty_gpu(tmp_path, key):
    assert not fired("gpu-hardware-faulty", paste_facts(tmp_path, _dcgm_example(key) + "\n"))


def _amd_example(key):
    return next(e["example"] for e in knowledge.load("messages/amdgpu_ras")["entry"] if e["key"] == key)


@pytest.mark.parametrize("key, severity", [("ras-records-exceed-threshold", "error"), ("gpu-in-bad-status", "error"),
                                           ("saved-bad-pages-reach-threshold", "error"),
                                           ("ras-records-near-threshold", "warning")])
def test_amdgpus_bad_page_threshold_is_an_amd_gpus_fault(tmp_path, key, severity):
    # the format strings of Linux 6.1.192 drivers/gpu/drm/amd/amdgpu/amdgpu_ras_eeprom.c (amdgpu_ras.toml)
    (hit,) = fired("gpu-hardware-faulty", paste_facts(tmp_path, _amd_example(key) + "\n"))
    assert hit.severity == severity and hit.message.startswith("amdgpu: ")
    assert "amd-smi bad-pages" in hit.fix and "nvidia-smi" not in hit.fix


@pytest.mark.parametrize("key", ["correctable-errors-in-block", "uncorrectable-errors-in-block", "uncorrectable-athub-interrupt"])
def test_amdgpus_error_counts_alone_are_read_not_a_faulty_gpu(tmp_path, key):
    g = paste_facts(tmp_path, _amd_example(key) + "\n")
    assert f"amdgpu_ras:{key}" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("gpu-hardware-faulty", g)


def test_the_user_saying_one_gpu_of_a_node_fails_is_an_info_naming_the_node():
    (hit,) = fired("gpu-hardware-faulty", recorded_paste_facts("trixie-38-one-gpu-on-cn110-not-working.txt"))
    assert hit.severity == "info" and "on cn110" in hit.message and "the usual cause" in hit.message
    assert "scontrol update nodename=cn110 state=drain" in hit.fix and "dcgmi diag -r 3" in hit.fix


def test_a_gpu_unusable_until_a_reboot_is_an_info():
    g = recorded_paste_facts("mineru-426-gpu-unusable-until-reboot-zh.txt")
    (hit,) = fired("gpu-hardware-faulty", g)
    assert hit.severity == "info" and "until the machine is rebooted" in hit.message


@pytest.mark.parametrize("name", [
    "open-gpu-kernel-modules-1370-xid31-driver-610-regression.txt",  # Xid 31: the application's (GPU016)
    "lspci-vnn-kata-gt1030-nvidia-bound.txt",  # NVML's Unknown Error in a VM: the passthrough, not the board
    "nvsentinel-155-fallen-off-bus-no-xid.txt",  # off the bus: gpu-fallen-off-bus answers it
    "mcelog-70-machine-check-events-logged.txt",  # a CPU machine check: the host's, not a GPU's
])
def test_silent_on_application_faults_and_other_rules_cases(name):
    assert not fired("gpu-hardware-faulty", recorded_paste_facts(name))


@pytest.mark.parametrize("text", [
    # https://github.com/opendatalab/MinerU/issues/426 (title): the error alone is a kernel's fault
    "# RuntimeError: CUDA error: unspecified launch failure\n",
    # hedged: the user asks, does not report
    "Is it possible that one of the GPUs is broken?\n",
])
def test_silent_on_an_application_error_alone_or_a_question(tmp_path, text):
    assert not fired("gpu-hardware-faulty", paste_facts(tmp_path, text))


# faulty-node-in-job

def test_a_multi_host_nccl_log_whose_errors_are_one_hosts_names_it():
    (hit,) = fired("faulty-node-in-job", recorded_paste_facts("nccl-1029-init-error-on-one-worker.txt"))
    assert hit.severity == "warning" and "rdma-test-gpu-worker-1's" in hit.message
    assert "while rdma-test-gpu-worker-0 logged none" in hit.message and "Cuda failure 'initialization error'" in hit.message
    assert hit.fix.startswith("sbatch --exclude=rdma-test-gpu-worker-1 job.sh")
    assert "scontrol update nodename=rdma-test-gpu-worker-1 state=drain" in hit.fix


@pytest.mark.parametrize("name", [
    "nccl-928-ib-completion-error-on-every-host.txt",  # every host fails: the fabric or the job, not one node
    "nccl-tests-133-collnet-not-supported.txt",  # two hosts, one WARN that is a notice: no error trace
    "nccl-1126-net-plugin-not-found-socket-lo.txt",  # one host's log
])
def test_errors_on_several_hosts_or_one_hosts_log_name_no_node(name):
    assert not fired("faulty-node-in-job", recorded_paste_facts(name))


def test_ncclremoteerror_with_the_peer_named_points_at_that_node():
    g = recorded_paste_facts("nccl-2076-remote-error-peer-named.txt")
    (hit,) = fired("faulty-node-in-job", g)
    assert hit.severity == "warning" and "172....<33759>" in hit.message and "ncclRemoteError, line 17" in hit.message
    assert hit.fix.startswith("sbatch --exclude=NODE job.sh")
    assert "scontrol update nodename=NODE state=drain" in hit.fix


def test_ncclremoteerror_without_a_peer_is_an_info(tmp_path):
    # the paste's first line alone (nccl-2076): no socket line names the peer
    text = (PASTES / "nccl-2076-remote-error-peer-named.txt").read_text().splitlines()[16] + "\n"
    (hit,) = fired("faulty-node-in-job", paste_facts(tmp_path, text))
    assert hit.severity == "info" and "NCCL_DEBUG=INFO" in hit.fix


def test_the_user_naming_the_one_node_that_fails_gets_it_excluded():
    (hit,) = fired("faulty-node-in-job", recorded_paste_facts("prestus-50-fails-except-on-one-node.txt"))
    assert hit.severity == "info" and "dccn-c078" in hit.message
    assert hit.fix.startswith("sbatch --exclude=dccn-c078 job.sh")
    assert "scontrol update nodename=dccn-c078 state=drain" in hit.fix


@pytest.mark.parametrize("name", [
    "nccl-tests-166-proxy-accept-failed.txt",  # one host's NCCL log, no remote error
    "trixie-38-one-gpu-on-cn110-not-working.txt",  # a GPU named, not a job failing on one node
])
def test_faulty_node_silent_without_a_remote_error_or_a_named_node(name):
    assert not fired("faulty-node-in-job", recorded_paste_facts(name))


def test_the_prose_entries_read_their_real_examples_only():
    fam = {e["key"]: e for e in knowledge.load("messages/prose")["entry"]}
    for key in ("one-gpu-not-working", "gpu-unusable-until-reboot", "fails-on-one-node"):
        ids = [s["id"] for s in find_messages(fam[key]["example"])]
        assert ids == [f"prose:{key}"], (key, ids)
    # "except" and "node" in one sentence, no node failing
    assert not [s for s in find_messages("All nodes are idle except node01 which runs the scheduler.\n")
                if s["id"] == "prose:fails-on-one-node"]


# The node's own kernel log, read live with the families the catalogues hold

def _node_with_journal(tmp_path, text):
    node = tmp_path / "node"
    shutil.copytree(NODES / "h100-kvm-1gpu", node)
    index = json.loads((node / "cmd" / "index.json").read_text())
    (node / "cmd" / "klog.txt").write_text(text)
    index.append({"argv": SOURCES[0], "rc": 1, "stdout": "", "stderr": "dmesg: read kernel buffer failed: Operation not permitted\n"})
    index.append({"argv": SOURCES[1], "rc": 0, "stdout": "klog.txt", "stderr": ""})
    (node / "cmd" / "index.json").write_text(json.dumps(index))
    return pipeline.gather(ReplaySysRoot(node), Options())


def _log_lines(name):
    """The kernel-log lines of a recorded paste, as the journal holds them (the Markdown fence dropped)."""
    return "".join(line + "\n" for line in (PASTES / name).read_text().splitlines() if not line.startswith("```"))


def test_the_live_kernel_log_finds_the_row_remap_failure(tmp_path):
    g = _node_with_journal(tmp_path, _log_lines(XID64))
    (hit,) = fired("gpu-hardware-faulty", g)
    assert "Xid 64" in hit.message and hit.evidence["kernel_log.line"] == 5


def test_the_live_kernel_log_reads_the_drivers_notice_without_an_xid(tmp_path):
    # nvrm.toml now read live: the driver's own off-the-bus notice, with no Xid line
    g = _node_with_journal(tmp_path, _log_lines("nvsentinel-155-fallen-off-bus-no-xid.txt"))
    assert fired("gpu-fallen-off-bus", g)
    assert not fired("gpu-hardware-faulty", g)


def test_the_live_kernel_log_reads_the_kernels_hardware_errors(tmp_path):
    assert {"kernel_hwerr", "nvrm", "amdgpu_ras"} <= set(FAMILIES)
    g = _node_with_journal(tmp_path, _log_lines("mcelog-70-machine-check-events-logged.txt"))
    ids = {m["id"] for m in g["facts"]["kernel_log"]["messages"]}
    assert "kernel_hwerr:mce-events-logged" in ids
    assert not fired("gpu-hardware-faulty", g)


def test_an_unreadable_kernel_log_leaves_the_rule_unjudged_not_passed(tmp_path):
    node = tmp_path / "node"
    shutil.copytree(NODES / "h100-kvm-1gpu", node)
    index = json.loads((node / "cmd" / "index.json").read_text())
    index.append({"argv": SOURCES[0], "rc": 1, "stdout": "", "stderr": "dmesg: read kernel buffer failed: Operation not permitted\n"})
    index.append({"argv": SOURCES[1], "rc": 1, "stdout": "", "stderr": "No journal files were found.\n"})
    (node / "cmd" / "index.json").write_text(json.dumps(index))
    g = pipeline.gather(ReplaySysRoot(node), Options())
    assert "Operation not permitted" in g["unknown"]["kernel_log"]
    assert not fired("gpu-hardware-faulty", g)
