"""Healthy controls of set Y (unsealed) that triage used to refuse as unreadable: an EasyBuild
checksum of a tarball replaced upstream, GROMACS's grompp stopping on an old force-field include,
nvcc given "-arch=[sm_61]" and two Nextflow runs sharing a launch directory. Each is the emitter's
own words, now read from its catalogue (easybuild.toml, gromacs_fatal.toml, nvcc.toml,
nextflow_locks.toml), and answered with no error or warning: the user's input, not the node."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from

Y = FIXTURES / "tickets_blind_y"


def _read(run: dict) -> set:
    return {s["id"] for s in (run["doc"]["facts"].get("ticket") or {}).get("symptoms", [])}


@pytest.mark.parametrize("name, entry", [
    ("easybuild-860-ucx-tarball-updated-in-place-healthy", "easybuild:checksum-failed"),
    ("bocs-1-grompp-old-forcefield-include-healthy", "gromacs_fatal:toplevel-itp-removed"),
    ("pytorch-mask-rcnn-38-arch-flag-in-brackets-healthy", "nvcc:gpu-architecture-value-malformed"),
    ("mcmicro-127-nextflow-history-lock-concurrent-runs-healthy", "nextflow_locks:history-lock-held"),
])
def test_read_and_answered_without_a_fault(name, entry):
    run = check_from(Y / f"{name}.txt")
    assert run["rc"] == 0 and run["doc"] is not None, run["stderr"]
    assert entry in _read(run)
    assert [f["symbol"] for f in run["doc"]["findings"] if f["severity"] in ("error", "warning")] == []


def test_a_real_architecture_nvcc_lacks_is_still_the_old_nvcc(tmp_path):
    paste = tmp_path / "nvcc.txt"
    paste.write_text("nvcc fatal   : Value 'sm_90' is not defined for option 'gpu-architecture'\n", encoding="utf-8")
    read = _read(check_from(paste))
    assert "nvcc:gpu-architecture-not-defined" in read and "nvcc:gpu-architecture-value-malformed" not in read
