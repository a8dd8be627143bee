"""GPU names to compute capability, checked against names no one here wrote: the PCI ID database
(tests/fixtures/public/pci_ids_nvidia_amd.txt) and the names in the recordings.

What is "right" for a pci.ids name does not come from hpcdoctor's table: every NVIDIA device line
starts with its chip's code name (TU104GL, GA107GLM, AD102, GB202GL), and the chip fixes the
compute capability (NVIDIA's architecture whitepapers and CUDA's GPU pages: TU1xx is Turing, 7.5;
GA100 is 8.0 and the other GA10x 8.6; AD10x 8.9; GH100 9.0; GB100/GB102 10.0, GB110 10.3, GB10B
(Thor) 11.0, GB20x 12.0, GB20B (GB10) 12.1). A name may map to its chip's CC or to unknown, never
to another one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpcdoctor.knowledge import gpus

PCI_IDS = Path(__file__).parent.parent / "fixtures" / "public" / "pci_ids_nvidia_amd.txt"

CHIP_CC = [
    (r"GK10[4-7]", "3.0"), (r"GK11\d|GK208", "3.5"), (r"GK210", "3.7"),
    (r"GM10[78]", "5.0"), (r"GM20[0-6]", "5.2"), (r"GM20B", "5.3"),
    (r"GP100", "6.0"), (r"GP10[2-8]", "6.1"), (r"GP10B", "6.2"),
    (r"GV100", "7.0"), (r"GV10B", "7.2"), (r"TU1\d\d", "7.5"),
    (r"GA100", "8.0"), (r"GA10[2-7]", "8.6"), (r"GA10B", "8.7"), (r"AD10\d", "8.9"), (r"GH100", "9.0"),
    (r"GB10[02]", "10.0"), (r"GB110", "10.3"), (r"GB10B", "11.0"), (r"GB20\d", "12.0"), (r"GB20B", "12.1"),
]
# AMD's code names are coarser in pci.ids (it files MI350X under "Aqua Vanjaram" too): a set each.
AMD_CODENAME_GFX = {"Aldebaran/MI200": {"gfx90a"}, "Arcturus GL-XL": {"gfx908"},
                    "Aqua Vanjaram": {"gfx942", "gfx950"}, "Vega 20": {"gfx906"}}


def _chip_cc(first_word: str):
    m = re.match(r"^([A-Z]{2})(\d{3}|\d{2}[AB])", first_word)
    if not m:
        return None
    chip = m.group(1) + m.group(2)
    return next((cc for pattern, cc in CHIP_CC if re.fullmatch(pattern, chip)), None)


def pci_names(vendor: str):
    """(device id, names, chip field) for every device of a vendor, with its subsystems' names."""
    out, current, in_vendor = [], None, False
    for line in PCI_IDS.read_text(encoding="utf-8").splitlines():
        if re.match(r"^[0-9a-f]{4}  ", line):
            in_vendor = line.startswith(vendor)
        elif in_vendor and re.match(r"^\t[0-9a-f]{4}  ", line):
            text = line[7:]
            bracket = re.search(r"\[(.+)\]", text)
            current = (line[1:5], [text] + ([bracket.group(1)] if bracket else []), text.split("[")[0].strip())
            out.append(current)
        elif in_vendor and line.startswith("\t\t") and current:
            current[1].append(line.split("  ", 1)[1] if "  " in line else line.strip())
    return out


def wrong_nvidia_answers(site=None):
    wrong = []
    for dev, names, chip in pci_names("10de"):
        want = _chip_cc(chip.split()[0]) if chip else None
        if want is None:
            continue
        for name in names:
            for variant in (name, "NVIDIA " + name):
                got = gpus.compute_capability(variant, site)
                if got is not None and got != want:
                    wrong.append(f"10de:{dev} {variant!r}: {got}, chip {chip} is {want}")
    return wrong


def test_fixture_is_the_real_database_with_its_date():
    head = PCI_IDS.read_text(encoding="utf-8")[:1200]
    assert "Version: 2026.08.22" in head and "3-clause BSD License" in head
    nvidia = pci_names("10de")
    assert len(nvidia) > 1500 and len(pci_names("1002")) > 1000


def test_no_nvidia_name_in_pci_ids_gets_a_wrong_compute_capability():
    wrong = wrong_nvidia_answers()
    assert not wrong, "\n".join(wrong[:40])


def test_the_table_knows_most_named_nvidia_gpus_of_the_cuda_era():
    """Unknown is allowed, but a table that answers nothing would pass the test above: most
    bracketed device names on Turing-or-newer chips must resolve."""
    named = [(names[1], _chip_cc(chip.split()[0])) for dev, names, chip in pci_names("10de")
             if chip and len(names) > 1 and re.match(r"^(TU|GA|AD|GH|GB)", chip)
             and not re.search(r"Audio|Engineering|Reserved|Initial|Dev ID|CMP|PCI|Root", names[1])]
    resolved = [n for n, want in named if gpus.compute_capability(n) == want]
    assert len(named) > 300 and len(resolved) / len(named) > 0.8, sorted(set(n for n, _ in named) - set(resolved))[:40]


def test_the_check_catches_a_turing_name_given_an_ampere_cc():
    wrong = wrong_nvidia_answers(site=[{"id": "bad", "names": ["Quadro RTX 5000"], "cc": "8.6", "source": "test"}])
    assert any("Quadro RTX 5000" in w and "TU104GL is 7.5" in w for w in wrong)


def test_amd_instinct_names_map_to_their_gfx_or_unknown():
    checked = 0
    for dev, names, chip in pci_names("1002"):
        allowed = AMD_CODENAME_GFX.get(chip)
        if not allowed:
            continue
        for name in names[1:2]:
            found = gpus.lookup("AMD " + name)
            if found is not None:
                checked += 1
                assert found.get("gfx") in allowed, (dev, name, found.get("gfx"))
    assert checked >= 10


@pytest.mark.parametrize("name,cc", [
    # issue 12's wrong verdicts, each against NVIDIA's CUDA GPU pages (developer.nvidia.com/cuda-gpus
    # and /cuda-legacy-gpus, read 2026-11-22)
    ("NVIDIA RTX A1000 Laptop GPU", "8.6"), ("NVIDIA T400", "7.5"), ("NVIDIA T400 4GB", "7.5"),
    ("Quadro RTX 5000", "7.5"), ("NVIDIA RTX 5000 Ada Generation", "8.9"), ("Quadro RTX 4000", "7.5"),
    ("Quadro RTX 3000", "7.5"), ("TITAN X (Pascal)", "6.1"), ("NVIDIA GeForce GTX TITAN X", "5.2"),
    ("NVIDIA GB10", "12.1"), ("NVIDIA Thor", "11.0"), ("NVIDIA B300 SXM6 AC", "10.3"), ("NVIDIA GB300", "10.3"),
    ("NVIDIA GB200", "10.0"), ("NVIDIA H100", "9.0"), ("NVIDIA H800", "9.0"), ("NVIDIA H20", "9.0"),
    ("NVIDIA H200 NVL", "9.0"), ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0"),
    ("NVIDIA GeForce RTX 5060 Ti", "12.0"),
    # names as the recordings in tests/fixtures write them
    ("NVIDIA H100 80GB HBM3", "9.0"), ("NVIDIA A100-SXM4-80GB", "8.0"), ("Tesla V100-SXM2-16GB", "7.0"),
    ("Tesla V100S-PCIE-32GB", "7.0"), ("Tesla V100-PCIE-16GB", "7.0"), ("NVIDIA GeForce RTX 4090", "8.9"),
    ("NVIDIA A10", "8.6"), ("NVIDIA A10G", "8.6"), ("Tesla T4", "7.5"), ("NVIDIA L4", "8.9"),
    ("NVIDIA H100 NVL", "9.0"), ("NVIDIA GH200 480GB", "9.0"), ("NVIDIA GeForce RTX 5090 D", "12.0"),
    ("NVIDIA GeForce RTX 4080 Laptop GPU", "8.9"), ("NVIDIA GeForce RTX 2080 Ti", "7.5"),
    ("NVIDIA GeForce GTX 1050 Ti", "6.1"), ("Tesla V100-SXM2-32GB", "7.0"),
])
def test_real_names_resolve(name, cc):
    assert gpus.compute_capability(name) == cc


@pytest.mark.parametrize("name", ["NVIDIA RTX 5000", "NVIDIA TITAN", "NVIDIA Graphics Device", "", "NVIDIA GeForce GTX 960M"])
def test_names_that_do_not_say_which_gpu_are_unknown(name):
    assert gpus.compute_capability(name) is None


@pytest.mark.parametrize("name,sku", [
    ("NVIDIA GH200 144G HBM3e", "gh200-144gb"), ("NVIDIA GH200 480GB", "gh200"), ("NVIDIA H200 NVL", "h200-nvl"),
    ("NVIDIA H200", "h200"), ("NVIDIA B200", "b200"), ("NVIDIA H100", None),
    ("NVIDIA GB200", "gb200"), ("NVIDIA RTX A1000 Laptop GPU", None), ("NVIDIA T400", None),
    ("AMD Instinct MI300X OAM", "mi300x"), ("AMD Instinct MI325X", "mi325x"),
    ("AMD Instinct MI355X", "mi355x"), ("AMD Instinct MI350X", "mi350x"),
    ("NVIDIA B300 SXM6 AC", "b300"), ("NVIDIA GB300", None),
])
def test_datasheets_are_not_borrowed(name, sku):
    """GB200 is not a B200 (each has its own datasheet: NVIDIA's GB200 NVL72 and HGX pages), H200
    NVL not the SXM part, the 144 GB GH200 not the 96 GB one, GB300 not a B300 (no GB300 source was
    reached, so it has none), MI355X not an MI350X (AMD's CDNA 4 white paper lists both)."""
    found = gpus.datasheet(name)
    assert (found["id"] if found else None) == sku


def test_gh200_144gb_is_hbm3e_at_4_9_tbs():
    assert gpus.datasheet("NVIDIA GH200 144G HBM3e")["mem_bw_gbs"] == 4900
    assert gpus.datasheet("NVIDIA GH200 480GB")["mem_bw_gbs"] == 4000


@pytest.mark.parametrize("name,segment", [
    ("NVIDIA GeForce RTX 4090", "geforce"), ("NVIDIA RTX A6000", "workstation"), ("NVIDIA H100 80GB HBM3", "datacenter"),
    ("NVIDIA A10", "datacenter"), ("AMD Instinct MI300X", "datacenter"),
])
def test_segment(name, segment):
    assert gpus.lookup(name)["segment"] == segment


@pytest.mark.parametrize("name,gfx", [
    # as rocm-smi --json ("Card series"), rocm-smi -a, amd-smi static (MARKET_NAME) write them in the recordings
    ("Arcturus GL-XL [Instinct MI100]", "gfx908"), ("AMD Instinct MI300X", "gfx942"), ("MI300A", "gfx942"),
    ("AMD Instinct MI300X OAM", "gfx942"), ("AMD Instinct MI250X", "gfx90a"),
    # ROCm's GPU specifications page (rocm.docs.amd.com/en/latest/reference/gpu-specs.html, read 2026-11-22)
    ("AMD Instinct MI325X", "gfx942"), ("AMD Instinct MI355X", "gfx950"), ("AMD Instinct MI350X", "gfx950"),
    ("AMD Instinct MI210", "gfx90a"),
])
def test_real_amd_names_resolve_to_their_gfx(name, gfx):
    assert gpus.lookup(name)["gfx"] == gfx


def test_a_name_two_gpus_share_is_unknown_with_both_capabilities():
    # developer.nvidia.com/cuda-legacy-gpus (read 2026-11-22): GeForce GTX TITAN X 5.2, NVIDIA TITAN X
    # 6.1; nvidia-smi names the second "TITAN X (Pascal)" (a public nvidia-smi table, search tool).
    assert gpus.lookup("TITAN X") is None and gpus.compute_capability("NVIDIA TITAN X") is None
    assert gpus.capabilities("TITAN X") == ["5.2", "6.1"]
    assert gpus.capabilities("TITAN X (Pascal)") == ["6.1"]
    assert gpus.capabilities("GeForce GTX TITAN X") == ["5.2"]
    assert gpus.capabilities("Radeon RX 7900 XTX") == []
