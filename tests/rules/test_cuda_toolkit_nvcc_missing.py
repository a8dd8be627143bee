"""cuda-toolkit-nvcc-missing on blind set E's real DeepSpeed ticket (no /usr/local/cuda/bin/nvcc in
a container), and on torch 2.13.0's own messages (torch/utils/cpp_extension.py) as they are raised."""

from __future__ import annotations

import subprocess

import pytest

from conftest import FIXTURES, real_shell
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, paste_facts


def test_deepspeeds_missing_nvcc_names_the_path(tmp_path):
    name = "deepspeed-4553-no-nvcc-in-container"
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    (f,) = fired("cuda-toolkit-nvcc-missing", paste_facts(tmp_path, text, name + ".txt"))
    assert "there is no /usr/local/cuda/bin/nvcc" in f.message and "ls -d /usr/local/cuda*/bin/nvcc" in f.fix


@pytest.mark.parametrize("line", [
    "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
    "RuntimeError: CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATHenvironment variable "
    "or add NVCC to your system PATH. The extension compilation will fail.",
    "AssertionError: CUDA_HOME does not exist, unable to compile CUDA op(s)",
])
def test_no_toolkit_at_all_is_read_from_torch_and_deepspeed(tmp_path, line):
    (f,) = fired("cuda-toolkit-nvcc-missing", paste_facts(tmp_path, "Traceback (most recent call last):\n" + line + "\n",
                                                          "build.txt"))
    assert "found no CUDA toolkit" in f.message


def test_no_cuda_runtime_while_building_is_read_but_feeds_no_rule():
    (s,) = find_messages("No CUDA runtime is found, using CUDA_HOME='/usr/local/cuda'\n")
    assert s["id"] == "cuda_home:torch-no-cuda-runtime" and not s.get("rules")


def test_a_build_whose_nvcc_ran_is_not_this_diagnosis(tmp_path):
    # Blind set E: nvcc 12.2 found and run, its version unlike torch's cu113 (torch-extension-cuda-mismatch).
    name = "embodiedocc2-6-nvcc-122-vs-torch-cu113"
    text = (FIXTURES / "tickets_blind_e" / f"{name}.txt").read_text(encoding="utf-8")
    assert not fired("cuda-toolkit-nvcc-missing", paste_facts(tmp_path, text, name + ".txt"))


@pytest.mark.parametrize("shell", ["bash", "dash", "zsh", "fish", "tcsh"])
@pytest.mark.parametrize("as_script", [False, True])
def test_each_real_shell_saying_it_found_no_nvcc(tmp_path, shell, as_script):
    # The shell's own words, from the shell itself: nvcc run with a PATH that holds nothing.
    script = tmp_path / "build.sh"
    script.write_text("echo building\nnvcc -V\n")
    argv = [real_shell(shell), str(script)] if as_script else [real_shell(shell), "-c", "nvcc --version"]
    said = subprocess.run(argv, capture_output=True, text=True, env={"PATH": str(tmp_path / "none")}, cwd=tmp_path,
                          timeout=30)
    assert said.returncode != 0 and said.stderr.strip(), said
    (f,) = fired("cuda-toolkit-nvcc-missing", paste_facts(tmp_path, said.stderr, "build.txt"))
    assert "found no nvcc on PATH" in f.message and "sudo env" in f.fix


def test_an_nvcc_that_ran_or_a_path_named_is_not_the_shell_missing_it():
    for line in ("nvcc fatal   : Unsupported gpu architecture 'compute_86'", "which: no nvcc in (/usr/bin:/bin)",
                 "Command 'nvccx' not found, did you mean:"):
        assert not [s for s in find_messages(line + "\n", families=("shell",))], line
