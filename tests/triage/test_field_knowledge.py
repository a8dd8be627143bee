"""Triage that knows the field (issue 24): real pastes from the blind ticket sets, read through the
catalogues built from the code that prints the messages (libraries.toml, nvrm.toml, edac.toml,
prose.toml, the Xid and NCCL additions) and the rules they feed. Each paste is a verbatim copy
listed in fixtures/pastes/SOURCES.md with its thread; what must and must not fire is what the
thread established. The false positives the blind sets found are held here too: each of those
pastes fired a rule before the fix that these assertions forbid."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, check_from
from hpcdoctor.sysroot import ReplaySysRoot
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import find_gpu_names
from rulekit import facts, fired

PASTES = FIXTURES / "pastes"


def symbols_of(name: str) -> dict:
    run = check_from(PASTES / f"{name}.txt")
    assert run["doc"] is not None, run["stderr"]
    return {f["symbol"]: f for f in run["doc"]["findings"]}


# (paste, symbols that must fire, symbols that must not)
CASES = [
    # the loader cannot open a CUDA library, raised outside torch's import (a title; mmcv)
    ("cpcl-4-libcudart-10-0-cuda-path", {"cuda-runtime-library-missing"}, {"torch-import-failed", "driver-too-old"}),
    ("llmdet-32-libcudart-10-1-mmcv", {"cuda-runtime-library-missing"}, {"torch-import-failed", "driver-too-old"}),
    # EDAC's own report of corrected host memory errors
    ("osm-operations-300-host-dram-ecc-ce", {"host-dram-ecc-errors"}, {"ecc-uncorrectable-errors"}),
    # the NVIDIA driver's notices: another driver holds the GPUs; RmInitAdapter failed
    ("bigdata-133-nvrm-probe-nouveau", {"gpu-driver-unusable"}, set()),
    ("open-gpu-kernel-modules-862-no-devices-rebar", {"gpu-driver-unusable"}, set()),
    # the fallen-off-the-bus notice wrapped under one timestamp, and the same said in prose
    ("nvsentinel-155-fallen-off-bus-no-xid", {"gpu-fallen-off-bus"}, set()),
    ("open-gpu-kernel-modules-507-fallen-off-bus-prose", {"gpu-fallen-off-bus"}, set()),
    ("open-gpu-kernel-modules-1370-xid31-driver-610-regression", {"gpu-xid-application-fault"}, {"gpu-xid-reset-required"}),
    # a ROCm build on an NVIDIA laptop GPU is not a missing gfx target
    ("easydiffusion-1477-hip-error-on-nvidia-rtx3050", {"torch-rocm-build-on-nvidia"}, {"torch-rocm-missing-gfx"}),
    # rocALUTION's own HIP check is not torch's build (a false positive of torch-missing-arch)
    ("rocalution-197-invalid-device-function-gfx1031", {"framework-missing-arch"}, {"torch-missing-arch"}),
    ("nccl-210-socket-creation-failed-no-ip-interface", {"nccl-socket-ifname"}, set()),
    ("nccl-697-system-error-two-nodes-bridge-ifaces-title", {"nccl-system-error"}, set()),
    ("vllm-1284-p100-bf16-and-cc-below-7", {"framework-missing-arch", "bf16-unsupported"}, set()),
    ("turbofan-rul-2-omp-error-15-cut", {"duplicate-libraries"}, set()),
    # an nvidia-smi table pasted from its column headings down: GPU 0 held by another job
    ("gpt2-chitchat-19-oom-gpu0-used-by-tf", {"gpu-memory-in-use"}, set()),
    # healthy controls that fired before: "No devices were found" on a node without a GPU, torch's
    # CPU-only message on a Mac and on machines the user says have no GPU
    ("singuconda-6-no-devices-no-gpu-node-healthy", set(), {"gpu-driver-unusable"}),
    ("bertwsi-1-torch-not-compiled-cuda-mac-healthy", set(), {"torch-cpu-only"}),
    ("neuralrgbd-24-cpu-torch-no-gpu-healthy", set(), {"torch-cpu-only"}),
    ("ssd-pytorch-536-use-gpu-default-healthy", set(), {"torch-cpu-only"}),
]


@pytest.mark.parametrize("name,must,must_not", CASES, ids=[c[0] for c in CASES])
def test_blind_paste(name, must, must_not):
    got = symbols_of(name)
    assert must <= set(got), (name, sorted(got))
    assert not must_not & set(got), (name, sorted(got))


def test_library_message_names_the_version_the_program_was_built_for():
    f = symbols_of("llmdet-32-libcudart-10-1-mmcv")["cuda-runtime-library-missing"]
    assert "libcudart.so.10.1 cannot be loaded" in f["message"] and "CUDA 10.1" in f["message"]


def test_torch_own_import_stays_torch_import_failed():
    # the main corpus' paste: the same loader error under torch/__init__.py is torch's import
    got = {f["symbol"] for f in check_from(FIXTURES / "tickets" / "pytorch-20750-libcurand8-old-install.txt")["doc"]["findings"]}
    assert "torch-import-failed" in got and "cuda-runtime-library-missing" not in got


def test_hashed_library_of_old_wheels_is_read_by_its_stem():
    text = (FIXTURES / "tickets" / "pytorch-4494-libcudnn7-torch03.txt").read_text()
    (m,) = [s for s in find_messages(text, ["libraries"])]
    assert m["key"] == "libcudnn" and m["version"] == "7.0.3"


def test_edac_message_of_the_blind_paste_is_ce_on_mc0():
    text = (PASTES / "osm-operations-300-host-dram-ecc-ce.txt").read_text()
    found = find_messages(text, ["edac"])
    assert [(s["key"], s["mc"], s["count"]) for s in found] == [("CE", "0", "4")]


def _edac_root(tmp_path: Path, counts) -> ReplaySysRoot:
    for n, (ce, ue) in enumerate(counts):
        mc = tmp_path / "fs" / "sys" / "devices" / "system" / "edac" / "mc" / f"mc{n}"
        mc.mkdir(parents=True)
        (mc / "ce_count").write_text(f"{ce}\n")
        (mc / "ue_count").write_text(f"{ue}\n")
    (tmp_path / "fs").mkdir(exist_ok=True)
    return ReplaySysRoot(tmp_path, label="edac test")


def test_live_edac_counts_are_read_per_controller(tmp_path):
    from checks.memory import _edac

    edac = _edac(_edac_root(tmp_path, [(3, 0), (0, 1)]))
    assert edac == {"controllers": [{"mc": "mc0", "ce_count": 3, "ue_count": 0},
                                    {"mc": "mc1", "ce_count": 0, "ue_count": 1}]}


def test_no_edac_driver_is_unknown_not_zero(tmp_path):
    from checks.memory import _edac
    from hpcdoctor.facts import Unknown

    assert isinstance(_edac(_edac_root(tmp_path, [])), Unknown)


def test_live_edac_counts_feed_the_rule():
    ue = {"controllers": [{"mc": "mc0", "ce_count": 5, "ue_count": 2}]}
    (hit,) = fired("host-dram-ecc-errors", facts("h100-kvm-1gpu", **{"memory.edac": ue}))
    assert hit.severity == "error" and "2 uncorrectable and 5 correctable" in hit.message
    ce = {"controllers": [{"mc": "mc0", "ce_count": 5, "ue_count": 0}]}
    (hit,) = fired("host-dram-ecc-errors", facts("h100-kvm-1gpu", **{"memory.edac": ce}))
    assert hit.severity == "warning"
    clean = {"controllers": [{"mc": "mc0", "ce_count": 0, "ue_count": 0}]}
    assert not fired("host-dram-ecc-errors", facts("h100-kvm-1gpu", **{"memory.edac": clean}))


def pasted(name: str, folder: Path = PASTES):
    """A recorded node's facts with no GPU listing, and what a paste of ``name`` reads."""
    text = (folder / f"{name}.txt").read_text()
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text),
                                     "ticket.gpus_named": find_gpu_names(text), "gpus": []})


def test_library_rule_on_the_facts_a_paste_gives():
    (hit,) = fired("cuda-runtime-library-missing", pasted("cpcl-4-libcudart-10-0-cuda-path"))
    assert "libcudart.so.10.0" in hit.message and "CUDA 10.0" in hit.message
    assert not fired("cuda-runtime-library-missing", pasted("pytorch-4112-libcudart8-conda-cpu", FIXTURES / "tickets"))


def test_rocm_build_on_nvidia_needs_an_nvidia_gpu_named():
    (hit,) = fired("torch-rocm-build-on-nvidia", pasted("easydiffusion-1477-hip-error-on-nvidia-rtx3050"))
    assert "GeForce RTX 3050" in hit.message and "cu128" in hit.fix
    # the same HIP message on an AMD card (gfx1031) is a missing gfx target, not this
    assert not fired("torch-rocm-build-on-nvidia", pasted("rocalution-197-invalid-device-function-gfx1031"))


def test_edac_paste_feeds_the_rule_as_a_warning():
    (hit,) = fired("host-dram-ecc-errors", pasted("osm-operations-300-host-dram-ecc-ce"))
    assert hit.severity == "warning" and "EDAC MC0" in hit.message
    assert not fired("host-dram-ecc-errors", pasted("bigdata-133-nvrm-probe-nouveau"))


def test_nvidia_smi_table_cut_above_its_banner_is_read():
    from hpcdoctor.parse import nvsmi_table
    from hpcdoctor.triage.paste import recognise
    from hpcdoctor.facts import Unknown

    rec = recognise((PASTES / "gpt2-chitchat-19-oom-gpu0-used-by-tf.txt").read_text())
    (piece,) = rec.pieces
    assert piece.kind.argv == ["nvidia-smi"] and piece.line == 4
    table = nvsmi_table.parse(piece.text)
    assert isinstance(table["driver_version"], Unknown)
    assert [(g["index"], g["memory_used_mib"], g["memory_total_mib"]) for g in table["gpus"]] == [
        (0, 15514, 16130), (1, 0, 16130), (2, 0, 16130), (3, 0, 16130)]


def test_a_whole_table_is_still_one_piece():
    from hpcdoctor.triage.paste import recognise

    # a recorded node's whole table: banner, then the column headings the cut form starts with
    text = (FIXTURES / "nodes" / "h100-kvm-1gpu" / "cmd" / "nvsmi.txt").read_text()
    names = [p.kind.name for p in recognise(text).pieces]
    assert names.count("nvidia-smi") == 1 and "nvidia-smi (cut above)" not in names


def _slurm_job(gpus_on_node=None, gpus=()):
    return facts("h100-kvm-1gpu", **{"scheduler.kind": "slurm", "scheduler.in_job": True, "scheduler.job_id": "4242",
                                     "scheduler.gpus_on_node": gpus_on_node, "gpus": list(gpus)})


def test_slurm_job_that_asked_for_no_gpus_sees_none():
    # the recorded node has one NVIDIA GPU on its PCI bus; the job's view of NVML lists none
    (hit,) = fired("slurm-job-without-gpus", _slurm_job())
    assert "Slurm job 4242 asked for no GPUs" in hit.message and "--gpus=1" in hit.fix
    # a job given a GPU, or one that sees the node's GPU, is not this
    assert not fired("slurm-job-without-gpus", _slurm_job(gpus_on_node=1))
    listed = facts("h100-kvm-1gpu")["facts"]["gpus"]
    assert not fired("slurm-job-without-gpus", _slurm_job(gpus=listed))


@pytest.mark.parametrize("name", ["fgdm-7-no-cuda-gpus-visible-devices-healthy", "shape-texture-12-no-cuda-gpus-gpu-id-healthy"])
def test_no_cuda_gpus_outside_slurm_is_not_a_slurm_allocation(name):
    g = pasted(name)
    assert any(s["id"] == "torch:no-cuda-gpus" for s in g["facts"]["ticket"]["symptoms"])
    assert not fired("slurm-job-without-gpus", g)


def test_edac_lines_in_the_nodes_own_kernel_log_feed_the_rule(tmp_path):
    import json
    import shutil

    from conftest import NODES
    from hpcdoctor import pipeline
    from hpcdoctor.checks.kernel_log import SOURCES
    from hpcdoctor.runner import Options

    node = tmp_path / "node"
    shutil.copytree(NODES / "h100-kvm-1gpu", node)
    index = json.loads((node / "cmd" / "index.json").read_text())
    # the blind ticket's kernel log lines, as dmesg of the node would print them
    lines = [l for l in (PASTES / "osm-operations-300-host-dram-ecc-ce.txt").read_text().splitlines() if "kernel:" in l]
    (node / "cmd" / "klog0.txt").write_text("\n".join(lines) + "\n")
    index.append({"argv": SOURCES[0], "rc": 0, "stdout": "klog0.txt", "stderr": ""})
    (node / "cmd" / "index.json").write_text(json.dumps(index))
    g = pipeline.gather(ReplaySysRoot(node), Options())
    (hit,) = fired("host-dram-ecc-errors", g)
    assert hit.severity == "warning" and hit.evidence["kernel_log.line"] == 2
