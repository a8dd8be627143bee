"""knowledge/rocm_gpus.toml kfd_chip: the AMD chips the kernel's KFD never drives, by PCI id and pci.ids name."""

from __future__ import annotations

from hpcdoctor.knowledge.rocm_gpus import kfd_chip
from hpcdoctor.triage.amd_text import find_amd_gpus

_LSPCI_270X = ("01:00.0 VGA compatible controller [0300]: Advanced Micro Devices, Inc. [AMD/ATI] "
               "Curacao XT / Trinidad XT [Radeon R7 370 / R9 270X/370X] [1002:6810]")


def test_a_pitcairn_by_id_and_by_name():
    assert kfd_chip(_LSPCI_270X)["chip"] == "PITCAIRN"
    assert kfd_chip("Produkt: Curacao XT / Trinidad XT [Radeon R7 370 / R9 270X/370X]")["chip"] == "PITCAIRN"


def test_hawaii_is_experimental_and_vega_is_not_listed():
    assert kfd_chip("[AMD/ATI] Hawaii PRO [Radeon R9 290/390] [1002:67b1]")["kfd"] == "experimental"
    assert kfd_chip("[AMD/ATI] Vega 10 XTX [Radeon Vega Frontier Edition] [1002:6863]") is None


def test_lspci_chip_names_with_a_slash_are_read():
    (g,) = find_amd_gpus(_LSPCI_270X)
    assert g["names"][0] == "Radeon R7 370" and g.get("lspci")
