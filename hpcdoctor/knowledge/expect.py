"""What a GPU should measure: site config first, then the SKU's datasheet peak times a healthy
fraction, then (for a GPU knowledge does not know) a peak derived from its SM count and clock.
Each expectation says where it came from."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from hpcdoctor import knowledge
from hpcdoctor.knowledge import gpus

# FLOP per clock per SM (dense), by compute capability major.minor, for GPUs without a SKU entry,
# at the full (data-centre/workstation) tensor rate; GeForce cards get GEFORCE_TENSOR_FACTOR of it.
# Checked against datasheets: A100 108 SM x 1410 MHz x 2048 = 312 bf16; A10 72 x 1695 x 1024 = 125;
# L40S 142 x 2520 x 1024 = 366; H100 132 x 1830 x 4096 = 989; B200 148 x 1860 x 8192 = 2255.
# 7.5: "Eight Tensor Cores in an SM perform ... 1024 total FP operations per clock" and Quadro RTX
# 6000 72 x 1770 x 1024 = 130.5, "Peak FP16 Tensor TFLOPS with FP32 Accumulate" (NVIDIA, "NVIDIA
# Turing Architecture In-Depth", developer.nvidia.com/blog/nvidia-turing-architecture-in-depth/,
# Table 1, read 2026-11-23); T4 40 x 1590 x 1024 = 65.
# 12.0: RTX PRO 6000 Blackwell Workstation Edition 188 x 2617 x 1024 = 503.8, "Peak BF16 Tensor
# TFLOPS with FP32 Accumulate 503.8/1007.6" (dense/sparse), FP32 126.0 = 188 x 2617 x 256 (NVIDIA RTX
# Blackwell PRO GPU Architecture v1.0, Appendix A Table 4); GeForce RTX 5090 170 x 2407 x 512 = 209.5,
# "209.5/419" (NVIDIA RTX Blackwell GPU Architecture, Appendix A Table 3). Rows read 2026-11-23 as
# quoted word for word in public files (see gpus.toml); TF32 and FP8 rows for 12.0 were not found, so
# they are left out and those dtypes get no derived expectation.
FLOP_PER_CLK_SM = {
    "7.0": {"fp32": 128, "fp16": 1024}, "7.5": {"fp32": 128, "fp16": 1024},
    "8.0": {"fp32": 128, "tf32": 1024, "bf16": 2048, "fp16": 2048},
    "8.6": {"fp32": 256, "tf32": 512, "bf16": 1024, "fp16": 1024},
    "8.9": {"fp32": 256, "tf32": 512, "bf16": 1024, "fp16": 1024, "fp8": 2048},
    "9.0": {"fp32": 256, "tf32": 2048, "bf16": 4096, "fp16": 4096, "fp8": 8192},
    "10.0": {"fp32": 256, "tf32": 4096, "bf16": 8192, "fp16": 8192, "fp8": 16384},
    "12.0": {"fp32": 256, "bf16": 1024, "fp16": 1024},
}
# GeForce cards run bf16/fp16 tensor ops with fp32 accumulation (what GEMMs in torch use), fp8 and
# TF32 at half the rate of the data-centre and workstation parts of the same architecture; the
# GPU table says which cards (tensor_rate = "geforce", with its whitepaper source).
GEFORCE_TENSOR_FACTOR = 0.5
TENSOR_DTYPES = ("tf32", "bf16", "fp16", "fp8")
# Architectures with GeForce parts (developer.nvidia.com/cuda-gpus, read 2026-11-22: GeForce RTX 20/
# GTX 16 at 7.5, RTX 30 at 8.6, RTX 40 at 8.9, RTX 50 at 12.0); GA100, GH100 and GB100 have none.
GEFORCE_CCS = ("7.5", "8.6", "8.9", "12.0")
CONFIG_KEYS = {"bf16": "min_gemm_bf16_tflops", "tf32": "min_gemm_tf32_tflops"}


def _th() -> Dict[str, Any]:
    return knowledge.load("thresholds")["bench"]


def _site(config: Dict[str, Any], key: Optional[str]) -> Optional[Tuple[float, str]]:
    """The site config's minimum under [bench] key, which overrides every derived expectation."""
    value = (config.get("bench") or {}).get(key) if key else None
    return (float(value), f"site config {config.get('_path')}") if value else None


def gemm(gpu: Dict[str, Any], dtype: str, config: Dict[str, Any],
         sms: Optional[int] = None) -> Optional[Tuple[float, str]]:
    site = _site(config, CONFIG_KEYS.get(dtype))
    if site:
        return site
    sku = gpus.datasheet(str(gpu.get("name") or ""), config.get("gpu"))
    amd = "amd" in (gpu.get("vendor"), (sku or {}).get("vendor"))
    frac = _th()["gemm_fraction_amd" if amd else "gemm_fraction"]
    peak_key = "fp32" if dtype == "fp32" else dtype
    if sku and sku.get(peak_key):
        peak = float(sku[peak_key]) / int(sku.get("gcds", 1))
        return peak * frac, f"{frac:.0%} of the {sku['id']} datasheet peak of {peak:g} TFLOP/s"
    cc = gpu.get("compute_capability")
    clk = (gpu.get("clocks") or {}).get("sm_max_mhz")
    per = FLOP_PER_CLK_SM.get(str(cc), {}).get(dtype)
    if per and isinstance(sms, int) and isinstance(clk, (int, float)):
        per, rate, known = _rate_class(gpu, dtype, cc, per, config)
        if per is None:
            return None
        peak = sms * per * clk * 1e6 / 1e12
        why = f"no datasheet for {known} in hpcdoctor's knowledge" if known else "GPU not in hpcdoctor's knowledge"
        return peak * frac, (f"{frac:.0%} of {peak:.0f} TFLOP/s derived from {sms} SMs x {clk} MHz "
                             f"x {per:g} FLOP/clk, {rate} ({why})")
    return None


def _rate_class(gpu: Dict[str, Any], dtype: str, cc: Any, per: float,
                config: Dict[str, Any]) -> Tuple[Optional[float], str, Optional[str]]:
    """FLOP/clk/SM for this card's rate class, its description, and the table's id for the card.
    GeForce tensor rates are half. A card the table does not know, on an architecture that has
    GeForce parts, gets the lower rate too: holding a GeForce card to data-centre rates would
    report a healthy GPU as slow. A card whose tensor rate the table marks "unknown" (GTX 16 and
    MX Turing parts) gets no tensor expectation at all: None."""
    known = gpus.lookup(str(gpu.get("name") or ""), config.get("gpu"))
    name = (known or {}).get("id")
    if dtype not in TENSOR_DTYPES:
        return per, "fp32 rate", name
    if (known or {}).get("tensor_rate") == "unknown":
        return None, "tensor rate unknown", name
    if (known or {}).get("tensor_rate") == "geforce":
        return per * GEFORCE_TENSOR_FACTOR, "GeForce tensor rate (fp32 accumulate, half)", name
    if known is None and str(cc) in GEFORCE_CCS:
        return per * GEFORCE_TENSOR_FACTOR, "rate class unknown: the lower, GeForce tensor rate", name
    return per, "data-centre/workstation tensor rate", name


def d2d(gpu: Dict[str, Any], config: Dict[str, Any]) -> Optional[Tuple[float, str]]:
    site = _site(config, "min_d2d_gbs")
    if site:
        return site
    sku = gpus.datasheet(str(gpu.get("name") or ""), config.get("gpu"))
    if sku and sku.get("mem_bw_gbs"):
        bw = float(sku["mem_bw_gbs"]) / int(sku.get("gcds", 1))
        frac = _th()["copy_fraction"]
        return bw * frac, f"{frac:.0%} of the {sku['id']} memory bandwidth of {bw:g} GB/s"
    return None


def h2d(gpu: Dict[str, Any], config: Dict[str, Any]) -> Optional[Tuple[float, str]]:
    site = _site(config, "min_h2d_gbs")
    if site:
        return site
    gen, width = gpu.get("pcie_gen_max"), gpu.get("pcie_width_max")
    table = knowledge.load("thresholds")["pcie"]["x16_gbs"]
    if isinstance(gen, int) and isinstance(width, int) and str(gen) in table and width >= 4:
        link = table[str(gen)] * width / 16
        frac = _th()["h2d_fraction"]
        return link * frac, f"{frac:.0%} of a PCIe gen {gen} x{width} link ({link:g} GB/s)"
    return None


def allreduce_busbw(gpu: Dict[str, Any], config: Dict[str, Any]) -> Optional[Tuple[float, str]]:
    site = _site(config, "min_allreduce_busbw_gbs")
    if site:
        return site
    sku = gpus.datasheet(str(gpu.get("name") or ""), config.get("gpu"))
    link = (sku or {}).get("nvlink_gbs") or (sku or {}).get("xgmi_gbs")
    if link:
        frac = _th()["allreduce_fraction"]
        return float(link) * frac, f"{frac:.0%} of the {sku['id']} NVLink/XGMI bandwidth of {link} GB/s"
    return None
