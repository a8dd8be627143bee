"""GPU health rules on recorded GPUs: the H100 node, and public nvidia-smi reports."""

from __future__ import annotations


from rulekit import facts, fired, gpu_change, nvsmi_node, recorded_paste_facts, run_rule

H100 = "h100-kvm-1gpu"


def test_healthy_h100_is_silent_on_every_health_rule():
    g = facts(H100)
    for sym in ("ecc-uncorrectable-errors", "row-remap-pending", "ecc-disabled", "pcie-link-degraded", "gpu-throttled",
                "power-limit-reduced", "persistence-mode-off", "mig-enabled", "compute-mode-restricted",
                "gpu-memory-in-use", "gpu-driver-unusable"):
        assert not fired(sym, g), sym


def test_driver_unusable(tmp_path):
    g = facts(H100, **{"gpus": None, "nvidia.error": "NVML init failed: Driver/library version mismatch"})
    g["unknown"]["gpus"] = "1 NVIDIA GPU(s) on the PCI bus, but NVML init failed"
    (f,) = fired("gpu-driver-unusable", g)
    assert "Driver/library version mismatch" in f.message and f.severity == "error"


def test_ecc_uncorrectable_volatile_and_aggregate():
    (f,) = fired("ecc-uncorrectable-errors", gpu_change(H100, ecc_uncorrectable_volatile=2, ecc_uncorrectable_aggregate=2))
    assert f.severity == "error" and f.subject == "GPU 0"
    (f,) = fired("ecc-uncorrectable-errors", gpu_change(H100, ecc_uncorrectable_aggregate=1))
    assert f.severity == "warning"


def test_row_remap_pending_and_failed():
    rows = {"correctable": 0, "uncorrectable": 4, "pending": True, "failed": False}
    (f,) = fired("row-remap-pending", gpu_change(H100, remapped_rows=rows))
    assert "reset" in f.fix
    (f,) = fired("row-remap-pending", gpu_change(H100, remapped_rows=dict(rows, pending=False, failed=True)))
    assert "RMA" in f.fix


def test_retired_pages_pending_on_pre_ampere(tmp_path):
    g = nvsmi_node("telegraf_tesla-t4_x8_of_x16_retired_pages.xml", tmp_path)
    assert not fired("row-remap-pending", g)  # recorded: 0 retired, none pending
    g["facts"]["gpus"][0]["retired_pages_pending"] = True
    assert fired("row-remap-pending", g)


def test_ecc_disabled():
    (f,) = fired("ecc-disabled", gpu_change(H100, ecc_enabled=False, ecc_pending=False))
    assert "-e 1" in f.fix


def test_pcie_narrow_link_on_real_a10g_and_t4(tmp_path):
    for name in ("telegraf_a10g_pcie_x8_of_x16_remapped_rows.xml", "telegraf_tesla-t4_x8_of_x16_retired_pages.xml"):
        (f,) = fired("pcie-link-degraded", nvsmi_node(name, tmp_path))
        assert "x8 of x16" in f.message


def test_pcie_gen_only_judged_when_busy():
    assert not fired("pcie-link-degraded", gpu_change(H100, pcie_gen=1))  # recorded idle
    (f,) = fired("pcie-link-degraded", gpu_change(H100, pcie_gen=3, clock_event_reasons=[]))
    assert "gen 3 of gen 5" in f.message


def test_pcie_gh200_c2c_x1_is_by_design():
    g = gpu_change(H100, name="NVIDIA GH200 480GB", pcie_width=1, pcie_width_max=1)
    assert not fired("pcie-link-degraded", g)
    g = gpu_change(H100, name="NVIDIA GH200 480GB", pcie_width=1, pcie_width_max=16)
    assert not fired("pcie-link-degraded", g)


def test_throttled_hardware_but_not_idle_or_power_cap():
    (f,) = fired("gpu-throttled", gpu_change(H100, clock_event_reasons=["hw_thermal_slowdown"]))
    assert "hw_thermal_slowdown" in f.message
    assert not fired("gpu-throttled", gpu_change(H100, clock_event_reasons=["gpu_idle", "sw_power_cap"]))


def test_a_clock_event_reason_we_do_not_know_is_reported_not_passed():
    from hpcdoctor.probes import nvml

    # 0x104 = sw_power_cap + display clocks (both known); 0x200 is a bit newer drivers may set.
    assert nvml.decode_clock_events(0x104) == ["sw_power_cap", "display_clocks_setting"]
    names = nvml.decode_clock_events(0x204)
    assert names == ["sw_power_cap", "unknown_reason_0x200"]
    (f,) = fired("gpu-throttled", gpu_change(H100, clock_event_reasons=names))
    assert "unknown_reason_0x200" in f.message and "does not know" in f.message
    assert f.evidence["unclassified"] == ["unknown_reason_0x200"]
    # A named reason from a newer nvidia-smi XML tag is treated the same way.
    (f,) = fired("gpu-throttled", gpu_change(H100, clock_event_reasons=["board_limit"]))
    assert "board_limit" in f.message


def test_power_limit_reduced():
    (f,) = fired("power-limit-reduced", gpu_change(H100, power_limit_w=500.0))
    assert "500 W of a default 700 W" in f.message


def test_persistence_off():
    assert fired("persistence-mode-off", gpu_change(H100, persistence_mode=False))


def test_mig_on_real_a100(tmp_path):
    (f,) = fired("mig-enabled", nvsmi_node("telegraf_a100-sxm4-80gb_mig_v12.xml", tmp_path))
    assert "4 instance(s)" in f.message


def test_compute_mode():
    (f,) = fired("compute-mode-restricted", gpu_change(H100, compute_mode="Prohibited"))
    assert f.severity == "error"
    g = gpu_change(H100, compute_mode="Exclusive_Process")
    assert not fired("compute-mode-restricted", g)  # one process, one GPU
    g["facts"]["scheduler"]["launcher_local_world_size"] = 4
    assert fired("compute-mode-restricted", g)


def test_memory_in_use_on_real_t4(tmp_path):
    (f,) = fired("gpu-memory-in-use", nvsmi_node("telegraf_tesla-t4_x8_of_x16_retired_pages.xml", tmp_path))
    assert "675" in f.message and "5762" in f.message


def test_health_rules_skip_when_gpus_unknown():
    g = facts(H100, gpus=None)
    g["unknown"]["gpus"] = "NVML init failed"
    findings, skipped = run_rule("ecc-uncorrectable-errors", g)
    assert not findings and "NVML init failed" in skipped[0]["reason"]


def test_v100s_node_is_healthy(tmp_path):
    g = nvsmi_node("datakit_8x_v100s-pcie-32gb.xml", tmp_path)
    assert len(g["facts"]["gpus"]) == 8
    for sym in ("ecc-uncorrectable-errors", "row-remap-pending", "gpu-throttled"):
        assert not fired(sym, g), sym


def test_ecc_off_on_eight_geforce_rtx_4090s_is_their_normal_state():
    """issue 15: a real 8x RTX 4090 nvidia-smi -q (ECC Mode Current/Pending: Disabled) drew eight
    'nvidia-smi -e 1' findings. GeForce is not held to ECC, by the GPU table's segment."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    paste = Path(__file__).parent.parent / "fixtures" / "public" / "nvsmi" / "gpud_8xRTX4090_nvsmi_q_pcie_gen1_idle.txt"
    out = subprocess.run([sys.executable, "-m", "hpcdoctor", "check", "--from", str(paste), "--format", "json"],
                         capture_output=True, text=True)
    doc = json.loads(out.stdout)
    gpus = doc["facts"]["gpus"]
    assert len(gpus) == 8 and {g["ecc_enabled"] for g in gpus} == {False}
    assert not [x for x in doc["findings"] if x["symbol"] == "ecc-disabled"]


def test_ecc_disabled_is_judged_by_segment_not_by_name_guessing():
    datacenter = gpu_change(H100, ecc_enabled=False, ecc_pending=False)
    assert fired("ecc-disabled", datacenter)
    for name in ("NVIDIA GeForce RTX 4090", "NVIDIA RTX A6000", "NVIDIA Graphics Device"):
        assert not fired("ecc-disabled", gpu_change(H100, name=name, ecc_enabled=False, ecc_pending=False)), name
    assert fired("ecc-disabled", gpu_change(H100, name="NVIDIA H200 NVL", ecc_enabled=False, ecc_pending=False))


def test_dcgms_thermal_clocks_event_is_a_throttled_gpu_in_dcgms_words():
    # NVIDIA/DCGM#270: the health watch's DCGM_FR_CLOCKS_EVENT_THERMAL, pasted without nvidia-smi
    (f,) = fired("gpu-throttled", recorded_paste_facts("dcgm-270-health-thermal-clocks-event.txt"))
    assert f.severity == "warning" and "DCGM_FR_CLOCKS_EVENT_THERMAL" in f.message
    assert "the user says" not in f.message and "line 1" in f.message
