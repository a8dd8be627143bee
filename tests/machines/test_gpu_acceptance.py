"""bench/gpu_acceptance.py's comparisons, proven on the recorded H100 node before any GPU run: the
node's own nvidia-smi -q -x and the live NVML and torch values recorded there (reference.json)
against hpcdoctor's replay. A disagreement here is a real hpcdoctor bug or a comparator bug."""

from __future__ import annotations

import importlib.util
import json

from conftest import NODES, ROOT, report_of

NODE = NODES / "h100-kvm-1gpu"


def _acceptance():
    spec = importlib.util.spec_from_file_location("gpu_acceptance", ROOT / "bench" / "gpu_acceptance.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _live():
    return json.loads((NODE / "reference.json").read_text())


def test_recorded_h100_facts_agree_field_by_field():
    acc = _acceptance()
    doc = report_of("check", "--from", str(NODE), "--fail-on", "never")
    nvml = _live()["nvml"]["devices"][0]
    caps = [".".join(map(str, nvml["cc"]))]
    rows = acc.compare_gpu_facts(doc, (NODE / "cmd" / "nvsmi_qx.txt").read_text(), caps, {})
    fields = {r[1]: r for r in rows}
    assert not [r for r in rows if "FAIL" in r[4]], rows
    for key in ("name", "memory_total_mib", "compute_capability", "pcie_gen", "pcie_gen_max", "pcie_width",
                "pcie_width_max", "driver_version", "ecc_enabled", "ecc_uncorrectable_volatile",
                "persistence_mode", "power_limit_w", "clocks.sm_max_mhz", "clock_event_reasons", "mig_enabled",
                "compute_mode"):
        assert fields[key][4] == "ok", fields[key]
    # And the XML reference itself agrees with what NVML said live on that node.
    ref = acc.xml_reference((NODE / "cmd" / "nvsmi_qx.txt").read_text())[0]
    assert ref["pcie_gen_max"] == nvml["pcie_gen_max"] and ref["power_limit_w"] == nvml["power_limit_mw"] / 1000
    assert ref["memory_total_mib"] == nvml["mem_total"] // 2**20


def test_a_wrong_fact_fails_the_comparison():
    acc = _acceptance()
    doc = report_of("check", "--from", str(NODE), "--fail-on", "never")
    doc["facts"]["gpus"][0]["pcie_width"] = 8
    rows = acc.compare_gpu_facts(doc, (NODE / "cmd" / "nvsmi_qx.txt").read_text(), ["9.0"], {})
    assert [r[1] for r in rows if "FAIL" in r[4]] == ["pcie_width"]


def test_fast_depth_knowledge_agrees_with_the_live_torch_on_that_node():
    acc = _acceptance()
    doc = report_of("check", "--from", str(NODE), "--fail-on", "never")
    live = _live()["torch"]
    asked = {"nccl": live["nccl"], "arch_list": live["arch_list"], "cudnn": live["cudnn"]}
    rows = acc.compare_deep(doc, (NODE / "cmd" / "collect_env.txt").read_text(), asked)
    assert not [r for r in rows if "FAIL" in r[4]], rows


def test_bench_comparison_uses_tolerances_and_demands_a_reason_for_fp8():
    acc = _acceptance()
    bench = {"gpus": [{"gemm": {"bf16": {"n": 8192, "tflops": 729.7}, "fp8": {"skipped": "needs 8.9"}},
                       "memory": {"d2d_gbs": 3015.0, "h2d_pinned_gbs": 46.9}}]}
    ref = {"gemm": {"bf16": {"tflops": 740.0}}, "memory": {"d2d_gbs": 3200.0, "h2d_pinned_gbs": 46.0}}
    rows = {r[1]: r[4] for r in acc.compare_bench(bench, ref, (8, 0), "quick")}
    assert rows["quick gemm bf16 n=8192"].endswith("ok")  # 0.986
    assert rows["quick d2d_gbs"].endswith("FAIL")  # 0.942: outside 3%
    assert rows["quick h2d_pinned_gbs"].endswith("ok")  # 1.020: inside 5%
    assert rows["quick gemm fp8"] == "ok"  # not measurable below 8.9, and it says why
    rows = {r[1]: r[4] for r in acc.compare_bench({"gpus": [{"gemm": {"fp8": {}}}]}, {}, (8, 0), "quick")}
    assert rows["quick gemm fp8"] == "FAIL"
