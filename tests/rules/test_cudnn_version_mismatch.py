"""cudnn-version-mismatch on public pastes of Torch7's cudnn.torch version check (tests/fixtures/pastes,
SOURCES.md there) and torch 2.13's format string for a cuDNN too new for the GPU."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages


@pytest.mark.parametrize("name, found", [("cudnn-torch-359-bindings-r5-cudnn-6.txt", "6020"),
                                         ("torch7-1106-bindings-r5-cudnn-7.txt", "7004")])
def test_the_bindings_refuse_another_cudnn_major(name, found):
    (f,) = fired("cudnn-version-mismatch", recorded_paste_facts(name))
    assert f"loaded is version {found}" in f.message and "5.x" in f.message
    assert "git clone -b R7 https://github.com/soumith/cudnn.torch" in f.fix


def test_torchs_cudnn_too_new_for_the_gpu():
    # torch 2.13.0 torch/backends/cudnn/__init__.py's message, as it raises it
    text = ("RuntimeError: cuDNN version 91100 is not compatible with devices with SM < 7.5. Please install a version "
            "of PyTorch with a compatible cuDNN version. https://github.com/pytorch/pytorch/blob/main/RELEASE.md#release-compatibility-matrix\n")
    (f,) = fired("cudnn-version-mismatch", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "cuDNN 91100" in f.message and "below 7.5" in f.message


def test_a_status_that_names_no_version_and_the_frameworks_own_checks_are_not_this_rule():
    assert not fired("cudnn-version-mismatch", recorded_paste_facts("neuraltalk2-122-cudnn-not-initialized-old-cudnn.txt"))
    assert not fired("cudnn-version-mismatch", recorded_paste_facts("jaxlib-feedstock-329-cudnn-9-10-under-9-13.txt"))
