"""openblas.toml (OpenBLAS's own runtime messages) and torch_ddp.toml (torch DDP's reducer and
logger): real pastes that held only these emitters' lines were refused as "nothing hpcdoctor can
read"; each is now read as its entry, and, being healthy (the user's build setting or training code,
a harmless warning), gets no finding of severity error or warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hpcdoctor.triage.messages import find_messages
from tests.rulekit import paste_facts

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AH = FIXTURES / "tickets_blind_ah"

PASTES = {
    "openblas-1735-too-many-threads-for-build-healthy.txt": "openblas:too-many-threads",
    "openblas-938-too-many-memory-regions-num-threads-healthy.txt": "openblas:too-many-memory-regions",
    "meta-detr-60-find-unused-parameters-warning-healthy.txt": "torch_ddp:find-unused-parameters-unneeded",
}


@pytest.mark.parametrize("name,symptom", sorted(PASTES.items()))
def test_the_paste_is_read_as_its_entry(tmp_path, name, symptom):
    facts = paste_facts(tmp_path, (AH / name).read_text(encoding="utf-8"), name)
    symptoms = (facts["facts"].get("ticket") or {}).get("symptoms") or []
    assert symptom in {s["id"] for s in symptoms}


@pytest.mark.parametrize("name", sorted(PASTES))
def test_check_reads_the_paste_and_finds_no_fault(tmp_path, name):
    env_cache = tmp_path / "cache"
    proc = subprocess.run([sys.executable, "-m", "hpcdoctor", "check", "--from", str(AH / name), "--format", "json"],
                          capture_output=True, text=True, timeout=300,
                          env={"XDG_CACHE_HOME": str(env_cache), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert proc.returncode != 2, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    findings = report.get("findings", [])
    assert not [f for f in findings if f.get("severity") in ("error", "warning")], findings


def test_memory_regions_wordings_and_the_build_limit():
    old = find_messages("BLAS : Program is Terminated. Because you tried to allocate too many memory regions.\n")
    assert [s["id"] for s in old] == ["openblas:too-many-memory-regions"]
    new = find_messages("OpenBLAS : Program is Terminated. Because you tried to allocate too many memory regions.\n"
                        "This library was built to support a maximum of 128 threads - either rebuild OpenBLAS\n"
                        "with a larger NUM_THREADS value or set the environment variable OPENBLAS_NUM_THREADS to\n")
    s = next(s for s in new if s["id"] == "openblas:too-many-memory-regions")
    assert (s["prefix"], s["max_threads"]) == ("OpenBLAS", "128")
    tls = find_messages("OpenBLAS : Program will terminate because you tried to allocate too many TLS memory regions.\n")
    assert [s["id"] for s in tls] == ["openblas:too-many-tls-memory-regions"]


def test_num_threads_exceeded_names_the_limit_of_0_3_24():
    text = ("OpenBLAS warning: precompiled NUM_THREADS exceeded, adding auxiliary array for thread metadata.\n"
            "To avoid this warning, please rebuild your copy of OpenBLAS with a larger NUM_THREADS setting\n"
            "or set the environment variable OPENBLAS_NUM_THREADS to 64 or lower\n")
    s = next(s for s in find_messages(text) if s["id"] == "threads:openblas-num-threads-exceeded")
    assert s["max_threads"] == "64"
    assert not any(x["id"].startswith("openblas:") for x in find_messages(text))


def test_core_line_is_read_only_for_openblas_core_names():
    assert [s["id"] for s in find_messages("Core: Haswell\n")] == ["openblas:core-detected"]
    assert not any(s["id"] == "openblas:core-detected" for s in find_messages("Core: 3\nCore: i7-8700\n"))


def test_ddp_reduction_error_variants():
    base = "Expected to have finished reduction in the prior iteration before starting a new one. "
    static = base + ("This error indicates that your training graph has changed in this iteration, e.g., one "
                     "parameter is used in first iteration, but then got unused in the second iteration.\n")
    s = next(s for s in find_messages("RuntimeError: " + static) if s["id"] == "torch_ddp:reduction-not-finished")
    assert s["variant"] == "training graph has changed in this iteration"
    flag = base + ("This error indicates that your module has parameters that were not used in producing loss. "
                   "Since `find_unused_parameters=True` is enabled, this likely  means that not all `forward` outputs\n"
                   "Parameter indices which did not receive grad for rank 3: 12 13\n")
    found = {s["id"]: s for s in find_messages("RuntimeError: " + flag)}
    assert found["torch_ddp:reduction-not-finished"]["hint"] == "Since `find_unused_parameters=True` is enabled"
    assert found["torch_ddp:params-without-grad"]["rank"] == "3"
