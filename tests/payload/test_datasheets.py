"""Datasheet figures read on 2026-11-23 (hpcdoctor/knowledge/gpus.toml), each checked through the
verdict it changes: a GPU named as nvidia-smi, NVML, amd-smi or rocm-smi name it, measured at a
figure that is slow against its own datasheet and at one that is healthy. The sources are named
in each test; dense figures only (the tables' sparsity columns are twice these)."""

from __future__ import annotations

from rulekit import derived_peak, fired, renamed_node

from hpcdoctor.knowledge import expect, gpus


def _d2d_node(name, gbs):
    g = renamed_node(name, "bf16", 10_000.0)  # a GEMM figure no expectation reaches
    g["facts"]["bench"]["gpus"][0]["memory"]["d2d_gbs"] = gbs
    return g


# --- AMD: the CDNA 2, 3 and 4 white papers (amd.com PDFs, read in the Markdown conversions of
# github.com/kuhar/amdgpu-isa-manuals at 0266938ebfdb5085d09f9b836389dfd41d1799c6) -----------------
# Names: pci.ids 2026.08.22 (tests/fixtures/public/pci_ids_nvidia_amd.txt) files 1002:74a5 as
# 'Aqua Vanjaram [Instinct MI325X]', 75a0 '[Instinct MI350X]', 75a3 '[Instinct MI355X]'; amd-smi's
# MARKET_NAME and torch.cuda.get_device_name() write them 'AMD Instinct MI3xxX' (as the recorded
# 'AMD Instinct MI300X'; 'GPU: AMD Instinct MI355X' in https://github.com/unslothai/unsloth/pull/4051).

def test_mi325x_is_held_to_its_own_datasheet():
    """CDNA 3 white paper, Table 2, MI325X column: 'FP16 | FP16 (SPARSITY) 1,307.4 TF | 2,614.9 TF',
    'MEMORY BANDWIDTH (PEAK) up to 6.0 TB/sec'. It had no datasheet (and AMD GPUs no SM-clock
    fallback), so a slow MI325X passed unjudged: 300 bf16 TFLOP/s (23%) is now reported, 552 (42%,
    what ROCm Validation Suite measures on a healthy MI300X, anchors.md) is healthy; a 3,500 GB/s copy (58% of 6 TB/s) is reported, 4,500 (75%) is not."""
    (f,) = fired("bench-gemm-low", renamed_node("AMD Instinct MI325X", "bf16", 300.0))
    assert "mi325x datasheet peak of 1307.4" in f.message and "366 expected" in f.message
    assert not fired("bench-gemm-low", renamed_node("AMD Instinct MI325X", "bf16", 552.0))
    (f,) = fired("bench-memory-low", _d2d_node("AMD Instinct MI325X", 3500.0))
    assert "mi325x memory bandwidth of 6000" in f.message
    assert not fired("bench-memory-low", _d2d_node("AMD Instinct MI325X", 4500.0))


def test_mi355x_and_mi350x_are_held_to_their_own_cdna4_figures():
    """CDNA 4 white paper, Table 2: 'FP16 | FP16 (SPARSITY) MATRIX' 2.3 PF | 4.6 PF for the MI350X
    (2,200 MHz, 1000W) and 2.5 PF | 5.0 PF for the MI355X (2,400 MHz, 1400W); ROCm's MI350 page
    prints the same. An MI355X at 600 bf16 TFLOP/s (24%) is reported; the same figure on an
    MI350X is 26% and reported too, 680 on an MI350X (29.6%) is not, while on the MI355X it is
    (27.2%): the two are not one datasheet."""
    (f,) = fired("bench-gemm-low", renamed_node("AMD Instinct MI355X", "bf16", 600.0))
    assert "mi355x datasheet peak of 2500" in f.message and "700 expected" in f.message
    (f,) = fired("bench-gemm-low", renamed_node("AMD Instinct MI350X", "bf16", 600.0))
    assert "mi350x datasheet peak of 2300" in f.message
    assert not fired("bench-gemm-low", renamed_node("AMD Instinct MI350X", "bf16", 680.0))
    assert fired("bench-gemm-low", renamed_node("AMD Instinct MI355X", "bf16", 680.0))
    # CDNA 4 has no TF32 in hardware ('moved out of hardware ... software emulation utilizing the
    # BF16 datatype'): no tf32 expectation, rather than one borrowed from CDNA 3.
    assert expect.gemm({"name": "AMD Instinct MI355X"}, "tf32", {}) is None
    (f,) = fired("bench-memory-low", _d2d_node("AMD Instinct MI355X", 5000.0))
    assert "mi355x memory bandwidth of 8000" in f.message


def test_mi300a_re_read_against_the_cdna3_white_paper():
    """CDNA 3 white paper, Table 2, MI300A APU column: 'FP16 | FP16 (SPARSITY) 980.6 TF | 1,961.2',
    'up to 5.3 TB/sec'. 'MI300A' is how amd-smi static names it in the recorded README paste
    (tests/fixtures/public/amd/amdsmi_readme_4xMI300A_amd-smi_static.txt)."""
    (f,) = fired("bench-gemm-low", renamed_node("MI300A", "bf16", 250.0))
    assert "mi300a datasheet peak of 980.6" in f.message
    assert not fired("bench-gemm-low", renamed_node("MI300A", "bf16", 400.0))
    (f,) = fired("bench-memory-low", _d2d_node("MI300A", 3000.0))
    assert "mi300a memory bandwidth of 5300" in f.message


def test_mi250x_gcd_is_held_to_half_the_oam_figure_of_the_cdna2_white_paper():
    """CDNA 2 white paper, MI200 product table, MI250X column: 'Peak FP16/BF16 383.0 TF' for the OAM
    of two GCDs, each one device to ROCm: a GCD's peak is 191.5. pci.ids 1002:7408 'Aldebaran/MI200
    [Instinct MI250X]'."""
    (f,) = fired("bench-gemm-low", renamed_node("AMD Instinct MI250X", "bf16", 45.0))
    assert "mi250x datasheet peak of 191.5" in f.message
    assert not fired("bench-gemm-low", renamed_node("AMD Instinct MI250X", "bf16", 80.0))


# --- NVIDIA: text-layer captures of NVIDIA's own spec tables (retrieved 8 Oct 2026), committed in
# github.com/ewyluda/macrogauge docs/research/evidence/ ---------------------------------------------

def test_gb200_is_held_to_its_own_superchip_figures_not_b200s():
    """GB200 NVL72 page, column 'GB200 Grace Blackwell Superchip' (1 Grace CPU | 2 Blackwell GPU):
    'FP16/BF16 Tensor Core 2 ... 10 PFLOPS', 'Dense is one-half sparse spec shown', '372 GB HBM3E |
    16 TB/s': 2,500 dense bf16 and 8 TB/s per GPU. 'NVIDIA GB200' as nvidia-smi -L and NVML print it
    (pci.ids 10de:2941 'GB100 [HGX GB200]'). At 1,300 TFLOP/s a GB200 is at 52% of its own peak
    and reported; against B200's 2,250 (HGX page) it would have passed at 58%."""
    (f,) = fired("bench-gemm-low", renamed_node("NVIDIA GB200", "bf16", 1300.0))
    assert "gb200 datasheet peak of 2500" in f.message and "1375 expected" in f.message
    assert not fired("bench-gemm-low", renamed_node("NVIDIA GB200", "bf16", 1500.0))
    assert not fired("bench-gemm-low", renamed_node("NVIDIA B200", "bf16", 1300.0))
    # the datasheet, not a peak derived from SM count and clock
    assert "datasheet" in derived_peak("NVIDIA GB200", "10.0", 152, 2062)[1]
    (f,) = fired("bench-memory-low", _d2d_node("NVIDIA GB200", 5000.0))
    assert "gb200 memory bandwidth of 8000" in f.message


def test_b300_compute_from_the_hgx_table_and_no_copy_expectation():
    """HGX page, column 'HGX B300' (8x NVIDIA Blackwell Ultra SXM): 'FP16/BF16 Tensor Core2 36
    PFLOPS', dense ½: 2,250 per GPU. The table gives no memory bandwidth, so no copy expectation is
    made up. 'NVIDIA B300 SXM6 AC' is what torch.cuda.get_device_name() returns, quoted in
    https://github.com/NVIDIA/cosmos-framework/pull/114 (which takes the same 2.25 PFLOP/s)."""
    (f,) = fired("bench-gemm-low", renamed_node("NVIDIA B300 SXM6 AC", "bf16", 1000.0))
    assert "b300 datasheet peak of 2250" in f.message
    assert not fired("bench-gemm-low", renamed_node("NVIDIA B300 SXM6 AC", "bf16", 1500.0))
    assert expect.d2d({"name": "NVIDIA B300 SXM6 AC"}, {}) is None
    assert not fired("bench-memory-low", _d2d_node("NVIDIA B300 SXM6 AC", 10.0))


def test_gb300_has_no_datasheet_and_borrows_none():
    """No NVIDIA source for GB300's per-GPU figures was reached (gpus.toml's gb300 note says what was
    searched). 'NVIDIA GB300' as the public sglang#14327 environment paste prints it
    (tests/fixtures/tickets/sglang-14327-gb300-cu130-check-env-healthy.txt): no datasheet, no
    figure from the HGX B300 table, and 10.3 has no per-SM rate to derive one, so even a GEMM at
    100 TFLOP/s is not judged: an unknown reference, not a pass against a borrowed peak."""
    paste = "tests/fixtures/tickets/sglang-14327-gb300-cu130-check-env-healthy.txt"
    assert "GPU 0,1,2,3: NVIDIA GB300" in open(paste).read()
    assert gpus.datasheet("NVIDIA GB300") is None and gpus.compute_capability("NVIDIA GB300") == "10.3"
    assert derived_peak("NVIDIA GB300", "10.3", 160, 2032) is None
    assert not fired("bench-gemm-low", renamed_node("NVIDIA GB300", "bf16", 100.0))


def test_b200_fp32_from_the_hgx_table():
    """HGX page, column 'HGX B200': 'FP32 600 TFLOPS' for 8 GPUs, 75 each (the entry had no fp32, so
    an fp32 GEMM went unjudged). pci.ids 10de:2901 'GB100 [B200]', NVML 'NVIDIA B200'."""
    (f,) = fired("bench-gemm-low", renamed_node("NVIDIA B200", "fp32", 30.0))
    assert "b200 datasheet peak of 75" in f.message
    assert not fired("bench-gemm-low", renamed_node("NVIDIA B200", "fp32", 50.0))


def test_h100_nvl_dense_figures_are_exact_halves_of_nvidias_sparse_rows():
    """H100 page, column 'H100 NVL': 'BFLOAT16 Tensor Core * 1,671 teraFLOPS', '* With sparsity':
    dense 835.5 (the entry held 835). 'NVIDIA H100 NVL' as nvidia-smi -a prints it in the recorded
    public paste tests/fixtures/public/nvsmi/gls_2xH100NVL_nvsmi_a.txt."""
    assert "NVIDIA H100 NVL" in open("tests/fixtures/public/nvsmi/gls_2xH100NVL_nvsmi_a.txt").read()
    (f,) = fired("bench-gemm-low", renamed_node("NVIDIA H100 NVL", "bf16", 450.0))
    assert "h100-nvl datasheet peak of 835.5" in f.message
    assert not fired("bench-gemm-low", renamed_node("NVIDIA H100 NVL", "bf16", 470.0))


def test_a100_80gb_copy_bandwidth_per_board_from_the_a100_page():
    """A100 page: 'GPU Memory Bandwidth 1,935 GB/s 2,039 GB/s' (80GB PCIe, 80GB SXM). Names as the
    public pastes print them: 'NVIDIA A100 80GB PCIe' (tests/fixtures/tickets/vllm-13415-2xa100-
    tokenizer-question-healthy.txt), 'NVIDIA A100-SXM4-80GB' (the recorded nodes). A 1,250 GB/s copy
    is low for the PCIe card (65% of 1,935) and lower still for the SXM part."""
    (f,) = fired("bench-memory-low", _d2d_node("NVIDIA A100 80GB PCIe", 1250.0))
    assert "a100-pcie-80gb memory bandwidth of 1935" in f.message
    (f,) = fired("bench-memory-low", _d2d_node("NVIDIA A100-SXM4-80GB", 1250.0))
    assert "a100-sxm4-80gb memory bandwidth of 2039" in f.message
    assert not fired("bench-memory-low", _d2d_node("NVIDIA A100 80GB PCIe", 1400.0))


def test_every_threshold_and_every_re_read_datasheet_carries_its_read_date():
    """'hpcdoctor knowledge' counts an entry as undated when it has no read date (or only a 'not
    re-read' note). The five thresholds dated against their sources on 2026-11-23 stay dated, and
    only the ten SKUs whose datasheets were searched for and not reached stay undated, each saying
    so in its source."""
    from hpcdoctor import knowledge

    rows = {r["table"]: r for r in knowledge.provenance()}
    assert rows["thresholds"]["undated"] == 0
    undated = [s["id"] for s in knowledge.load("gpus")["sku"] if not s.get("read")]
    assert sorted(undated) == ["a10", "gh200", "gh200-144gb", "h100-pcie", "l4", "l40s", "t4", "v100-pcie",
                               "v100-sxm2", "v100s-pcie"]
    assert rows["gpus"]["undated"] == len(undated)
    for s in knowledge.load("gpus")["sku"]:
        if s["id"] in undated:
            assert s["source"].startswith("not re-read 2026-11-23:"), s["id"]
