"""Triage from pasted text, on real recordings: pieces recognised in one paste, cut off, with
Windows line ends; diagnoses that are known for those recordings; refusals for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import NODES, PUBLIC, report_of, run_main
from hpcdoctor.triage.paste import recognise

H100 = NODES / "h100-kvm-1gpu" / "cmd"
NVSMI = PUBLIC / "nvsmi"


def _paste(tmp_path, *parts, crlf=False, name="paste.txt"):
    text = "\n".join(p.read_text() if hasattr(p, "read_text") else p for p in parts)
    if crlf:
        text = text.replace("\n", "\r\n")
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_one_paste_several_outputs_recognised(tmp_path):
    rec = recognise((H100 / "collect_env.txt").read_text() + (H100 / "nvsmi_q.txt").read_text()
                    + (H100 / "nvsmi_topo.txt").read_text() + (H100 / "numactl_H.txt").read_text()
                    + (PUBLIC / "net" / "gpud_ibstat_h100_node_8xCX7_400G_eth_all_active.txt").read_text())
    assert [p.kind.name for p in rec.pieces] == ["collect_env", "nvidia-smi -q", "nvidia-smi topo -m", "numactl -H", "ibstat"]


def test_h100_node_from_pastes_matches_its_replay(tmp_path):
    path = _paste(tmp_path, H100 / "collect_env.txt", H100 / "nvsmi_q.txt", H100 / "numactl_H.txt", crlf=True)
    doc = report_of("check", "--from", path)
    assert doc["source"]["mode"] == "paste"
    f = doc["facts"]
    assert f["cpu"]["arch"] == "x86_64" and f["cpu"]["capabilities"]["amx_bf16"] is True and f["cpu"]["source"] == "lscpu"
    (g,) = f["gpus"]
    assert g["name"] == "NVIDIA H100 80GB HBM3" and g["compute_capability"] == "9.0" and g["pcie_width"] == 16
    assert f["torch"]["version"] == "2.11.0+cu130" and f["torch"]["arch_list"][-1] == "sm_120"
    assert "arch_list" in f["torch"]["from_knowledge"]
    # Healthy control: no error, and nothing about the job is claimed without an environment.
    assert not [x for x in doc["findings"] if x["severity"] == "error"]
    assert any(s["symbol"] == "omp-threads-unset" for s in doc["skipped"])


@pytest.mark.parametrize("name,symbol,subject", [
    ("gpud_a10_nvsmi_q_remapped_rows_unc4_pending.txt", "row-remap-pending", "GPU 0"),
    ("gls_L4_nvsmi_a_pcie_x8_of_x16.txt", "pcie-link-degraded", "GPU 0"),
    ("gpud_8xH100-80GB-HBM3_nvsmi_q_535.161.08.txt", "gpu-throttled", "GPU 0"),
    ("gls_gh200_nvsmi_a_dram_unc1_pcie_x1.txt", "ecc-uncorrectable-errors", "GPU 0"),
])
def test_known_conditions_in_real_nvidia_smi_pastes(name, symbol, subject):
    doc = report_of("check", "--from", str(NVSMI / name))
    hits = [x for x in doc["findings"] if x["symbol"] == symbol]
    assert hits and hits[0]["subject"] == subject, [x["symbol"] for x in doc["findings"]]


def test_remap_pending_on_the_4xa100_is_found_on_the_right_gpu():
    doc = report_of("check", "--from", str(NVSMI / "gls_4xA100-SXM4_nvsmi_a_remap_pending.txt"))
    (hit,) = [x for x in doc["findings"] if x["symbol"] == "row-remap-pending"]
    assert hit["subject"] != "GPU 0" or doc["facts"]["gpus"][0]["remapped_rows"]["pending"]


@pytest.mark.parametrize("name", ["gpud_8xRTX4090_nvsmi_q_pcie_gen1_idle.txt", "gls_gh200_nvsmi_a_dram_unc1_pcie_x1.txt",
                                  "gpud_8xH100-80GB-HBM3_nvsmi_q_535.183.01.txt"])
def test_traps_do_not_fire_a_degraded_link(name):
    # Idle RTX 4090s drop to gen 1; the GH200's x1 PCIe link is by design (NVLink-C2C).
    doc = report_of("check", "--from", str(NVSMI / name))
    assert not [x for x in doc["findings"] if x["symbol"] == "pcie-link-degraded"]


def test_cut_off_paste_keeps_what_is_there(tmp_path):
    text = (H100 / "collect_env.txt").read_text()
    path = _paste(tmp_path, text[: text.index("Nvidia driver version")])
    doc = report_of("check", "--from", path)
    assert doc["facts"]["torch"]["version"] == "2.11.0+cu130"
    assert doc["facts"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert doc["facts"]["gpus"][0]["driver_version"] is None  # not in the cut paste: not invented


def test_several_from_and_stdin(tmp_path):
    a = _paste(tmp_path, H100 / "collect_env.txt", name="a.txt")
    res = run_main("check", "--from", a, "--from", "-", "--format", "json", input=(H100 / "nvsmi_q.txt").read_text())
    doc = json.loads(res.stdout)
    assert any("stdin: nvidia-smi -q" in r for r in doc["source"]["recognised"])


def test_markdown_reply_for_a_paste():
    res = run_main("check", "--from", str(NVSMI / "gpud_a10_nvsmi_q_remapped_rows_unc4_pending.txt"), "--format", "markdown")
    assert res.stdout.index("### ERROR") < res.stdout.index("### What was read") < res.stdout.index("### Node")
    assert "nvidia-smi -r -i 0" in res.stdout


def test_two_machines_in_one_paste_is_refused(tmp_path):
    path = _paste(tmp_path, H100 / "collect_env.txt", NVSMI / "gpud_a10_nvsmi_q_remapped_rows_unc4_pending.txt")
    res = run_main("check", "--from", path)
    assert res.returncode == 2 and "describe different machines" in res.stderr and res.stderr.count("\n") == 1


@pytest.mark.parametrize("content,needle", [("hello\nworld\n", "nothing hpcdoctor can read"), ("   \n", "empty"),
                                            ("\x00\x01\x02binary", "binary file")])
def test_bad_pastes(tmp_path, content, needle):
    path = tmp_path / "x.txt"
    path.write_bytes(content.encode())
    res = run_main("check", "--from", str(path))
    assert res.returncode == 2 and needle in res.stderr and "Traceback" not in res.stderr


def test_amd_json_paste():
    doc = report_of("check", "--from", str(PUBLIC / "amd" / "delai_8xMI300X_amd-smi_static_json_nonroot_banner.txt"))
    assert len(doc["facts"]["gpus"]) == 8


PASTES = NODES.parent / "pastes"


@pytest.mark.parametrize("name,expected", [
    ("pytorch-150733-rtx5090d-cu126.txt", "torch-missing-arch"),
    ("pytorch-122924-windows-cpu-build-rtx4080.txt", "torch-cpu-only"),
    ("pytorch-43058-cuda102-driver418.txt", "driver-too-old"),
])
def test_real_collect_env_pastes_get_their_known_diagnosis(name, expected):
    doc = report_of("check", "--from", str(PASTES / name))
    errors = [x["symbol"] for x in doc["findings"] if x["severity"] == "error"]
    assert errors == [expected], errors


def test_sm120_diagnosis_names_the_arch_and_the_knowledge():
    doc = report_of("check", "--from", str(PASTES / "pytorch-150733-rtx5090d-cu126.txt"))
    (f,) = [x for x in doc["findings"] if x["symbol"] == "torch-missing-arch"]
    assert "sm_120" in f["message"] and "no kernel image" in f["message"]
    assert doc["facts"]["gpus"][0]["compute_capability"] == "12.0"
    assert "arch_list" in doc["facts"]["torch"]["from_knowledge"]


@pytest.mark.parametrize("name", ["pytorch-51858-windows-gtx1050ti-cu117-healthy.txt",
                                  "pytorch-74733-cuda-build-no-gpu-visible.txt"])
def test_healthy_pastes_stay_silent(name):
    doc = report_of("check", "--from", str(PASTES / name))
    assert not [x for x in doc["findings"] if x["severity"] in ("error", "warning")]


def test_no_visible_gpu_is_not_called_a_cpu_build_and_gpus_are_not_invented():
    doc = report_of("check", "--from", str(PASTES / "pytorch-74733-cuda-build-no-gpu-visible.txt"))
    assert doc["facts"]["torch"]["build"] == "cuda"
    assert doc["facts"]["gpus"] is None and "gpus" in doc["unknown"]


def test_windows_driver_numbering():
    from hpcdoctor.rules._builds import driver_supports

    assert driver_supports("535.98", "11.7", windows=True)[0]
    assert not driver_supports("451.48", "11.7", windows=True)[0]
    assert not driver_supports("418.67", "10.2")[0] and driver_supports("440.33", "10.2")[0]


@pytest.mark.parametrize("path,kind,count,sku", [
    (PUBLIC / "amd" / "amdsmi_readme_4xMI300A_amd-smi_static.txt", "amd-smi static", 4, "mi300a"),
    (PUBLIC / "amd" / "gls_4xMI300X_vf_rocm-smi_a.txt", "rocm-smi -a", 4, "mi300x"),
    (PUBLIC / "amd" / "gls_4xMI300X_vf_rocm-smi.txt", "rocm-smi", 4, "mi300x"),
    (NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi.txt", "nvidia-smi", 1, "h100-sxm"),
])
def test_text_forms_of_the_vendor_tools(path, kind, count, sku):
    doc = report_of("check", "--from", str(path))
    assert [r.split(": ", 1)[1].split(" (line")[0] for r in doc["source"]["recognised"]] == [kind]
    gpus = doc["facts"]["gpus"]
    assert len(gpus) == count and {g["sku"] for g in gpus} == {sku}


def test_mi300a_readme_output_has_umc_ecc_disabled():
    doc = report_of("check", "--from", str(PUBLIC / "amd" / "amdsmi_readme_4xMI300A_amd-smi_static.txt"))
    hits = [x for x in doc["findings"] if x["symbol"] == "ecc-disabled"]
    assert len(hits) == 4 and "amdgpu RAS" in hits[0]["fix"]


def test_nvidia_smi_table_matches_the_xml_of_the_same_node():
    from hpcdoctor.parse import nvsmi_table, nvsmi_xml

    (t,) = nvsmi_table.parse((NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi.txt").read_text())["gpus"]
    (x,) = nvsmi_xml.parse((NODES / "h100-kvm-1gpu" / "cmd" / "nvsmi_qx.txt").read_text())["gpus"]
    for key in ("name", "memory_total_mib", "persistence_mode", "compute_mode", "ecc_uncorrectable_volatile", "mig_enabled"):
        assert t[key] == x[key], key


def test_terminal_paste_report_groups_what_was_not_judged():
    # A real ticket whose only readable line is flash-attn's refusal (X-R1#45): the terminal reply
    # names the GPU sources tried for both vendors and one line per missing fact, not 40 rules.
    path = Path(__file__).parent.parent / "fixtures" / "tickets" / "x-r1-45-v100-flash-attn-ampere-only.txt"
    res = run_main("check", "--from", str(path))
    out = res.stdout
    assert res.returncode == 1 and "pasted text" in out.splitlines()[0]
    gpus = next(ln for ln in out.splitlines() if ln.startswith("GPUs"))
    assert "NVIDIA: nvidia-smi -q" in gpus and "AMD: amd-smi" in gpus
    grouped = [ln for ln in out.splitlines() if ln.startswith("- not judged (")]
    assert grouped and not [ln for ln in out.splitlines() if ln.startswith("- skipped ")]
    counted = sum(int(ln.split("(", 1)[1].split(")", 1)[0]) for ln in grouped)
    doc = report_of("check", "--from", str(path))
    assert counted == len(doc["skipped"]) and len(grouped) < len(doc["skipped"])
    verbose = run_main("check", "--from", str(path), "--verbose").stdout
    assert sum(ln.startswith("- skipped ") for ln in verbose.splitlines()) == len(doc["skipped"])
