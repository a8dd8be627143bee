"""A short lease of an H200 node on 2026-11-30 (Firecracker VM, 16 vCPUs, driver 580.159.04, torch
2.11.0+cu130), recorded with bench/gpu_lease_recheck.sh: the live paths of the current code once more,
a redacted quick snapshot, and two torch out-of-memory cases (tests/fixtures/emitters_gpu/README.md).
hpcdoctor ran there from a PYTHONPATH folder holding its wheel and its dependencies' wheels, one of
them (prometheus-client 0.26.0) the same release the image has: the live check called that an error,
a container importing the host's packages."""

from __future__ import annotations

from conftest import FIXTURES, NODES, report_of
from hpcdoctor.triage.messages import find_messages

SNAP = NODES / "h200-fc-1gpu-quick-pythonpath-2026-11-30"
EMITTERS = FIXTURES / "emitters_gpu"


def test_the_recheck_snapshot_reads_the_h200_and_its_benchmarks():
    doc = report_of("check", "--from", str(SNAP), "--fail-on", "never")
    gpu = doc["facts"]["gpus"][0]
    assert gpu["name"] == "NVIDIA H200" and gpu["memory_total_mib"] == 143771, gpu
    codes = [f["code"] for f in doc["findings"]]
    assert "BEN001" not in codes and "BEN002" not in codes, codes   # a healthy card is not called slow


def test_a_pythonpath_copy_of_the_images_own_release_is_an_info_not_an_error():
    doc = report_of("check", "--from", str(SNAP), "--fail-on", "never")
    (f,) = [f for f in doc["findings"] if f["code"] == "ENV025"]
    assert f["severity"] == "info", f
    assert "prometheus-client 0.26.0 from /tmp/site" in f["message"] and "same versions" in f["message"]


def test_torchs_memory_fraction_refusal_reads_its_allowed_share():
    text = (EMITTERS / "h200-torch-oom-memory-fraction.txt").read_text()
    (s,) = [s for s in find_messages(text) if s["id"] == "torch:cuda-oom-v2"]
    assert s["allowed"] == "34.95 GiB" and s["free"] == "139.29 GiB", s
    plain = (EMITTERS / "h200-torch-oom.txt").read_text()
    (p,) = [s for s in find_messages(plain) if s["id"] == "torch:cuda-oom-v2"]
    assert not p.get("allowed"), p   # no fraction set: no allowed share in the message
