"""cudaGetErrorString's texts read where a program printed them after words of its own (cuda.toml's
message-alone form): "Error 804: ...", TensorRT_Pro's "launch failed: ...", a Markdown-quoted
"Error: ...". Real pastes of sets AJ and AK (unsealed), which hpcdoctor had refused as unreadable."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages
from rulekit import fired, paste_facts, run_rule

AK = FIXTURES / "tickets_blind_ak"
FORWARD_COMPAT = AK / "apollo-lite-80-forward-compat-on-geforce.txt"
LAUNCH_FAILED = AK / "tensorrt-pro-162-gencode-not-for-this-gpu.txt"
QUOTED = AK / "fusibile-15-no-kernel-image-for-gpu-arch.txt"


def _ids(text: str):
    return [s["id"] for s in find_messages(text)]


def _facts(tmp_path, path):
    return paste_facts(tmp_path, path.read_text(encoding="utf-8"), path.name)


@pytest.mark.parametrize("path, sid", [
    (FORWARD_COMPAT, "cuda:cudaErrorCompatNotSupportedOnDevice"),
    (LAUNCH_FAILED, "cuda:cudaErrorNoKernelImageForDevice"),
    (QUOTED, "cuda:cudaErrorNoKernelImageForDevice"),
])
def test_the_runtimes_text_after_a_programs_own_words_is_read(path, sid):
    read = [s for s in find_messages(path.read_text(encoding="utf-8")) if s["id"] == sid]
    assert len(read) == 1 and read[0].get("bare") is True, read


def test_forward_compatibility_on_a_geforce_is_answered(tmp_path):
    (f,) = fired("cuda-forward-compat-unsupported", _facts(tmp_path, FORWARD_COMPAT))
    assert "Error 804: forward compatibility" in f.message


@pytest.mark.parametrize("path", [LAUNCH_FAILED, QUOTED])
def test_a_native_programs_missing_arch_is_the_programs(tmp_path, path):
    facts = _facts(tmp_path, path)
    (f,) = fired("framework-missing-arch", facts)
    assert "the program's own GPU binary has no code for this GPU" in f.message
    findings, _not_judged = run_rule("torch-missing-arch", facts)
    assert not findings


def test_the_text_alone_beside_torch_is_not_called_a_native_binarys(tmp_path):
    # the same line in a paste that shows torch's import: whose kernel it was is not known
    text = LAUNCH_FAILED.read_text(encoding="utf-8") + (
        '\n  File "/opt/conda/lib/python3.10/site-packages/torch/__init__.py", line 229, in <module>\n')
    facts = paste_facts(tmp_path, text, "with-torch.txt")
    assert any(s["id"].startswith("torch:") for s in facts["facts"]["ticket"]["symptoms"])
    assert not fired("framework-missing-arch", facts)


def test_a_form_that_reads_the_line_leaves_it_to_that_form():
    line = "RuntimeError: CUDA error: no kernel image is available for execution on the device"
    read = [s for s in find_messages(line) if s["id"] == "cuda:cudaErrorNoKernelImageForDevice"]
    assert len(read) == 1 and "bare" not in read[0]


def test_hips_copy_of_the_text_is_left_to_hip():
    # hipGetErrorString prints CUDA's texts: a paste that names HIP or ROCm is not read as CUDA's
    text = "hipErrorNoBinaryForGpu: no kernel image is available for execution on the device\n"
    assert "cuda:cudaErrorNoKernelImageForDevice" not in _ids(text)
    text = "ROCm 6.1 on gfx1100\nlaunch failed: no kernel image is available for execution on the device\n"
    assert "cuda:cudaErrorNoKernelImageForDevice" not in _ids(text)


def test_a_longer_text_is_read_before_the_shorter_one_it_starts_with():
    ids = _ids("kernel check: unspecified launch failure in prior launch\n")
    assert "cuda:cudaErrorPriorLaunchFailure" in ids and "cuda:cudaErrorLaunchFailure" not in ids


def test_short_and_common_texts_are_not_read_alone():
    # "invalid argument", "out of memory" and "unknown error" are every program's words
    assert not [i for i in _ids("Error: invalid argument\nerror: out of memory\nunknown error\n") if i.startswith("cuda:")]


def test_every_bare_form_is_an_entrys_own_text():
    (cuda,) = messages.families(("cuda",))
    bare = [f for f in cuda.forms if f.bare]
    assert len(bare) > 80
    for form in bare:
        entry = cuda.by_key[form.entry]
        assert form.needle.lower() == str(entry.get("message")).rstrip(".").lower()
        assert form.pattern.search(f"x: {entry.get('message')}"), form.needle
    keys = {f.entry for f in bare}
    assert "cudaErrorNotYetImplemented" not in keys and "cudaErrorInvalidValue" not in keys
    assert {"cudaErrorInvalidDevice", "cudaErrorLaunchFailure"} <= keys



def test_hips_texts_alone_are_read_as_hips_where_the_paste_names_rocm():
    text = "ROCm 6.1 on gfx1100\nlaunch failed: no kernel image is available for execution on the device\n"
    read = [s for s in find_messages(text) if s["id"] == "hip:hipErrorNoBinaryForGpu"]
    assert len(read) == 1 and read[0].get("bare") is True
    # without HIP's or ROCm's name the same words are CUDA's
    assert "hip:hipErrorNoBinaryForGpu" not in _ids("launch failed: no kernel image is available for execution on the device\n")


def test_a_word_that_starts_with_hip_does_not_make_a_paste_amds():
    text = "the hipster's rig: launch failed: no kernel image is available for execution on the device\n"
    assert "cuda:cudaErrorNoKernelImageForDevice" in _ids(text)


def test_a_longer_text_read_once_is_not_read_again_as_the_shorter_one():
    # the longer message's entry is read on its first line; its repeats are not the shorter message
    text = "".join(f"kernel {n}: unspecified launch failure in prior launch\n" for n in range(3))
    ids = _ids(text)
    assert ids.count("cuda:cudaErrorPriorLaunchFailure") == 1 and "cuda:cudaErrorLaunchFailure" not in ids


# bash's own job-status line, a foreground job ended by a signal (jobs.c), and libstdc++'s what() line
# pasted alone (vterminate.cc): each is read, not refused as unreadable
@pytest.mark.parametrize("line, sid", [
    ("Killed", "signals:SIGKILL"),
    ("Terminated", "signals:SIGTERM"),
    ("Aborted (core dumped)", "signals:SIGABRT"),
    ("> Floating point exception (core dumped)", "signals:SIGFPE"),
])
def test_a_shells_bare_job_status_is_the_signal(line, sid):
    assert [s["id"] for s in find_messages(line + "\n")] == [sid]


def test_killed_inside_a_sentence_or_the_oom_killers_line_is_not_the_job_status():
    assert "signals:SIGKILL" not in [s["id"] for s in find_messages("The training got Killed after an hour\n")]
    assert "signals:SIGKILL" not in [s["id"] for s in find_messages("Out of memory: Killed process 19597 (python)\n")]


def test_the_terminate_handlers_what_line_alone_is_read():
    (s,) = find_messages("  what():  frobnication of the widget failed\n")
    assert (s["id"], s.get("form")) == ("errorlines:unlisted", "cxx-terminate-what")
    # a what() that holds a catalogued message stays that message's
    assert [t["id"] for t in find_messages("  what():  CUDA error: an illegal memory access was encountered\n")] == \
        ["cuda:cudaErrorIllegalAddress"]
