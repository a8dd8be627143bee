"""triton-kernel-exceeds-gpu-shared-memory on set AI's real tickets: Triton's OutOfResources with its hint
in backticks as Triton prints it (MonkeyOCR#86) and with the backticks eaten by Markdown inside Chinese
prose (DEST3D#2, which hpcdoctor refused as unreadable before the needle left the backticks)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts


@pytest.mark.parametrize("name, required", [("monkeyocr-86-triton-shared-memory-over-gpu-limit", "126978"),
                                            ("dest3d-2-triton-num-stages-over-shared-memory", "589824")])
def test_the_figures_triton_printed_are_named(tmp_path, name, required):
    text = (FIXTURES / "tickets_blind_ai" / f"{name}.txt").read_text(encoding="utf-8")
    (f,) = fired("triton-kernel-exceeds-gpu-shared-memory", paste_facts(tmp_path, text, name + ".txt"))
    assert f"needs {required} bytes, the GPU allows 101376 bytes" in f.message
    assert "num_stages" in f.fix


def test_a_triton_compile_error_without_the_limit_is_not_this(tmp_path):
    # the Triton entry read beside it in the catalogue: the GPU too old for Triton at all
    line = ("Found Tesla P100-PCIE-16GB which is too old to be supported by the triton GPU compiler, which is used as "
            "the backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.0\n")
    assert not fired("triton-kernel-exceeds-gpu-shared-memory", paste_facts(tmp_path, line, "old.txt"))
