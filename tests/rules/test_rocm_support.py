"""rocm-gpu-not-in-release (SW053): AMD's per-release Supported GPUs tables (knowledge/rocm_gpus.toml)
against the GPU a node lists or a paste names, on real pastes (tests/fixtures/pastes/SOURCES.md,
tests/fixtures/tickets) and the facts a live node's amd-smi gives."""

from __future__ import annotations

import re

import pytest

from rulekit import PASTES, facts, fired, recorded_paste_facts
from hpcdoctor.knowledge import load, rocm_gpus
from hpcdoctor.triage.amd_text import find_amd_gpus, find_rocm_versions
from hpcdoctor.triage.messages import find_messages

TICKETS = PASTES.parent / "tickets"


def _amd_node(name, gfx, rocm):
    return facts("h100-kvm-1gpu", **{"gpus": [{"index": 0, "vendor": "amd", "name": name, "gfx_target": gfx}],
                                     "amd.rocm_version": rocm})


def test_the_barcelo_apu_under_rocm_5_4_is_reported_from_the_paste():
    (f,) = fired("rocm-gpu-not-in-release", recorded_paste_facts("hip-3282-segfault-barcelo-igpu-unsupported.txt"))
    assert f.severity == "warning"
    assert "AMD's list for ROCm 5.4 does not name Barcelo" in f.message
    assert "libamdhip64.so.5.4.22804" in f.message and "HSA_OVERRIDE_GFX_VERSION" in f.message
    assert f.fix.startswith("rocminfo | grep -m1 -o 'gfx[0-9a-f]*'")
    assert "Radeon Pro W6800" in f.fix  # the release's own list, from the table


@pytest.mark.parametrize("ticket", ["vllm-8004-mi210-rocm62-healthy.txt", "vllm-9713-rocm-gfx906-healthy.txt"])
def test_listed_gpus_in_real_healthy_collect_envs_are_not_reported(ticket):
    g = recorded_paste_facts(f"../tickets/{ticket}")
    assert g["facts"]["ticket"]["rocm_versions"][0]["series"] == "6.2"  # both facts are read: the rule judged
    assert not fired("rocm-gpu-not-in-release", g)


def test_the_same_collect_env_with_an_unlisted_target_is_reported_with_the_override():
    g = recorded_paste_facts("../tickets/vllm-9713-rocm-gfx906-healthy.txt")
    g["facts"]["torch"]["gpu_models"] = ["AMD Radeon RX 6700 XT (gfx1031)"]
    (f,) = fired("rocm-gpu-not-in-release", g)
    assert "has no GPU of AMD Radeon RX 6700 XT's target gfx1031" in f.message and "ROCm 6.2" in f.message
    assert "export HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.fix


@pytest.mark.parametrize("name, gfx, rocm", [
    ("AMD Instinct MI300X", "gfx942", "6.2.2"),
    ("AMD Instinct MI210", "gfx90a:sramecc+:xnack-", "6.1.2"),
    ("AMD Radeon VII", "gfx906", "6.0.2"),          # deprecated: still listed
    ("AMD Radeon RX 7900 XTX", "gfx1100", "6.2.0"),
    ("AMD Radeon RX 6800 XT", "gfx1030", "6.2.0"),  # not named, but its target's code ships
])
def test_a_live_node_on_a_listed_gpu_is_quiet(name, gfx, rocm):
    assert not fired("rocm-gpu-not-in-release", _amd_node(name, gfx, rocm))


def test_a_live_node_on_an_unlisted_gpu():
    (f,) = fired("rocm-gpu-not-in-release", _amd_node("AMD Radeon RX 6700 XT", "gfx1031", "6.2.2"))
    assert f.subject == "GPU 0" and "gfx1031" in f.message and "(amd-smi: ROCm 6.2.2)" in f.message
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in f.fix
    # the 5.4 page printed gfx1031 for the RX 6600, a gfx1032 chip: no release's list holds a gfx1031 GPU
    assert "ROCm 5.4" not in f.fix
    (old,) = fired("rocm-gpu-not-in-release", _amd_node("AMD Radeon RX 580", "gfx803", "6.2.2"))
    assert "HSA_OVERRIDE_GFX_VERSION=" not in old.fix  # no listed target of its family to borrow
    (mi25,) = fired("rocm-gpu-not-in-release", _amd_node("AMD Instinct MI25", "gfx900", "6.1.2"))
    assert "marks AMD Instinct MI25 (gfx900) unsupported" in mi25.message


def test_the_hip_runtime_finding_no_code_object_makes_it_an_error():
    # the real line of oobabooga/text-generation-webui#5 (tests/fixtures/tickets_blind_g)
    line = ('I\'m getting `"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"` '
            "even with torch* set to +rocm5.2")
    g = _amd_node("AMD Radeon RX 6700 XT", "gfx1031", "6.2.2")
    g["facts"]["ticket"] = {"symptoms": find_messages(line)}
    (f,) = fired("rocm-gpu-not-in-release", g)
    assert f.severity == "error" and "no code object" in f.message


def test_several_releases_named_is_not_a_finding():
    text = (PASTES / "hip-3282-segfault-barcelo-igpu-unsupported.txt").read_text()
    g = recorded_paste_facts("hip-3282-segfault-barcelo-igpu-unsupported.txt")
    g["facts"]["ticket"]["rocm_versions"] = find_rocm_versions(text + "\nROCm version: 6.2.2\n")
    assert not fired("rocm-gpu-not-in-release", g)


def test_nvidia_gpus_listed_keep_a_named_amd_gpu_out():
    g = recorded_paste_facts("hip-3282-segfault-barcelo-igpu-unsupported.txt")
    g["facts"]["gpus"] = facts("h100-kvm-1gpu")["facts"]["gpus"]
    assert not fired("rocm-gpu-not-in-release", g)


def test_the_text_readers_on_real_lines():
    kfd = (TICKETS.parent / "tickets_blind_d" / "legacy-rocm-2232-kfd-pitcairn-not-supported.txt").read_text()
    (gpu,) = find_amd_gpus(kfd)
    assert gpu["names"] == ["Radeon R7 370", "R9 270", "R9 370 OEM"] and gpu["lspci"]
    hip = (PASTES / "hip-3282-segfault-barcelo-igpu-unsupported.txt").read_text()
    assert [v["series"] for v in find_rocm_versions(hip)] == ["5.4"]
    assert [g["gpu"] for g in find_amd_gpus(hip)] == ["Barcelo"]
    rx = (TICKETS.parent / "tickets_blind_b" / "rocm-arch-901-rocminfo-rx560-unsupported.txt").read_text()
    assert [g["gpu"] for g in find_amd_gpus(rx)] == ["AMD Radeon RX560"]
    assert [v["series"] for v in find_rocm_versions(rx)] == ["5.3"]


def test_hostile_text_is_bounded():
    text = "[AMD/ATI] " + "A" * 200000 + "\n" + "Radeon RX " * 50000 + "\n" + "rocm-" * 100000
    assert len(find_amd_gpus(text)) <= 16 and find_rocm_versions(text) == []


def test_every_release_lists_its_supported_gpus_as_listed():
    for r in load("rocm_gpus")["release"]:
        assert r["read"] in ("2026-11-26", "2026-11-27")
        # a commit, a tag or the stored copy read, never "latest"
        assert re.search(r" @ (?:[0-9a-f]{40}|tag rocm-\d|(?:a|the) \d+\.\d+(?:\.\d+)? page, commit unrecorded)", r["source"]), r["source"]
        for gfx in r.get("targets", []):
            assert rocm_gpus.judge(r["series"], gfx=gfx) is None
        for g in r.get("gpu", []):
            judged = rocm_gpus.judge(r["series"], name=g["name"], gfx=g["gfx"])
            assert (judged is None) == (g["support"] in rocm_gpus.SUPPORTED), (r["series"], g)


def test_a_release_whose_list_was_not_read_is_skipped_with_its_reason():
    from rulekit import run_rule

    for g, path in ((_amd_node("AMD Radeon RX 560", "gfx803", "5.3.0"), "amd.rocm_version"),
                    (recorded_paste_facts("../tickets_blind_b/rocm-arch-901-rocminfo-rx560-unsupported.txt"),
                     "ticket.rocm_versions")):
        findings, skipped = run_rule("rocm-gpu-not-in-release", g)[:2]
        assert not findings and path in skipped[0]["reason"] and "ROCm 5.3" in skipped[0]["reason"]


# --- series after 6.2 (read 2026-11-27): each node is judged against its own release's list ---

from conftest import PUBLIC, report_of  # noqa: E402
from hpcdoctor.parse import amdsmi  # noqa: E402

_AMD = PUBLIC / "amd"


def _recorded_mi300x_node(rocm=None):
    """huggingface/dell-ai's recorded 8x MI300X: its `amd-smi static --json` as the paste reader gives
    the GPUs, and its own `amd-smi version --json` (ROCm 7.2.1) unless another release is named."""
    gpus = report_of("check", "--from", str(_AMD / "delai_8xMI300X_amd-smi_static_json_root.json"))["facts"]["gpus"]
    rocm = rocm or amdsmi.parse_amdsmi_version((_AMD / "delai_amd-smi_version_json_root.json").read_text())["rocm_version"]
    return facts("h100-kvm-1gpu", **{"gpus": gpus, "amd.rocm_version": rocm}), gpus


def test_a_recorded_mi300x_node_on_rocm_7_2_is_judged_against_7_2_and_quiet():
    from rulekit import run_rule

    g, gpus = _recorded_mi300x_node()
    assert g["facts"]["amd"]["rocm_version"] == "7.2.1" and {x["name"] for x in gpus} == {"AMD Instinct MI300X"}
    findings, skipped = run_rule("rocm-gpu-not-in-release", g)[:2]
    assert not findings and not skipped  # judged, not skipped: 7.2's targets hold gfx942
    assert rocm_gpus.release("7.2")["described"] == "7.2.3"


@pytest.mark.parametrize("rocm", ["6.3.3", "6.4.1", "7.0.0", "7.1.0"])
def test_the_recorded_mi300x_is_listed_by_every_later_series(rocm):
    g, _ = _recorded_mi300x_node(rocm)
    assert not fired("rocm-gpu-not-in-release", g)


def test_the_recorded_mi300x_under_a_release_with_no_entry_stays_unknown():
    from rulekit import run_rule

    g, _ = _recorded_mi300x_node("5.6.1")  # a real release whose page was not read
    findings, skipped = run_rule("rocm-gpu-not-in-release", g)[:2]
    assert not findings and "ROCm 5.6" in skipped[0]["reason"] and "7.2" in skipped[0]["reason"]


def test_the_recorded_gfx906_collect_env_is_judged_against_each_release_own_list():
    # the real ROCm 6.2 collect_env of vllm#9713 (an MI50-class gfx906): 6.2 lists gfx906 as deprecated,
    # 6.4's and 7.0's pages mark the MI50/Radeon VII/PRO VII (gfx906) unsupported, 7.2's matrix omits gfx906
    base = recorded_paste_facts("../tickets/vllm-9713-rocm-gfx906-healthy.txt")
    assert not fired("rocm-gpu-not-in-release", base)
    for series, said in (("6.4", "AMD's list for ROCm 6.4 has no GPU of"),
                         ("7.0", "AMD's list for ROCm 7.0 has no GPU of"),
                         ("7.2", "AMD's compatibility matrix for ROCm 7.2 lists the GPU targets gfx950")):
        g = recorded_paste_facts("../tickets/vllm-9713-rocm-gfx906-healthy.txt")
        for v in g["facts"]["ticket"]["rocm_versions"]:
            v["series"] = series
        (f,) = fired("rocm-gpu-not-in-release", g)
        assert said in f.message and "gfx906" in f.message, f.message
        assert "6.2" in f.fix  # the last series whose list still ships gfx906 code


def test_an_mi50_by_name_is_marked_unsupported_from_6_4():
    (f,) = fired("rocm-gpu-not-in-release", _amd_node("AMD Instinct MI50", "gfx906", "6.4.1"))
    assert "marks AMD Instinct MI50 (gfx906) unsupported" in f.message
    assert not fired("rocm-gpu-not-in-release", _amd_node("AMD Instinct MI50", "gfx906", "6.2.4"))  # deprecated


def test_rdna4_and_mi355x_are_listed_from_their_first_release_only():
    # names as AMD's 6.4 and 7.0 pages print them (rocm_gpus.toml)
    assert not fired("rocm-gpu-not-in-release", _amd_node("AMD Radeon RX 9070 XT", "gfx1201", "6.4.1"))
    (f,) = fired("rocm-gpu-not-in-release", _amd_node("AMD Radeon RX 9070 XT", "gfx1201", "6.2.4"))
    assert "has no GPU of AMD Radeon RX 9070 XT's target gfx1201" in f.message
    assert "in ROCm 6.4, 7.0, 7.1, 7.2: use that release" in f.fix
    assert not fired("rocm-gpu-not-in-release", _amd_node("AMD Instinct MI355X", "gfx950", "7.0.0"))
    (old,) = fired("rocm-gpu-not-in-release", _amd_node("AMD Instinct MI355X", "gfx950", "6.4.1"))
    assert "in ROCm 7.0, 7.1, 7.2" in old.fix and "6.3" not in old.fix


def test_a_targets_only_entry_cannot_judge_a_name_no_list_gives_a_target():
    assert rocm_gpus.judge("7.2", name="AMD Radeon RX 9070 XT") is None  # named by 6.4's page: gfx1201, listed
    assert rocm_gpus.judge("7.2", name="Barcelo") is None  # no list gives Barcelo a target: unknown here
    assert rocm_gpus.judge("6.2", name="Barcelo")["why"] == "name-unlisted"  # a list of names can say so


def test_a_target_the_matrix_omits_but_the_last_named_list_still_ships_is_not_judged():
    # the real gfx906 collect_env of vllm#9713 under 6.3, whose entry is the matrix's targets only:
    # the matrix leaves out deprecated targets (it omits gfx906 for 6.0-6.2, whose pages list it
    # deprecated), and 6.2's page is the last named list, so 6.3 cannot be said to drop gfx906
    g = recorded_paste_facts("../tickets/vllm-9713-rocm-gfx906-healthy.txt")
    for v in g["facts"]["ticket"]["rocm_versions"]:
        v["series"] = "6.3"
    assert not fired("rocm-gpu-not-in-release", g)
    assert rocm_gpus.judge("6.3", gfx="gfx906") is None
    assert rocm_gpus.judge("7.1", gfx="gfx906")["why"] == "gfx-unlisted"  # 6.4's and 7.0's pages drop it
