"""Triage of "is my GPU there?" pastes: lspci and lshw recognised in real pasted text
(tests/fixtures/pastes/SOURCES.md) and judged by GPU001 from the driver bound to each NVIDIA GPU.
A driver the paste does not show is never passed."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, report_of
from hpcdoctor.triage.paste import recognise

PASTES = FIXTURES / "pastes"
NOUVEAU_TICKET = FIXTURES / "tickets_blind_f" / "nvidia-htop-23-nouveau-bound-no-nvidia-driver.txt"


def _gpu001(path):
    doc = report_of("check", "--from", str(path))
    return doc, [x for x in doc["findings"] if x["symbol"] == "gpu-driver-unusable"]


@pytest.mark.parametrize("path,kind", [
    (PASTES / "lspci-vv-gtx970-nouveau-bound.txt", "lspci"),
    (PASTES / "lspci-k-grep-vfio-rtx3060.txt", "lspci"),
    (PASTES / "lspci-grep-nvidia-v100-nvrm-probe-cut.txt", "lspci"),
    (PASTES / "lspci-vvvv-quadro2000-pi5-cut.txt", "lspci"),
    (NOUVEAU_TICKET, "lshw"),
    (PASTES / "lshw-unclaimed-gtx1050ti-mobile-cut.txt", "lshw"),
    (PASTES / "lshw-display-i915-and-nvidia-no-product.txt", "lshw"),
])
def test_recognised_as_one_output(path, kind):
    rec = recognise(path.read_text())
    assert [p.kind.name for p in rec.pieces] == [kind]


def test_lshw_nouveau_ticket_gets_the_driver_diagnosis():
    doc, (hit,) = _gpu001(NOUVEAU_TICKET)
    assert "0000:03:00.0" in hit["message"] and "nouveau" in hit["message"] and "lshw" in hit["message"]
    assert "blacklist nouveau" in hit["fix"] and "nvidia-driver" in hit["fix"]
    assert doc["facts"]["pci"]["gpus"][0]["name"] == "G98 [GeForce 9300 GS]"


def test_lspci_nouveau():
    _, (hit,) = _gpu001(PASTES / "lspci-vv-gtx970-nouveau-bound.txt")
    assert "GeForce GTX 970" in hit["message"] and "nouveau" in hit["message"]


def test_lspci_vfio_says_passthrough():
    _, (hit,) = _gpu001(PASTES / "lspci-k-grep-vfio-rtx3060.txt")
    assert "vfio-pci" in hit["message"] and "passthrough" in hit["message"] and "vfio" in hit["fix"]


def test_no_driver_bound_from_a_complete_verbose_block(tmp_path):
    # Two real -v blocks as lspci -v prints them, one after the other with the blank line that ends
    # each: the kata paste's GT 1030 with its kernel line removed (a device no driver holds), then
    # the GTX 970 of another paste. No public paste of an unbound NVIDIA GPU under -v was found.
    kata = (PASTES / "lspci-vnn-kata-gt1030-nvidia-bound.txt").read_text().split("```\n")[1]
    gtx970 = (PASTES / "lspci-vv-gtx970-nouveau-bound.txt").read_text().split("```\n")[1].split("$ lspci -vv\n")[1]
    assert "\tKernel driver in use: nvidia\n" in kata
    path = tmp_path / "unbound.txt"
    path.write_text(kata.replace("\tKernel driver in use: nvidia\n", "") + "\n" + gtx970)
    _, hits = _gpu001(path)
    unbound = [h for h in hits if "no kernel driver bound" in h["message"]]
    assert len(unbound) == 1 and "0000:00:08.0" in unbound[0]["message"] and "modprobe nvidia" in unbound[0]["fix"]
    assert any("nouveau" in h["message"] and "0000:01:00.0" in h["message"] for h in hits)


@pytest.mark.parametrize("name", ["lspci-nnk-gtx1650-nvidia-bound.txt", "lspci-nnk-rtx3080-unindented.txt",
                                  "lshw-display-i915-and-nvidia-no-product.txt"])
def test_bound_to_nvidia_is_not_judged_on_lspci_alone(name):
    doc, hits = _gpu001(PASTES / name)
    assert not hits
    skipped = [s for s in doc["skipped"] if s["symbol"] == "gpu-driver-unusable"]
    assert skipped and "whether the driver answers" in skipped[0]["reason"]


@pytest.mark.parametrize("name", ["lspci-vnn-grep-gtx780ti-x3.txt", "lspci-vvvv-quadro2000-pi5-cut.txt",
                                  "lshw-unclaimed-gtx1050ti-mobile-cut.txt"])
def test_driver_not_shown_or_vendor_cut_is_not_a_finding(name):
    _, hits = _gpu001(PASTES / name)
    assert not hits


def test_kernel_notice_still_wins_where_lspci_shows_no_driver():
    _, (hit,) = _gpu001(PASTES / "lspci-grep-nvidia-v100-nvrm-probe-cut.txt")
    assert "probe routine was not called" in hit["message"]


def test_nvidia_smi_failure_with_lspci_is_judged_by_the_message():
    # kata: the GPU is bound to nvidia and nvidia-smi cannot get a handle: not a nouveau case.
    doc, hits = _gpu001(PASTES / "lspci-vnn-kata-gt1030-nvidia-bound.txt")
    assert all("nouveau" not in h["message"] for h in hits)
    assert doc["facts"]["pci"]["gpus"][0]["driver"] == "nvidia"


def test_two_lspci_outputs_in_one_paste_are_read_together(tmp_path):
    # The GTX 970's line as plain lspci prints it (no driver shown), another tool's output between,
    # then its lspci -vv block: the second output's driver is the one read, from one lspci piece.
    vv = (PASTES / "lspci-vv-gtx970-nouveau-bound.txt").read_text()
    head = next(line for line in vv.splitlines() if line.startswith("01:00.0 "))
    numactl = (FIXTURES / "nodes" / "h100-kvm-1gpu" / "cmd" / "numactl_H.txt").read_text()
    path = tmp_path / "two.txt"
    path.write_text(f"$ lspci | grep VGA\n{head}\n$ numactl -H\n{numactl}\n{vv}")
    assert [p.kind.name for p in recognise(path.read_text()).pieces] == ["lspci", "numactl -H", "lspci"]
    doc, (hit,) = _gpu001(path)
    assert "nouveau" in hit["message"] and [d["driver"] for d in doc["facts"]["pci"]["gpus"]] == ["nouveau"]
    assert not any("second lspci" in n for n in doc["source"].get("notes", []))
