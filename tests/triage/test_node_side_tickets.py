"""The node and scheduler side of triage (issue 24, set C): Slurm's refusals of a GPU request and
its drained nodes (knowledge/messages/slurm.toml), and GPUs that containers cannot get
(container.toml, nvml.toml's nvidia-container-cli form), amd-smi without its CPU driver (amd_smi.toml), MIG
(mig.toml, prose.toml mig-said). The slurm-22.05-* pastes are real outputs
of a real Slurm 22.05.8; the others are set C's tickets, verbatim (fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from

PASTES = FIXTURES / "pastes"


def symbols_of(name: str) -> dict:
    run = check_from(PASTES / f"{name}.txt")
    assert run["doc"] is not None, run["stderr"]
    return {f["symbol"]: f for f in run["doc"]["findings"]}


@pytest.mark.parametrize("name", ["slurm-22.05-no-grestypes-gpu-requests", "slurm-22.05-grestypes-gpu-node-without-gpus"])
def test_a_refused_gpu_request_is_the_request_not_the_node(name):
    found = symbols_of(name)
    hit = found["slurm-gpu-request-rejected"]
    assert "sinfo -o" in hit["fix"]
    assert not {"gpu-driver-unusable", "gpu-count-mismatch", "slurm-gres-count-mismatch"} & set(found)


def test_node_configuration_unavailable_needs_a_gpu_request_in_the_paste(tmp_path):
    # the same refusal for a job too large in CPUs or memory is not about GPUs
    lines = [l for l in (PASTES / "slurm-22.05-grestypes-gpu-node-without-gpus.txt").read_text().splitlines()
             if "Requested node configuration" in l]
    bare = tmp_path / "cpus.txt"
    bare.write_text("$ srun -n 64 true\n" + lines[0] + "\n")
    run = check_from(bare)
    assert run["doc"] is not None, run["stderr"]
    assert "slurm-gpu-request-rejected" not in {f["symbol"] for f in run["doc"]["findings"]}
    asked = tmp_path / "gpus.txt"
    asked.write_text("$ srun --gpus-per-node=1 true\n" + lines[0] + "\n")
    run = check_from(asked)
    assert "slurm-gpu-request-rejected" in {f["symbol"] for f in run["doc"]["findings"]}


def test_a_drained_node_that_reported_fewer_gpus():
    found = symbols_of("slurm-22.05-gres-count-reported-lower-drain")
    hit = found["slurm-gres-count-mismatch"]
    assert "reported 0 gres/gpu where slurm.conf configures 2" in hit["message"]
    assert "slurmd -G" in hit["fix"] and "state=resume" in hit["fix"]
    assert "slurm-gpu-request-rejected" not in found


# (paste, symbols that must fire, symbols that must not): what each thread established
CASES = [
    # docker run --gpus on a host without the NVIDIA Container Toolkit (four healthy RTX 4090s)
    ("xagent-273-docker-gpus-no-container-toolkit", {"nvidia-container-toolkit-missing"}, {"gpu-driver-unusable", "driver-too-old"}),
    # nvidia-container-cli on the host: NVML's library absent, the driver not loaded, CUDA's init failing
    ("docker-for-win-13835-libnvidia-ml-missing-title", {"gpu-driver-unusable"}, {"driver-too-old", "nvidia-container-toolkit-missing"}),
    ("dockwater-10-container-cli-nvml-driver-not-loaded", {"gpu-driver-unusable"}, {"driver-too-old", "torch-cpu-only"}),
    ("nvidia-docker-1393-nvml-driver-not-loaded", {"gpu-driver-unusable"}, {"driver-too-old", "torch-cpu-only"}),
    ("libnvidia-container-103-cuda-unknown-error-reboot", {"gpu-driver-unusable"}, {"driver-too-old", "torch-cpu-only"}),
    # Slurm's refusals in users' tickets, and a drained node's reason
    ("radical-saga-835-gres-option-unsupported-selecttype", {"slurm-gpu-request-rejected"}, {"gpu-driver-unusable", "gpu-count-mismatch"}),
    ("awsome-distributed-196-invalid-gres-specification", {"slurm-gpu-request-rejected"}, {"gpu-driver-unusable", "gpu-count-mismatch"}),
    ("sheffield-hpc-1042-srun-gpus-needs-partition-qos", {"slurm-gpu-request-rejected"}, {"gpu-driver-unusable", "gpu-count-mismatch"}),
    ("awsome-distributed-195-gres-gpu-count-reported-lower", {"slurm-gres-count-mismatch"}, {"gpu-driver-unusable"}),
    # amd-smi's CPU side (E-SMI) without the HSMP driver: not the GPUs' driver
    ("amdsmi-84-esmi-not-initialized-hsmp", {"amd-hsmp-driver-missing"}, {"gpu-driver-unusable"}),
    # MIG: a GPU named with its MIG profile; the user's own words (one device seen per process)
    ("pytorch-130181-mig-two-slices-assert-title", {"mig-enabled"}, {"gpu-count-mismatch", "gpu-driver-unusable"}),
    ("pytorch-102715-mig-one-device-per-process", {"mig-enabled"}, {"gpu-count-mismatch", "gpu-driver-unusable"}),
]


@pytest.mark.parametrize("name,must,must_not", CASES, ids=[c[0] for c in CASES])
def test_field_tickets(name, must, must_not):
    found = symbols_of(name)
    assert must <= set(found), (name, sorted(found))
    assert not must_not & set(found), (name, sorted(found))


def test_the_container_cli_on_the_host_says_the_host_driver():
    hit = symbols_of("docker-for-win-13835-libnvidia-ml-missing-title")["gpu-driver-unusable"]
    assert "on the host" in hit["message"] and "nvidia-smi" in hit["fix"]
    hit = symbols_of("xagent-273-docker-gpus-no-container-toolkit")["nvidia-container-toolkit-missing"]
    assert "nvidia-ctk runtime configure --runtime=docker" in hit["fix"]


def test_singularity_nv_broken_in_the_release_is_not_the_node():
    # healthy control: --nv broken in Singularity 3.0.0 itself; the node's GPU stack is fine
    run = check_from(PASTES / "singularity-2244-nv-broken-3-0-0-healthy.txt")
    fired = {f["symbol"] for f in (run["doc"] or {}).get("findings", [])}
    assert not {"gpu-driver-unusable", "driver-too-old", "nvidia-container-toolkit-missing"} & fired


@pytest.mark.parametrize("line,symbol", [
    # the CDI and the old docker runtime flag, as the emitters print them (container.toml's examples)
    ("Error: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=all", "nvidia-container-toolkit-missing"),
    ("docker: Error response from daemon: Unknown runtime specified nvidia.", "nvidia-container-toolkit-missing"),
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.5, please update your driver to a newer "
     "version, or use an earlier cuda container: unknown.", "driver-too-old"),
])
def test_container_messages_feed_their_rule(tmp_path, line, symbol):
    paste = tmp_path / "paste.txt"
    paste.write_text(line + "\n")
    run = check_from(paste)
    assert run["doc"] is not None, run["stderr"]
    assert symbol in {f["symbol"] for f in run["doc"]["findings"]}


def test_apptainer_finding_no_nv_libraries_alone_is_no_finding(tmp_path):
    # also what a CPU or login node prints for --nv: nothing to conclude from it alone
    paste = tmp_path / "paste.txt"
    paste.write_text("INFO:    Could not find any nv files on this host!\nWARNING: Could not find any nv libraries on this host!\n")
    run = check_from(paste)
    assert run["doc"] is not None, run["stderr"]
    assert not {f["symbol"] for f in run["doc"]["findings"]} & {"gpu-driver-unusable", "nvidia-container-toolkit-missing"}


def test_a_node_whose_nvidia_smi_shows_mig_disabled_is_not_mig(tmp_path):
    # the recorded H100's nvidia-smi table, with its "MIG M." column (Disabled), pasted as a user would
    from conftest import NODES

    paste = tmp_path / "nvsmi.txt"
    paste.write_text((NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi.txt").read_text() + "\nMIG mode is disabled here.\n")
    run = check_from(paste)
    assert run["doc"] is not None, run["stderr"]
    assert "mig-enabled" not in {f["symbol"] for f in run["doc"]["findings"]}


def test_mig_finding_names_the_line_and_the_one_device_limit():
    hit = symbols_of("pytorch-130181-mig-two-slices-assert-title")["mig-enabled"]
    assert "MIG-3g.40gb" in hit["message"] and "one MIG device" in hit["message"]
    assert "nvidia-smi -L" in hit["fix"]


def test_torchrun_failure_report_names_its_host_and_rank():
    # a real torchrun 2.13.0 report: rank 1 of two failed on this host; what a rule for a job that
    # fails on one node of many would compare across nodes (elastic.toml)
    from hpcdoctor.triage.messages import find_messages

    found = find_messages((PASTES / "torchrun-2.13-rank1-fails-childfailederror.txt").read_text(), families=["elastic"])
    by_id = {s["id"]: s for s in found}
    assert by_id["elastic:root-cause-host"]["host"] == "localhost"
    assert (by_id["elastic:failure-rank"]["rank"], by_id["elastic:failure-rank"]["local_rank"]) == ("1", "1")
    assert by_id["elastic:failure-exitcode"]["exitcode"] == "1"
    assert "elastic:child-failed" in by_id
