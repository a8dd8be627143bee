"""Triage of the environment reports and outputs that the first paste tests left out, all on real
pastes (tests/fixtures/pastes/SOURCES.md, tests/fixtures/public/SOURCES.md): vLLM's collect_env in
both layouts and indented by Markdown, sglang's check_env, rocm-smi's topology, ibv_devinfo, and
the framework messages that travel with them in a ticket."""

from __future__ import annotations

import pytest

from conftest import NODES, PUBLIC, report_of, run_main
from hpcdoctor.parse import rdma, rocm_topo
from hpcdoctor.parse.collect_env import parse_collect_env
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import recognise

PASTES = NODES.parent / "pastes"
AMD = PUBLIC / "amd"


def _symbols(doc, severities=("error", "warning")):
    return [x["symbol"] for x in doc["findings"] if x["severity"] in severities]


# --- vLLM's collect_env -------------------------------------------------------------------------

def test_vllm_report_indented_by_markdown_is_read_whole():
    text = (PASTES / "vllm-dstack-8xh100-collect_env-indented.txt").read_text()
    p = parse_collect_env(text)
    t = p["torch"]
    assert p["format"] == "vllm" and t["version"] == "2.5.1+cu124" and t["cuda"] == "12.4"
    assert t["gpu_models"] == ["NVIDIA H100 80GB HBM3"] * 8 and t["driver_version"] == "550.90.12"
    assert t["pip"]["torch"] == "2.5.1" and t["pip"]["nvidia-nccl-cu12"] == "2.21.5"
    assert p["vllm"]["version"] == "0.6.3.post2.dev308+gb489fc3c" and "9.0+PTX" in p["vllm"]["build_flags"]
    assert p["gpu_topology"].startswith("GPU0\tGPU1") and "NIC0: mlx5_0" in p["gpu_topology"]
    assert p["env_vars"]["TORCH_ALLOW_TF32_CUBLAS_OVERRIDE"] == "1" and p["env_vars"]["NCCL_VERSION"] == "2.19.3"
    assert "Model name:" in p["lscpu"] and "avx512_bf16" in p["lscpu"]


def test_vllm_report_becomes_a_node_with_its_topology_and_cpu():
    doc = report_of("check", "--from", str(PASTES / "vllm-dstack-8xh100-collect_env-indented.txt"))
    f = doc["facts"]
    assert [r.split(": ", 1)[1] for r in doc["source"]["recognised"]] == ["collect_env (line 1)"]
    assert len(f["gpus"]) == 8 and f["gpus"][0]["compute_capability"] == "9.0"
    topo = f["nvidia"]["topology"]["devices"]
    assert topo["GPU0"]["links"]["GPU7"] == "NV18" and topo["GPU4"]["numa_affinity"] == 1
    assert f["cpu"]["source"] == "lscpu" and f["cpu"]["sockets"] == 2 and f["cpu"]["capabilities"]["avx512_bf16"]
    # Healthy: 2.5.1+cu124 carries sm_90, driver 550 runs any 12.x, and the NGC container sets
    # TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (the report's environment part), so no TF32 advice either.
    assert doc["findings"] == []
    assert f["torch"]["float32_matmul_precision"] == "high"


def test_vllm_report_environment_is_known_only_under_its_prefixes():
    doc = report_of("check", "--from", str(PASTES / "vllm-dstack-8xh100-collect_env-indented.txt"))
    env = doc["facts"]["env"]
    assert env["listed"]["source"] == "vLLM collect_env" and "NCCL" in env["listed"]["prefixes"]
    assert env["vars"]["CUDA_MODULE_LOADING"] == "LAZY" and "NVIDIA_VISIBLE_DEVICES" in env["vars"]
    # ACCELERATE_MIXED_PRECISION is under no listed prefix: unknown, so the rule is skipped, not run.
    (skip,) = [s for s in doc["skipped"] if s["symbol"] == "bf16-unsupported"]
    assert "lists only TORCH*" in skip["reason"]
    # NCCL_DEBUG is under a listed prefix and absent: known to be unset, so that rule ran.
    assert "nccl-debug-left-on" not in [s["symbol"] for s in doc["skipped"]]


def test_listed_env_semantics():
    from hpcdoctor.facts import FactView, MissingFact

    facts = {"env": {"vars": {"NCCL_DEBUG": "INFO"}, "listed": {"source": "vLLM collect_env",
                                                                "prefixes": ["NCCL", "OMP_"], "hidden": ["token"]}}}
    env = FactView(facts, {})["env.vars"]
    assert env.get("NCCL_DEBUG") == "INFO" and env.get("OMP_NUM_THREADS") is None
    for name in ("SLURM_JOB_ID", "NCCL_TOKEN_FILE"):  # not listed, or hidden by the report
        with pytest.raises(MissingFact):
            env.get(name)
    assert FactView({"env": {"vars": {}}}, {})["env.vars"].get("SLURM_JOB_ID") is None  # a whole env


def test_vllm_new_layout_cut_off_with_no_gpu_visible():
    # vLLM's 2025 layout ("Key   : value" under ===== banners), cut inside the CUDA section;
    # a cu128 build where no GPU is visible is not a CPU-only build, and no GPU is invented.
    path = PASTES / "vllm-omni-429-new-format-cuda-build-no-gpu-cut.txt"
    p = parse_collect_env(path.read_text())
    assert p["torch"]["version"] == "2.9.0+cu128" and p["torch"]["cuda_available"] is False
    assert p["torch"]["gpu_models"] is None and "driver_version" not in p["torch"]
    doc = report_of("check", "--from", str(path))
    assert doc["facts"]["torch"]["build"] == "cuda" and doc["facts"]["gpus"] is None
    assert not _symbols(doc)


def test_old_vllm_missing_newline_before_its_own_keys():
    # vLLM <= 0.5 printed "[conda] Could not collectROCM Version: ..." (no newline after conda).
    text = ("PyTorch version: 2.2.1+cu121\nVersions of relevant libraries:\n[pip3] torch==2.2.1\n"
            "[conda] Could not collectROCM Version: Could not collect\nNeuron SDK Version: N/A\n"
            "vLLM Version: 0.4.1\n")
    p = parse_collect_env(text)
    assert p["vllm"]["version"] == "0.4.1" and p["torch"]["pip"] == {"torch": "2.2.1"}


def test_vllm_report_cut_anywhere_never_invents():
    text = (PASTES / "vllm-dstack-8xh100-collect_env-indented.txt").read_text()
    for cut in range(0, len(text), 997):
        p = parse_collect_env(text[:cut])
        if "Nvidia driver version" not in text[:cut]:
            assert "driver_version" not in p["torch"]
        if "vLLM Version" not in text[:cut]:
            assert "vllm" not in p or "version" not in p["vllm"]


def test_forward_compatibility_is_not_called_a_too_old_driver():
    # torch 2.4.0+cu121 on driver 470 with "Is CUDA available: True" (A10s; vllm-project/vllm#7943):
    # the 12.x minor-version rule alone would say "too old", but CUDA initialised.
    doc = report_of("check", "--from", str(PASTES / "vllm-7943-a10-driver470-cu121-forward-compat.txt"))
    assert doc["facts"]["gpus"][0]["driver_version"] == "470.129.06"
    assert "driver-too-old" not in _symbols(doc)
    assert not [s for s in doc["skipped"] if s["symbol"] == "driver-too-old"]


# --- sglang's check_env -------------------------------------------------------------------------

def test_sglang_check_env_gives_gpus_capabilities_and_build():
    doc = report_of("check", "--from", str(PASTES / "sglang-965-check_env-8xa100-cut.txt"))
    f = doc["facts"]
    assert [r.split(": ", 1)[1] for r in doc["source"]["recognised"]] == ["sglang check_env (line 1)"]
    assert len(f["gpus"]) == 8 and {g["compute_capability"] for g in f["gpus"]} == {"8.0"}
    assert f["gpus"][0].get("compute_capability_source") != "knowledge"  # sglang said it
    assert f["torch"]["version"] == "2.3.1+cu121" and f["torch"]["cuda"] == "12.1" and f["torch"]["build"] == "cuda"
    assert f["torch"]["source"] == "sglang check_env"
    assert not _symbols(doc)


def test_sglang_on_turing_is_healthy_for_torch():
    # sglang#748: sglang 0.2.0 failed on RTX 2080 Ti; torch 2.3.1+cu121 itself carries sm_75 and
    # driver 550 runs it: hpcdoctor must not blame torch. The driver line repeats per GPU.
    path = PASTES / "sglang-748-check_env-10x2080ti-sm75-cut.txt"
    rec = recognise(path.read_text())
    assert rec.summary() == ["sglang check_env (line 2)"]
    doc = report_of("check", "--from", str(path))
    assert len(doc["facts"]["gpus"]) == 10 and doc["facts"]["gpus"][0]["driver_version"] == "550.90.07"
    assert not _symbols(doc)


def test_sglang_without_a_cuda_tag_keeps_the_cuda_version_unknown():
    p = parse_collect_env("Python: 3.10.12\nCUDA available: True\nGPU 0: NVIDIA H100\nPyTorch: 2.7.1\n")
    assert p["format"] == "sglang" and p["torch"]["platform"] == "cuda" and "cuda" not in p["torch"]


# --- rocm-smi topology --------------------------------------------------------------------------

def test_rocm_showtopo_cut_inside_numa_section():
    topo = rocm_topo.parse((AMD / "rocm_smi_lib-108_4gpu_pcie_rocm-smi_showtopo_cut.txt").read_text())
    assert topo["gpus"] == 4 and topo["weight"][0] == [0, 52, 52, 52] and topo["hops"][1][0] == 3
    assert topo["link_type"][0] == [None, "PCIE", "PCIE", "PCIE"]
    assert "numa_node" not in topo  # the NUMA line was cut mid-word: nothing kept from it


@pytest.mark.parametrize("name", ["legacy-rocm-build-4740_8gpu_rocm-smi_showtoponuma.txt",
                                  "optimum-amd_8gcd_MI250_rocm-smi_showtoponuma.txt"])
def test_rocm_showtoponuma_tabs_or_spaces(name):
    topo = rocm_topo.parse((AMD / name).read_text())
    assert topo["numa_node"] == {str(i): (0 if i < 4 else 1) for i in range(8)}


def test_cut_matrix_is_dropped_not_half_kept():
    text = (AMD / "rocm_smi_lib-108_4gpu_pcie_rocm-smi_showtopo_cut.txt").read_text()
    with pytest.raises(ValueError):  # the weight matrix cut after two of its four rows
        rocm_topo.parse(text[: text.index("GPU2   52")])
    topo = rocm_topo.parse(text[: text.index("GPU2   3 ")])  # weights whole, hops cut
    assert topo["weight"][3] == [52, 52, 52, 0] and "hops" not in topo


def test_mi250_concise_and_numa_pasted_together(tmp_path):
    path = tmp_path / "mi250.txt"
    path.write_text((AMD / "optimum-amd_8gcd_MI250_rocm-smi.txt").read_text()
                    + (AMD / "optimum-amd_8gcd_MI250_rocm-smi_showtoponuma.txt").read_text())
    doc = report_of("check", "--from", str(path))
    kinds = [r.split(": ", 1)[1].split(" (line")[0] for r in doc["source"]["recognised"]]
    assert kinds == ["rocm-smi", "rocm-smi --showtoponuma"]
    gpus = doc["facts"]["gpus"]
    assert len(gpus) == 8 and [g["numa_node"] for g in gpus] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert gpus[0]["numa_node_source"] == "rocm-smi"
    # ROCm 4/5's table names no device: whether these are 8 GCDs of 4 MI250s is not guessed.
    assert gpus[0]["name"] is None and doc["facts"]["amd"]["packages"] is None


def test_two_rocm_outputs_in_a_row_stay_two():
    a = (AMD / "optimum-amd_8gcd_MI250_rocm-smi.txt").read_text()
    c = (AMD / "rocm_smi_lib-108_4gpu_pcie_rocm-smi_showtopo_cut.txt").read_text()
    assert recognise(c + "\n" + a).summary() == ["rocm-smi --showtopo (line 1)", "rocm-smi (line 25)"]


# --- ibv_devinfo --------------------------------------------------------------------------------

def test_ibv_devinfo_port_down_found_and_cut_device_not_counted():
    path = PUBLIC / "net" / "deepep-60_ibv_devinfo_cx7_port_down_cut.txt"
    ports = rdma.parse_ibv_devinfo(path.read_text())
    assert ports == [{"device": "mlx5_0", "port": 1, "phys_state": None, "rate_gbps": None,
                      "state": "DOWN", "link_layer": "InfiniBand"}]
    doc = report_of("check", "--from", str(path))
    (hit,) = [x for x in doc["findings"] if x["symbol"] == "rdma-port-down"]
    assert "mlx5_0:1" in hit["message"]


# --- messages in the ticket ---------------------------------------------------------------------

def test_vllm_bf16_refusal_on_v100_diagnosed_from_the_log_alone():
    path = PASTES / "transformerlab-370-vllm-bf16-on-v100.txt"
    found = find_messages(path.read_text())
    # vLLM's start-up line names its release too ("Initializing an LLM engine (v0.5.4)"): a fact, no fault.
    assert [s["id"] for s in found] == ["frameworks:vllm-bf16-refused", "frameworks:bf16-requested", "frameworks:vllm-version-logged"]
    assert found[-1]["version"] == "0.5.4"
    doc = report_of("check", "--from", str(path))
    (hit,) = [x for x in doc["findings"] if x["symbol"] == "bf16-unsupported"]
    assert "Tesla V100-SXM2-32GB" in hit["message"] and "7.0" in hit["message"] and "--dtype=half" in hit["fix"]
    md = run_main("check", "--from", str(path), "--format", "markdown").stdout
    assert md.index("WARNING: bf16 requested on hardware without it") < md.index("--dtype=half")


def test_bf16_request_with_a_pasted_report_uses_the_report_gpus(tmp_path):
    # The same vLLM engine line pasted with an A100 node's report: bf16 is fine there.
    log = (PASTES / "transformerlab-370-vllm-bf16-on-v100.txt").read_text().splitlines()[-1]
    path = tmp_path / "t.txt"
    path.write_text((PASTES / "sglang-965-check_env-8xa100-cut.txt").read_text() + "\n\n" + log + "\n")
    doc = report_of("check", "--from", str(path))
    assert doc["facts"]["ticket"]["symptoms"][0]["id"] == "frameworks:bf16-requested"
    assert "bf16-unsupported" not in _symbols(doc)
    # ... and with the 2080 Ti node's, it is not.
    path.write_text((PASTES / "sglang-748-check_env-10x2080ti-sm75-cut.txt").read_text() + "\n\n" + log + "\n")
    doc = report_of("check", "--from", str(path))
    (hit,) = [x for x in doc["findings"] if x["symbol"] == "bf16-unsupported"]
    assert hit["subject"] == "GPU 0" and "RTX 2080 Ti" in hit["message"] and "7.5" in hit["message"]


def test_a_live_or_recorded_node_has_no_ticket(tmp_path):
    doc = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"))
    assert doc["facts"]["ticket"]["symptoms"] == []


def test_pip_and_conda_lists_of_one_torch_are_not_duplicates():
    # pytorch#35646: a conda install of pytorch shows up in pip's list too, same version.
    doc = report_of("check", "--from", str(PASTES / "pytorch-35646-pip-and-conda-same-torch-healthy.txt"))
    t = doc["facts"]["torch"]
    assert t["pip"]["torch"] == "1.4.0" and t["conda_list"]["pytorch"]["version"] == "1.4.0"
    assert "duplicate-libraries" not in [s["symbol"] for s in doc["skipped"]]
    assert "duplicate-libraries" not in _symbols(doc)


def test_vllm_rocm_report_tail_cut_inside_its_topology():
    # vllm-project/vllm#45751: the paste starts in lscpu's vulnerabilities and ends in the header
    # of rocm-smi --showtopo's first matrix. What is whole is read; the matrix is not half-kept.
    path = PASTES / "vllm-45751-rocm-new-format-tail-cut.txt"
    rec = recognise(path.read_text())
    assert rec.summary() == ["collect_env (line 8)"] and any("lines 1-7: no tool output, read for messages only" in n for n in rec.notes)
    p = parse_collect_env(rec.pieces[0].text)
    assert p["vllm"] == {"rocm_version": "7.2.53211-35e8c7bf89", "version": "0.1.dev0",
                         "build_flags": "CUDA Archs: Not Set; ROCm: Disabled; XPU: Disabled"}
    assert p["torch"]["pip"]["torch"] == "2.10.0+git8514f05" and "version" not in p["torch"]
    doc = report_of("check", "--from", str(path))
    assert doc["facts"]["torch"]["pip"]["torch"] == "2.10.0+git8514f05"
    assert doc["facts"]["amd"]["topology"] is None and "no whole topology matrix" in doc["unknown"]["amd.topology"]


@pytest.mark.parametrize("name,line,carries", [
    # Only torch's warning pasted (a Chinese ticket), and the warning with two prose lines after it.
    ("hellod035-leggedlab-26-rtx5090-torch-warning-only.txt", 6, "sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90"),
    ("pbfslab-deepprep-233-rtx5090-torch201-cu118-warning.txt", 1, "sm_37, sm_50, sm_60"),
])
def test_torch_arch_warning_alone_is_diagnosed(name, line, carries):
    doc = report_of("check", "--from", str(PASTES / name))
    assert _symbols(doc) == ["torch-missing-arch"]
    (hit,) = [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    assert hit["message"].startswith("NVIDIA GeForce RTX 5090 is sm_120") and carries in hit["message"]
    assert f"line {line}" in hit["message"]
    # The fix names wheels that carry sm_120 (torch >= 2.7, CUDA 12.8), from the wheel knowledge.
    # No driver in the paste: the newest build that carries sm_120 (2.12-2.14's cu132, RELEASE.md),
    # with the driver it needs.
    assert '"torch>=2.12,<2.15" --index-url https://download.pytorch.org/whl/cu132' in hit["fix"]
    assert "need a driver >= 580.65.06" in hit["fix"]


def test_warning_inside_a_collect_env_paste_is_not_a_second_finding():
    doc = report_of("check", "--from", str(PASTES / "pytorch-150733-rtx5090d-cu126.txt"))
    ids = {s["id"] for s in doc["facts"]["ticket"]["symptoms"]}
    # one catalogue entry per message (issue 30): the warning is one finding, not the table's and the catalogue's
    assert ids == {"torch:gpu-arch-not-compatible", "torch:arch-list-reported"}
    hits = [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    assert len(hits) == 1 and hits[0]["subject"] == "GPU 0" and "2.6.0+cu126" in hits[0]["message"]


# --- /proc/cpuinfo ------------------------------------------------------------------------------

CPUINFO = NODES.parent / "cpuinfo"


@pytest.mark.parametrize("name,arch,microarch,flag,lacks", [
    ("linux-rocky8-a64fx", "aarch64", "a64fx", "sve", "bf16"),
    ("linux-ubuntu22.04-neoverse_v2", "aarch64", "neoverse_v2", "bf16", None),
    ("linux-unknown-sapphirerapids", "x86_64", "sapphirerapids", "amx_bf16", None),
])
def test_pasted_cpuinfo_blocks(name, arch, microarch, flag, lacks):
    doc = report_of("check", "--from", str(CPUINFO / name))
    cpu = doc["facts"]["cpu"]
    assert doc["source"]["recognised"][0].endswith("/proc/cpuinfo (line 1)")
    assert cpu["arch"] == arch and cpu["microarch"] == microarch and cpu["capabilities"][flag] is True
    if lacks:
        assert cpu["capabilities"][lacks] is False
    # One processor's block is a part of /proc/cpuinfo: no count is made from it.
    assert cpu["logical_cpus"] is None and "part of it" in doc["unknown"]["cpu.logical_cpus"]


def test_whole_pasted_cpuinfo_is_counted():
    doc = report_of("check", "--from", str(NODES / "cpu-kvm-2core" / "fs" / "proc" / "cpuinfo"))
    cpu = doc["facts"]["cpu"]
    assert cpu["logical_cpus"] == 2 and cpu["sockets"] == 1


@pytest.mark.parametrize("name,field,marker", [
    ("sglang-965-check_env-8xa100-cut.txt", "driver_version", "CUDA Driver Version"),
    ("vllm-omni-429-new-format-cuda-build-no-gpu-cut.txt", "version", "PyTorch version"),
    ("vllm-45751-rocm-new-format-tail-cut.txt", "pip", "[pip3] conch"),
])
def test_reports_cut_anywhere_keep_only_what_is_there(name, field, marker):
    text = (PASTES / name).read_text()
    for cut in range(0, len(text) + 1, 37):
        part = text[:cut]
        p = parse_collect_env(part)
        recognise(part)
        if marker not in part:
            assert field not in p["torch"], (cut, p["torch"].get(field))


def test_a_paste_cut_inside_its_last_line_leaves_that_line_out():
    text = (PASTES / "vllm-7943-a10-driver470-cu121-forward-compat.txt").read_text()
    cut = text[: text.index("Nvidia driver version: 470") + len("Nvidia driver version: 47")]
    rec = recognise(cut)
    assert "cut off mid-line ('Nvidia driver version: 47'" in rec.notes[0]
    assert "driver_version" not in parse_collect_env(rec.pieces[0].text)["torch"]  # not "47"
    assert recognise(cut + "0.129.06\n").notes == []  # the whole line, with its line end, is read
