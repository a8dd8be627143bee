"""torch's own refusals of a device its build lacks, printed by the real CPU build of torch (the
payload tests' interpreter) and read back by the catalogue: the emitter speaks, not a copy of it."""

from __future__ import annotations

import subprocess

import pytest

from conftest import torch_python
from rulekit import fired, message_ids, paste_facts

_CASES = {
    # device asked for, the catalogue entry that reads torch's refusal, and the rule it feeds
    "xpu": ("torch:not-compiled-with-xpu", "torch-without-xpu"),
    "cuda": ("torch:not-compiled-with-cuda", "torch-cpu-only"),
}


def _refusal(device: str) -> str:
    done = subprocess.run([torch_python(), "-c", f"import torch; torch.zeros(1, device={device!r})"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0, f"torch made a tensor on {device}: not the CPU build the payload tests need"
    return done.stderr


@pytest.mark.parametrize("device", sorted(_CASES))
def test_the_cpu_builds_own_refusal_is_read(device, tmp_path):
    entry, symbol = _CASES[device]
    stderr = _refusal(device)
    assert entry in message_ids(stderr), stderr[-400:]
    assert fired(symbol, paste_facts(tmp_path, stderr))


def test_the_xpu_refusal_is_not_read_as_the_cuda_one():
    ids = message_ids(_refusal("xpu"))
    assert "torch:not-compiled-with-cuda" not in ids
