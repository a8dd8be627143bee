"""Rules that read a program's own refusal of this software stack (xFormers' import warning,
Triton's, a CPU instruction set missing, a DataLoader worker killed for memory, an extension built
for another torch), on verbatim cuts of public tickets (URL beside each), and their silence where
the same words say something else."""

from __future__ import annotations

from hpcdoctor.triage.messages import find_messages
from rulekit import facts, fired, paste_facts, run_rule

H100 = "h100-kvm-1gpu"


def silent(symbol: str, gathered) -> bool:
    """No finding (a rule skipped for a fact the paste lacks says nothing either)."""
    return not run_rule(symbol, gathered)[0]


def pasted(text: str):
    return facts(H100, **{"ticket.symptoms": find_messages(text)})




# --- xFormers' import warning: torch-cpu-only (SW002), xformers-without-cuda (SW021) ---------------

# https://github.com/facebookresearch/xformers/issues/982
XFORMERS_982 = """python -m xformers.info
WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.2.0+cu121 with CUDA 1201 (you have 2.2.0+cpu)
    Python  3.10.11 (you have 3.10.13)
  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)
"""
# https://github.com/TheLastBen/fast-stable-diffusion/issues (sd-paperspace-85; backticks as pasted)
SD_PAPERSPACE_85 = """`WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
`
`PyTorch 2.0..0+cu118 with CUDA 1108 (you have 1.13.1+cu117)`
"""
# https://github.com/Vchitect/SEINE/issues/21 (a Mac M1: no CUDA, the same torch on both sides)
SEINE_21 = """WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:
    PyTorch 2.0.1 with CUDA 1106 (you have 2.0.1)
    Python  3.10.12 (you have 3.10.12)
"""


def test_xformers_finding_a_cpu_torch_is_the_cpu_build(tmp_path):
    told = paste_facts(tmp_path, XFORMERS_982)
    (f,) = fired("torch-cpu-only", told)
    assert "2.2.0+cpu" in f.message and "built for 2.2.0+cu121" in f.message
    assert silent("xformers-without-cuda", told)


def test_xformers_built_for_another_torch(tmp_path):
    told = paste_facts(tmp_path, SD_PAPERSPACE_85)
    (f,) = fired("xformers-without-cuda", told)
    assert "1.13.1+cu117" in f.message and f.fix.startswith("python -m xformers.info")
    assert silent("torch-cpu-only", told)


def test_xformers_same_torch_on_both_sides_is_not_judged(tmp_path):
    told = paste_facts(tmp_path, SEINE_21)
    for sym in ("torch-cpu-only", "xformers-without-cuda"):
        assert silent(sym, told), sym


# --- SW020 triton-gpu-too-old from a title cut short ------------------------------------------

# https://github.com/vllm-project/vllm/issues/14547 (title, cut by GitHub)
VLLM_14547 = ("# [Bug]: RuntimeError: Found Tesla P100-SXM2-16GB which is too old to be supported by the triton GPU "
              "compiler, which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, but y\n")


def test_triton_too_old_from_a_cut_title():
    (f,) = fired("triton-gpu-too-old", pasted(VLLM_14547))
    assert "Tesla P100-SXM2-16GB (Triton needs compute capability 7.0 or newer)" in f.message


def test_a_live_node_without_a_paste_is_silent():
    for sym in ("torch-cpu-only", "xformers-without-cuda", "triton-gpu-too-old"):
        findings, _skipped = run_rule(sym, facts(H100))
        assert not findings, sym
