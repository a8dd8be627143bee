"""cuda-runtime-library-missing from cuDNN 8's own "Could not load library libcudnn_..." line, on
blind set E's real tickets: one paste holds only that line (no loader text after it)."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts


def _ticket(tmp_path, name: str):
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    return paste_facts(tmp_path, text, name + ".txt")


def test_cudnns_line_alone_names_the_sub_library(tmp_path):
    (f,) = fired("cuda-runtime-library-missing", _ticket(tmp_path, "make-your-video-4-libcudnn-cnn-infer-8-absent"))
    assert f.message.startswith("libcudnn_cnn_infer.so.8 cannot be loaded")
    assert "grep libcudnn_cnn_infer" in f.fix


@pytest.mark.parametrize("name", ["stream-whisper-18-libcudnn-ops-infer-8-conda-cudnn",
                                  "xtts-finetune-webui-31-libcudnn-ops-infer-8-venv"])
def test_cudnns_line_with_the_loaders_text_is_one_finding(tmp_path, name):
    (f,) = fired("cuda-runtime-library-missing", _ticket(tmp_path, name))
    assert f.message.startswith("libcudnn_ops_infer.so.8 cannot be loaded")
