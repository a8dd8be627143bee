"""Benchmarks: the payload on the real CPU torch, the arithmetic, and the judgement rules on the
figures measured on the recorded H100 node (fixtures/nodes/h100-kvm-1gpu/bench.txt)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import torch_python
from rulekit import derived_peak, fired, h100_with_bench, recorded_h100_bench, renamed_node
from hpcdoctor.checks import bench as bench_check
from hpcdoctor.payload import bench_allreduce, bench_lock, bench_probe

PAYLOAD = bench_probe.__file__


def test_busbw_arithmetic():
    assert bench_allreduce.busbw(100.0, 2) == 100.0
    assert bench_allreduce.busbw(100.0, 8) == pytest.approx(175.0)
    assert bench_allreduce.allreduce_sizes(64 << 20) == [8 << 10, 64 << 10, 512 << 10, 4 << 20, 32 << 20, 64 << 20]


def test_healthy_h100_figures_pass_every_bench_rule():
    g = h100_with_bench()
    assert g["facts"]["bench"]["gpus"][0]["gemm"]["bf16"]["tflops"] == 729.7
    for sym in ("bench-gemm-low", "bench-memory-low", "bench-allreduce-low", "bench-gpu-straggler"):
        assert not fired(sym, g), sym


def test_gemm_low():
    b = recorded_h100_bench()
    b["gpus"][0]["gemm"]["bf16"]["tflops"] = 400.0
    (f,) = fired("bench-gemm-low", h100_with_bench(b))
    assert "bf16 GEMM n=8192: 400.0 TFLOP/s measured, 544 expected" in f.message
    assert "h100-sxm datasheet peak of 989.5" in f.message


def test_gemm_low_against_site_config():
    cfg = {"bench": {"min_gemm_bf16_tflops": 750}, "_path": "site.toml"}
    (f,) = fired("bench-gemm-low", h100_with_bench(), cfg)
    assert "750 expected (site config site.toml)" in f.message


def test_gemm_expectation_derived_for_unknown_gpu():
    g = h100_with_bench()
    g["facts"]["gpus"][0]["name"] = "NVIDIA H999 Engineering Sample"
    g["facts"]["bench"]["gpus"][0]["name"] = "NVIDIA H999 Engineering Sample"
    g["facts"]["bench"]["gpus"][0]["gemm"]["bf16"]["tflops"] = 300.0
    g["facts"]["torch"]["devices"] = [{"index": 0, "multi_processor_count": 132}]
    (f,) = fired("bench-gemm-low", g)
    assert "derived from 132 SMs x 1980 MHz" in f.message and "not in hpcdoctor's knowledge" in f.message


def test_memory_low():
    b = recorded_h100_bench()
    b["gpus"][0]["memory"]["d2d_gbs"] = 1500.0
    b["gpus"][0]["memory"]["h2d_pinned_gbs"] = 12.0
    found = fired("bench-memory-low", h100_with_bench(b))
    assert len(found) == 2 and "PCIe gen 5 x16" in found[1].message


def test_allreduce_low_and_ok():
    b = recorded_h100_bench()
    b["allreduce"] = {"backend": "nccl", "world_size": 8, "results": [
        {"bytes": 8192, "time_us": 30.0, "algbw_gbs": 0.27, "busbw_gbs": 0.48},
        {"bytes": 1 << 30, "time_us": 9000.0, "algbw_gbs": 119.3, "busbw_gbs": 208.8}]}
    (f,) = fired("bench-allreduce-low", h100_with_bench(b))
    assert "busbw 208.8 GB/s measured, 315 expected" in f.message
    b["allreduce"]["results"][-1]["busbw_gbs"] = 470.0
    assert not fired("bench-allreduce-low", h100_with_bench(b))


def test_straggler():
    b = recorded_h100_bench()
    for i, tf in enumerate((729.7, 731.0, 600.0, 728.0)):
        gpu = copy.deepcopy(b["gpus"][0])
        gpu["index"], gpu["gemm"]["bf16"]["tflops"] = i, tf
        b["gpus"] = b["gpus"][:i] + [gpu] if i else [gpu]
    (f,) = fired("bench-gpu-straggler", h100_with_bench(b))
    assert f.subject == "GPU 2" and "82%" in f.message


def test_tf32_advice_carries_the_measured_speedup():
    (f,) = fired("tf32-disabled", h100_with_bench())
    assert "7.4x faster here (52 -> 381 TFLOP/s measured)" in f.message


# --- the payload on the real CPU torch ---------------------------------------------------------------

@pytest.fixture(scope="module")
def py():
    return torch_python()


def _run(py, *args, timeout=120, env=None):
    """The payload's lines assembled as the check does, its stderr, and its wall time."""
    full = dict(os.environ, **(env or {}))
    t0 = time.monotonic()
    res = subprocess.run([py, PAYLOAD, *args], capture_output=True, text=True, timeout=timeout, env=full)
    wall = time.monotonic() - t0
    return bench_check.assemble(res.stdout, res.returncode, res.stderr, timeout), res.stderr, wall


def _honest(bench):
    """Every CPU measurement and the all-reduce carry a figure or a stated reason."""
    for case in ("fp32", "bf16", "fp32_bf16_fastmath"):
        v = bench["cpu"][case]
        assert isinstance(v.get("gflops"), float) or v.get("skipped"), (case, v)
    load = bench["cpu"]["other_load"]
    assert isinstance(load.get("other_busy_cpus"), (int, float)) or load.get("skipped"), load
    ar = bench["allreduce"]
    assert ar.get("results") or ar.get("skipped") or ar.get("not_applicable"), ar


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_payload_cpu_gemm_and_gloo_allreduce(py):
    out, err, _ = _run(py, "--tier", "quick", "--budget", "60", "--cpu-n", "256", "--max-allreduce-bytes", str(1 << 20))
    assert out["device_kind"] == "cpu" and out["gpus"] == [] and "stopped" not in out
    cpu = out["cpu"]
    assert cpu["n"] == 256 and cpu["fp32"]["gflops"] > 0 and cpu["bf16"]["gflops"] > 0
    assert cpu["fp32"]["n"] == 256 and cpu["fp32"]["calls"] >= bench_probe.MIN_SAMPLES
    ar = out["allreduce"]
    assert ar["backend"] == "gloo" and ar["world_size"] == 2
    sizes = [r["bytes"] for r in ar["results"]]
    assert sizes[0] == 8 << 10 and sizes[-1] == 1 << 20
    for r in ar["results"]:
        assert r["busbw_gbs"] == pytest.approx(r["algbw_gbs"], rel=0.02)  # n=2: factor 1
        assert r["time_us"] > 0
    # one plain progress line per measurement, saying what ran and the time left
    lines = [ln for ln in err.splitlines() if ln.startswith("hpcdoctor bench:")]
    assert len(lines) == 5 and lines[1].startswith("hpcdoctor bench: 2/5 cpu.fp32 GEMM") and "s left" in lines[1]
    # first, who else holds these CPUs: a count of CPUs, whatever this machine's load
    load = cpu["other_load"]
    assert 0 <= load["other_busy_cpus"] <= load["cpus"] and 0 < load["seconds"] < 5, load
    assert lines[0].startswith("hpcdoctor bench: 1/5 cpu.other_load: %g of %d CPUs busy with other work"
                               % (load["other_busy_cpus"], load["cpus"])), lines[0]


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_payload_budget_of_half_a_second(py):
    out, _, wall = _run(py, "--tier", "quick", "--budget", "0.5")
    assert wall < 30  # the torch import cannot be cut short; nothing after it runs
    _honest(out)
    assert not bench_check.not_measured(out).keys() ^ {"cpu.other_load", "cpu.fp32", "cpu.bf16", "cpu.fp32_bf16_fastmath",
                                                          "allreduce"}
    assert all("budget" in why for why in bench_check.not_measured(out).values())


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_slow_measurement_keeps_the_budget_and_the_figures_before_it(py):
    """A bf16 GEMM made 2000x slower (as on a CPU that emulates bf16): the budget holds, and the
    fp32 figure measured before it survives."""
    budget = 8.0
    out, err, wall = _run(py, "--tier", "quick", "--budget", str(budget), "--max-allreduce-bytes", "8192",
                          env={"HPCDOCTOR_BENCH_SLOW": "cpu.bf16:2000"})
    # The budget's clock starts in main(): its own elapsed time is what the budget holds. Starting
    # Python before that is outside it and takes seconds on a loaded CI machine, so the wall time
    # only bounds a hang.
    assert out["elapsed_s"] < budget + 1.0, out["elapsed_s"]
    assert wall < budget + 10.0, wall
    _honest(out)
    assert out["cpu"]["fp32"]["gflops"] > 0
    bf16 = out["cpu"]["bf16"]
    assert "would take about" in bf16.get("skipped", "") or bf16["n"] < 1024, bf16
    assert "cpu.bf16" in err


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
@pytest.mark.parametrize("how, signal_name", [("kill", "SIGKILL"), ("segv", "SIGSEGV")])
def test_killed_payload_keeps_earlier_figures(py, how, signal_name):
    out, _, _ = _run(py, "--tier", "quick", "--budget", "20", "--max-allreduce-bytes", "8192",
                     env={"HPCDOCTOR_BENCH_CRASH": "cpu.bf16:%s" % how})
    assert out["cpu"]["fp32"]["gflops"] > 0
    assert out["cut"] == "cpu.bf16" and signal_name in out["stopped"]
    missing = bench_check.not_measured(out)
    assert missing["cpu.bf16"].startswith("cut: ") and missing["allreduce"].startswith("not reached: ")
    assert set(missing) == {"cpu.bf16", "cpu.fp32_bf16_fastmath", "allreduce"}


def test_assemble_keeps_lines_before_a_cut_short_last_line():
    text = "\n".join([
        json.dumps({"at": ["torch"], "value": "2.13.0+cpu"}),
        json.dumps({"plan": [["cpu.fp32", ["cpu", "fp32"]], ["allreduce", ["allreduce"]]]}),
        json.dumps({"start": "cpu.fp32"}),
        json.dumps({"at": ["cpu", "fp32"], "value": {"gflops": 100.0, "n": 1024}, "name": "cpu.fp32"}),
        json.dumps({"start": "allreduce"}),
        '{"at": ["allreduce"], "value": {"back'])
    doc = bench_check.assemble(text, 124, "", 17.5)
    assert doc["cpu"]["fp32"]["gflops"] == 100.0 and doc["cut"] == "allreduce"
    assert doc["allreduce"] == {"skipped": "cut: the payload was stopped at its 17.5 s deadline"}
    assert doc["gpus"] == []


def test_assemble_without_any_line_names_every_default_measurement():
    doc = bench_check.assemble("", 1, "ImportError: libtorch_cpu.so: cannot open shared object file", 20)
    assert "before torch was imported" in doc["stopped"] and "libtorch_cpu.so" in doc["stopped"]
    assert set(bench_check.not_measured(doc)) == {"cpu.other_load", "cpu.fp32", "cpu.bf16",
                                                       "cpu.fp32_bf16_fastmath", "allreduce"}


def test_gpu_lock_serialises(tmp_path, monkeypatch):
    monkeypatch.setenv("HPCDOCTOR_LOCK_DIR", str(tmp_path))
    first = bench_lock.GpuLock("GPU-abc", wait=1)
    with pytest.raises(TimeoutError, match="another benchmark holds"):
        bench_lock.GpuLock("GPU-abc", wait=0.3)
    def later():
        time.sleep(0.4)
        first.release()

    threading.Thread(target=later).start()
    second = bench_lock.GpuLock("GPU-abc", wait=5)
    assert second.waited >= 0.3
    second.release()


def test_lock_directory_not_writable(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HPCDOCTOR_LOCK_DIR", str(blocker / "locks"))  # not a directory, even for root
    with pytest.raises(TimeoutError, match="cannot create the lock .* set HPCDOCTOR_LOCK_DIR"):
        bench_lock.GpuLock("GPU-abc", wait=0.1)


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_cli_bench_quick_on_cpu(py):
    from conftest import report_of

    t0 = time.monotonic()
    doc = report_of("check", "--bench", "quick", "--python", py, timeout=180)
    wall = time.monotonic() - t0
    assert wall < 20 + 3, wall  # the tier's 20 s, plus the CLI's own start and exit
    bench = doc["facts"]["bench"]
    _honest(bench)
    assert bench["cpu"]["fp32"].get("gflops") or "budget" in bench["cpu"]["fp32"]["skipped"]
    assert doc["depth"] == "deep"
    assert doc["checks"]["bench"]["status"] == "ok"


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_cli_keeps_figures_of_a_crashed_payload(py):
    from conftest import report_of

    doc = report_of("check", "--bench", "quick", "--python", py, timeout=180,
                    env={"HPCDOCTOR_BENCH_CRASH": "cpu.bf16:segv"})
    bench = doc["facts"]["bench"]
    assert bench["cut"] == "cpu.bf16" and "SIGSEGV" in bench["stopped"]
    assert bench["cpu"]["fp32"].get("gflops") or bench["cpu"]["fp32"].get("skipped")
    assert bench["cpu"]["bf16"]["skipped"].startswith("cut: ")


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_cli_budget_of_half_a_second(py):
    t0 = time.monotonic()
    from conftest import run_cli

    res = run_cli("check", "--bench", "quick", "--budget", "0.5", "--python", py, "--format", "json", timeout=60)
    assert time.monotonic() - t0 < 10
    # 3: nothing failed, but probes that matter could not finish in half a second (never a pass).
    assert res.returncode in (0, 1, 3), res.stderr
    doc = json.loads(res.stdout)
    bench = doc["facts"].get("bench")
    if bench is None:  # the probe itself was stopped: Unknown with its reason
        assert doc["unknown"]["bench"]
    else:
        _honest(bench)


@pytest.mark.slow  # a real benchmark payload: torch import, GEMMs, a gloo all-reduce
def test_cli_stops_a_hung_payload_at_the_deadline_and_keeps_its_figures(py):
    from conftest import report_of

    t0 = time.monotonic()
    doc = report_of("check", "--bench", "quick", "--budget", "12", "--python", py, timeout=60,
                    env={"HPCDOCTOR_BENCH_CRASH": "cpu.bf16:hang"})
    assert time.monotonic() - t0 < 12 + 3
    bench = doc["facts"]["bench"]
    assert bench["cut"] == "cpu.bf16" and "deadline" in bench["stopped"]
    assert bench["cpu"]["fp32"].get("gflops") or bench["cpu"]["fp32"].get("skipped")
    assert bench["allreduce"]["skipped"].startswith("not reached: ")


def test_geforce_card_is_not_held_to_data_centre_tensor_rates():
    """An RTX 4090 (128 SMs, 2520 MHz) has no datasheet entry; its bf16 GEMM with fp32 accumulation
    runs at half the professional Ada rate per SM and clock (NVIDIA's Ada and GA102 whitepapers),
    so the derived peak is half that of a workstation card with the same SMs and clock."""
    geforce, why = derived_peak("NVIDIA GeForce RTX 4090", "8.9", 128, 2520)
    pro, _ = derived_peak("NVIDIA RTX 6000 Ada Generation", "8.9", 128, 2520)
    assert geforce == pytest.approx(pro / 2) and "GeForce tensor rate" in why
    tf32, _ = derived_peak("NVIDIA GeForce RTX 3090", "8.6", 82, 1695, "tf32")
    assert tf32 == pytest.approx(derived_peak("NVIDIA RTX A6000", "8.6", 82, 1695, "tf32")[0] / 2)
    fp32, _ = derived_peak("NVIDIA GeForce RTX 4090", "8.9", 128, 2520, "fp32")
    assert fp32 == derived_peak("NVIDIA RTX 6000 Ada Generation", "8.9", 128, 2520, "fp32")[0]


def test_unknown_card_on_a_geforce_architecture_gets_the_lower_rate_and_says_so():
    low, why = derived_peak("NVIDIA Graphics Device", "8.9", 128, 2520)
    assert low == derived_peak("NVIDIA GeForce RTX 4090", "8.9", 128, 2520)[0] and "rate class unknown" in why


def _peak(name, cc, sms, clk, dtype):
    """The peak (TFLOP/s) behind the derived expectation, or None where none is derived."""
    from hpcdoctor import knowledge

    got = derived_peak(name, cc, sms, clk, dtype)
    return None if got is None else got[0] / knowledge.load("thresholds")["bench"]["gemm_fraction"]


def test_turing_fallback_peaks_are_the_figures_nvidia_publishes_for_those_cards():
    """NVIDIA, "NVIDIA Turing Architecture In-Depth" (developer.nvidia.com/blog/nvidia-turing-
    architecture-in-depth/, Table 1, read 2026-11-23): Quadro RTX 6000, 72 SMs at 1770 MHz, 130.5
    FP16 tensor TFLOPS with FP32 accumulation; GeForce RTX 2080 Ti Founders Edition, 68 SMs at
    1635 MHz, 56.9 with FP32 accumulation (113.8 with FP16). The table gave 7.5 half the per-SM rate,
    which held the Quadro to 65 and an unknown Turing card to a quarter of the rate. Names as pci.ids
    (10de:1e30 subsystem 'Quadro RTX 6000') and sglang's check_env (pastes/sglang-748-...) write them."""
    assert _peak("Quadro RTX 6000", "7.5", 72, 1770, "fp16") == pytest.approx(130.5, abs=0.1)
    assert _peak("NVIDIA GeForce RTX 2080 Ti", "7.5", 68, 1635, "fp16") == pytest.approx(56.9, abs=0.1)


def test_blackwell_fallback_peaks_geforce_half_of_rtx_pro():
    """NVIDIA RTX Blackwell whitepaper, Appendix A Table 3: GeForce RTX 5090 (170 SMs, 2407 MHz)
    'Peak BF16 Tensor TFLOPS with FP32 Accumulate 209.5/419' (dense/sparse); NVIDIA RTX Blackwell PRO
    whitepaper v1.0, Appendix A Table 4: RTX PRO 6000 Blackwell Workstation Edition (188 SMs,
    2617 MHz) '503.8/1007.6' (rows read 2026-11-23 as quoted word for word in public files; the PDFs
    were not reachable). Before, 12.0 had no per-SM rates and neither card got an expectation."""
    geforce = _peak("NVIDIA GeForce RTX 5090", "12.0", 170, 2407, "bf16")
    pro = _peak("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", 188, 2617, "bf16")
    assert geforce == pytest.approx(209.5, abs=0.1) and pro == pytest.approx(503.8, abs=0.1)
    assert _peak("NVIDIA GeForce RTX 5090 D", "12.0", 170, 2407, "fp16") == pytest.approx(209.5, abs=0.1)
    # no NVIDIA TF32 or FP8 row read for 12.0: no expectation rather than a guessed one
    assert derived_peak("NVIDIA GeForce RTX 5090", "12.0", 170, 2407, "tf32") is None
    assert derived_peak("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0", 188, 2617, "fp8") is None


def test_gtx_16_cards_get_no_tensor_expectation_only_fp32():
    """TU116/TU117 GeForce parts (pci.ids 10de:2182 'TU116 [GeForce GTX 1660 Ti]', 1f09 'TU106
    [GeForce GTX 1660 SUPER]'): no NVIDIA source read here gives their tensor rate, so none is
    borrowed from the RTX 20 cards; their FP32 rate is still derived."""
    assert derived_peak("NVIDIA GeForce GTX 1660 SUPER", "7.5", 22, 1785, "fp16") is None
    assert _peak("NVIDIA GeForce GTX 1660 SUPER", "7.5", 22, 1785, "fp32") == pytest.approx(22 * 128 * 1785e-6)


def _turing_or_blackwell_node(name, cc, sms, clk, dtype, tflops):
    g = h100_with_bench()
    for gpu in (g["facts"]["gpus"][0], g["facts"]["bench"]["gpus"][0]):
        gpu["name"] = name
    g["facts"]["gpus"][0]["compute_capability"] = cc
    g["facts"]["gpus"][0]["clocks"]["sm_max_mhz"] = clk
    g["facts"]["bench"]["gpus"][0]["gemm"] = {dtype: {"n": 8192, "tflops": tflops}}
    g["facts"]["torch"]["devices"] = [{"index": 0, "multi_processor_count": sms}]
    return g


def test_slow_quadro_rtx_6000_is_reported_and_a_healthy_rtx_5090_is_not():
    """Verdicts on the figures above: a Quadro RTX 6000 measuring 50 fp16 TFLOP/s is at 38% of the
    130.5 NVIDIA publishes and is reported (the half rate the table used to give, 65, let it pass);
    an RTX 5090 measuring 150 bf16 TFLOP/s (72% of its 209.5) passes, and one measuring 90 does not."""
    (f,) = fired("bench-gemm-low", _turing_or_blackwell_node("Quadro RTX 6000", "7.5", 72, 1770, "fp16", 50.0))
    assert "fp16 GEMM n=8192: 50.0 TFLOP/s measured" in f.message and "of 130 TFLOP/s derived" in f.message
    assert "data-centre/workstation tensor rate" in f.message
    assert not fired("bench-gemm-low", _turing_or_blackwell_node("NVIDIA GeForce RTX 5090", "12.0", 170, 2407, "bf16", 150.0))
    (f,) = fired("bench-gemm-low", _turing_or_blackwell_node("NVIDIA GeForce RTX 5090", "12.0", 170, 2407, "bf16", 90.0))
    assert "GeForce tensor rate (fp32 accumulate, half)" in f.message and "geforce-rtx-50" in f.message


def _h200_nvl_node(tflops):
    g = h100_with_bench()
    for gpu in (g["facts"]["gpus"][0], g["facts"]["bench"]["gpus"][0]):
        gpu["name"] = "NVIDIA H200 NVL"
    g["facts"]["bench"]["gpus"][0]["gemm"] = {"bf16": {"n": 8192, "tflops": tflops}}
    return g


def test_h200_nvl_is_judged_against_its_own_datasheet_not_the_sxm_part():
    """NVIDIA's H200 page (nvidia.com/en-us/data-center/h200/, Specifications, read 2026-11-23 in a
    verbatim capture) lists BFLOAT16 1,671 TFLOPS for H200 NVL against 1,979 for H200 SXM, both
    'With sparsity': dense 835.5 and 989.5. An H200 NVL at 500 bf16 TFLOP/s (60% of its own peak)
    is healthy; held to the SXM part's datasheet, as the NVL card once was, it read as slow.
    'NVIDIA H200 NVL' is the name pci.ids gives 10de:233b ('GH100 [H200 NVL]') with NVML's prefix."""
    assert not fired("bench-gemm-low", _h200_nvl_node(500.0))
    (f,) = fired("bench-gemm-low", _h200_nvl_node(400.0))
    assert "h200-nvl datasheet peak of 835.5" in f.message


def test_export_hoppers_are_not_held_to_the_h100_tensor_rate():
    """'NVIDIA H20' and 'NVIDIA H800' (pci.ids 10de:2329 'GH100 [H20]', 2324 'GH100 [H800]', with
    NVML's prefix) have no NVIDIA datasheet in reach; deriving their bf16 peak from GH100's per-SM
    rate would guess. A plain 'NVIDIA H100' (10de:2336, no board named) is GH100 at its own rate."""
    assert derived_peak("NVIDIA H20", "9.0", 132, 1980) is None
    assert derived_peak("NVIDIA H800", "9.0", 132, 1980, "tf32") is None
    assert _peak("NVIDIA H100", "9.0", 132, 1830, "bf16") == pytest.approx(989, abs=1)


# rocm-smi's own name for the card, as the public 4x MI100 recording has it
# (tests/fixtures/public/amd/telegraf_rocm-smi_json_4xMI100_rocm602.json, "Card series").
MI100 = "Arcturus GL-XL [Instinct MI100]"


def test_slow_mi100_fp32_gemm_is_judged_against_the_matrix_core_rate():
    """AMD's ROCm documentation ('AMD Instinct MI100 microarchitecture', table 'Peak-performance
    capabilities of MI100', docs/reference/gpu-arch/mi100.md, read 2026-11-23) lists Matrix FP32
    46.1 and Vector FP32 23.1 TFLOPS. rocBLAS runs fp32 GEMMs on the matrix cores, and the MI250
    and MI300X entries already hold their Matrix FP32 rates; the MI100's held the vector rate, so
    an MI100 at 10 TFLOP/s fp32 (22% of its matrix peak, 43% of the vector rate) passed. It is now
    reported; one at 20 (43%) is healthy under AMD's fraction (thresholds.toml)."""
    (f,) = fired("bench-gemm-low", renamed_node(MI100, "fp32", 10.0))
    assert "mi100 datasheet peak of 46.1" in f.message and "13 expected" in f.message
    assert not fired("bench-gemm-low", renamed_node(MI100, "fp32", 20.0))


def test_mi250_gcd_is_held_to_half_the_oam_rate_amd_documents():
    """ROCm's 'AMD Instinct MI250 microarchitecture' (docs/reference/gpu-arch/mi250.md, read
    2026-11-23): Matrix BF16 362.1 TFLOPS for the OAM, whose two GCDs ROCm and PyTorch see as two
    devices. A GCD at 45 bf16 TFLOP/s (25% of 181.05) is reported; at 90 (50%) it is healthy."""
    (f,) = fired("bench-gemm-low", renamed_node("AMD Instinct MI250", "bf16", 45.0))
    assert "mi250 datasheet peak of 181.05" in f.message
    assert not fired("bench-gemm-low", renamed_node("AMD Instinct MI250", "bf16", 90.0))


def test_a100_40gb_bf16_peak_is_the_dense_figure_nvidia_publishes():
    """NVIDIA's 'Hopper Architecture In-Depth' (developer.nvidia.com/blog/nvidia-hopper-architecture-
    in-depth/, Table 3, A100 column, read 2026-11-23 in a verbatim capture) lists 'Peak BF16 Tensor
    TFLOPS with FP32 Accumulate 312/624', the second 'using the Sparsity feature'. An
    'NVIDIA A100-SXM4-40GB' (NVML's name) at 160 bf16 TFLOP/s (51% of dense 312) is reported; held
    to the sparse 624 it would be at 26%, and at 200 (64%) it is healthy."""
    (f,) = fired("bench-gemm-low", renamed_node("NVIDIA A100-SXM4-40GB", "bf16", 160.0))
    assert "a100-40gb datasheet peak of 312" in f.message and "172 expected" in f.message
    assert not fired("bench-gemm-low", renamed_node("NVIDIA A100-SXM4-40GB", "bf16", 200.0))


def test_a_healthy_mi300x_is_not_called_slow():
    """ROCm Validation Suite measures a healthy MI300X at bf16 552, fp16 523, fp8 981 TFLOP/s
    (/work/shared/research/anchors.md, 'RVS MI300X'), 42, 40 and 37.5 % of the datasheet's 1307.4 and
    2614.9. One fraction for every vendor (0.55, set on an H100) called each of them slow; the AMD
    fraction is DCGM's 0.75 x the lowest of those shares. A card at half of them is still reported."""
    for dtype, healthy in (("bf16", 552.0), ("fp16", 523.0), ("fp8", 981.0)):
        assert not fired("bench-gemm-low", renamed_node("AMD Instinct MI300X", dtype, healthy)), dtype
        assert fired("bench-gemm-low", renamed_node("AMD Instinct MI300X", dtype, healthy / 2)), dtype
    assert fired("bench-gemm-low", renamed_node("NVIDIA H100 80GB HBM3", "bf16", 989.5 * 0.42))
