"""Symptoms in users' words that more projects' troubleshooting documents answer (Slurm's FAQ, NCCL's
troubleshooting guide, TensorFlow's and JAX's install and GPU pages, vLLM's troubleshooting page, Open
MPI's FAQ, accelerate's launch tutorial, PyTorch's FAQ): real public tickets are read, not refused, and
raise nothing, since each document gives several causes or no fact about the node; sentences with the
same words and another meaning (real titles and log lines too) are not read as the symptom."""

from __future__ import annotations

import pytest

from rulekit import _rules, paste_facts, recorded_paste_facts, run_rule

# Each recorded paste (tests/fixtures/pastes, SOURCES.md there) and the entry that must read it.
READ = [
    ("bcbio-vm-159-slurm-job-remains-pending.txt", "faq_slurm:slurm-job-pending-said"),
    ("open-clip-466-multinode-slower-than-single.txt", "faq_distributed:multinode-slower-said"),
    ("areal-639-nccl-socket-instead-of-infiniband.txt", "faq_distributed:nccl-socket-instead-of-ib-said"),
    ("tensorflow-22472-tensorflow-gpu-runs-only-on-cpu.txt", "faq_jax_tf:tf-not-using-gpu-said"),
    ("srnet-13-tensorflow-gpu-uses-cpu-zh.txt", "faq_jax_tf:tf-not-using-gpu-said-zh"),
    ("tensorflow-8021-list-devices-allocates-all-memory.txt", "faq_jax_tf:tf-takes-all-gpu-memory-said"),
    ("deeptangle-6-jax-not-picking-up-gpu.txt", "faq_jax_tf:jax-not-using-gpu-said"),
    ("jax-19267-jax-allocates-90-percent.txt", "faq_jax_tf:jax-preallocates-gpu-memory-said"),
    ("vllm-7303-hangs-after-model-load.txt", "faq_vllm:vllm-hangs-loading-said"),
    ("horovod-106-mpirun-hangs-no-output.txt", "faq_openmpi:mpirun-hangs-said"),
    ("yolov3-pruning-165-only-one-gpu-used-zh.txt", "faq_huggingface:only-one-gpu-used-said-zh"),
    ("tensorflow-23953-out-of-memory-after-3-epochs.txt", "faq_pytorch:oom-after-epochs-said"),
    ("backpacks-flash-attn-2-nvcc-nvidia-smi-differ.txt", "faq_nvidia:nvcc-nvidia-smi-cuda-differ-said"),
    ("llamafactory-6111-multinode-as-slow-as-one-zh.txt", "faq_distributed:multinode-slower-said-zh"),
]


def _symptoms(facts):
    return (facts["facts"].get("ticket") or {}).get("symptoms") or []


def _ids(facts):
    return {s["id"] for s in _symptoms(facts)}


def _alarms(facts):
    """Every finding above info that any rule raises on these facts."""
    out = []
    for symbol in _rules():
        found, _ = run_rule(symbol, facts)
        out += [(symbol, f.severity) for f in found if f.severity in ("error", "warning")]
    return out


@pytest.mark.parametrize("paste,entry", READ)
def test_a_ticket_in_words_is_read_as_the_documents_question(paste, entry):
    facts = recorded_paste_facts(paste)
    assert entry in _ids(facts), (paste, sorted(_ids(facts)))
    (read,) = [s for s in _symptoms(facts) if s["id"] == entry]
    assert not read.get("rules"), read   # several documented causes: the words feed no rule


@pytest.mark.parametrize("paste", ["bcbio-vm-159-slurm-job-remains-pending.txt",
                                   "jax-19267-jax-allocates-90-percent.txt",
                                   "areal-639-nccl-socket-instead-of-infiniband.txt"])
def test_the_words_alone_raise_nothing(paste):
    assert _alarms(recorded_paste_facts(paste)) == []


def test_a_hang_in_words_beside_an_exclude_list_without_loopback_is_that_list():
    # horovod#106's words raise nothing; its mpirun line's --mca btl_tcp_if_exclude without lo does
    # (NET014, Open MPI's TCP FAQ: the list replaces the default that excluded loopback)
    assert _alarms(recorded_paste_facts("horovod-106-mpirun-hangs-no-output.txt")) == [
        ("mpi-tcp-interface-unreachable", "warning")]


# The same words with another meaning, each a real public line: a wish, a negation, the opposite
# complaint, or a program's own message that another catalogue holds.
NOT_READ = [
    # a question about how to use one GPU, not a report that only one is used (OpenDriveLab/LaneSegNet#37)
    ("# How can I train and evaluate the model using only one GPU？\n", "faq_huggingface:only-one-gpu-used-said"),
    # the opposite wish (tensorflow/tensorflow#2175)
    ("# Can't run TensorFlow on CPU, defaults to GPU\n", "faq_jax_tf:tf-not-using-gpu-said"),
    # the opposite complaint about memory (tensorflow/tensorflow#56661)
    ("# TensorFlow doesn't use all available memory on NVIDIA GPU\n", "faq_jax_tf:tf-takes-all-gpu-memory-said"),
    # JAX's own warning: jax.toml's, not the words (plusmultiply/TAPS3D#3)
    ("WARNING:jax._src.lib.xla_bridge:No GPU/TPU found, falling back to CPU. "
     "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n", "faq_jax_tf:jax-not-using-gpu-said"),
    # jobs pending on a limit the user set, "totally ok" (vpenso/prometheus-slurm-exporter#91)
    ("It'd be nice to tell the difference between a cluster with 2000 jobs pending on deps or resources "
     "(might have a problem) vs 2000 jobs pending on JobArrayTaskLimit (totally ok)\n", "faq_slurm:slurm-job-pending-said"),
    # NCCL's own INFO line (areal-project/AReaL#639): nccl.toml's, not the words
    ("NCCL INFO NET/Socket : Using [0]bond0:200.8.184.2<0>\n", "faq_distributed:nccl-socket-instead-of-ib-said"),
    # a wish to use sockets (NVIDIA/nccl#676)
    ("# Cannot disable IB or force NCCL to use Socket network on DGX-A100\n", "faq_distributed:nccl-socket-instead-of-ib-said"),
]


@pytest.mark.parametrize("text,entry", NOT_READ)
def test_the_same_words_with_another_meaning_are_not_the_symptom(tmp_path, text, entry):
    from hpcdoctor.sysroot.replay import SnapshotError

    try:
        facts = paste_facts(tmp_path, text)
    except SnapshotError:   # nothing in it was read at all
        return
    assert entry not in _ids(facts), text


def test_negations_are_not_reports(tmp_path):
    # Hostile input: each entry's words inside a negation.
    from hpcdoctor.sysroot.replay import SnapshotError

    for text, entry in (("Multi-node training is not slower than single node for us.\n", "faq_distributed:multinode-slower-said"),
                        ("With the local disk vllm does not hang when loading the model.\n", "faq_vllm:vllm-hangs-loading-said"),
                        ("Use mpirun --timeout so that the job never hangs.\n", "faq_openmpi:mpirun-hangs-said"),
                        ("After the fix the job no longer stays pending.\n", "faq_slurm:slurm-job-pending-said")):
        try:
            facts = paste_facts(tmp_path, text)
        except SnapshotError:
            continue
        assert entry not in _ids(facts), text


def test_through_the_cli_a_pending_job_in_words_is_read_and_answered_without_findings(triage):
    from rulekit import PASTES

    run = triage(PASTES / "bcbio-vm-159-slurm-job-remains-pending.txt")
    assert run["rc"] == 0, run["stderr"]
    read = run["doc"]["source"]["recognised"]
    assert any("faq_slurm slurm-job-pending-said" in line for line in read), read
    assert not [f for f in run["doc"]["findings"] if f["severity"] in ("error", "warning")]


def test_module_not_working_in_a_job_script_is_lmods_usual_cause_at_info():
    # Lmod's FAQ names one cause: the script's shell never defined module (#!/bin/sh, BASH_ENV).
    from rulekit import fired

    facts = recorded_paste_facts("lmod-663-module-not-working-in-slurm-script.txt")
    assert "faq_lmod:module-not-working-in-script-said" in _ids(facts)
    (hit,) = fired("module-command-missing", facts)
    assert hit.severity == "info" and "usual cause (Lmod FAQ)" in hit.message
    assert "module command does not work in a SLURM job script" in hit.message
    assert hit.fix.startswith("head -1 JOB_SCRIPT")


def test_the_shells_own_refusal_wins_over_the_words(tmp_path):
    # The shell's line (shell.toml) states the fact: the rule's usual severity, not the FAQ's info.
    # Constructed from the two real lines (Lmod#663's title, envmodules/modules#339's slurm_script line).
    from rulekit import fired

    facts = paste_facts(tmp_path, "# module command does not work in a SLURM job script\n\n"
                                  "/var/spool/slurmd/job00156/slurm_script: line 4: module: command not found\n")
    (hit,) = fired("module-command-missing", facts)
    assert hit.severity == "error" and "usual cause" not in hit.message


def test_the_lmod_faqs_own_question_and_a_module_load_failure_are_not_the_words(tmp_path):
    from hpcdoctor.sysroot.replay import SnapshotError

    for text in ("Why doesn't the module command work in shell scripts?\n",   # the FAQ's own heading
                 "module load gcc does not work in my job script\n"):        # a module, not the command
        try:
            facts = paste_facts(tmp_path, text)
        except SnapshotError:
            continue
        assert "faq_lmod:module-not-working-in-script-said" not in _ids(facts), text
        assert not run_rule("module-command-missing", facts)[0], text


@pytest.mark.parametrize("line,entry", [
    # transformers' Troubleshoot page's own example, and a public thread's title (llava-hf discussion #21)
    ("ImportError: cannot import name 'ImageGPTImageProcessor' from 'transformers' (unknown location)\n",
     "faq_huggingface:transformers-cannot-import-name"),
    ("ImportError: cannot import name 'LlavaNextProcessor' from 'transformers'\n", "faq_huggingface:transformers-cannot-import-name"),
    # the page's own example of an AutoModel without that head
    ("ValueError: Unrecognized configuration class <class 'transformers.models.gpt2.configuration_gpt2.GPT2Config'> "
     "for this kind of AutoModel: AutoModelForQuestionAnswering.\n", "faq_huggingface:transformers-unrecognized-config-class"),
])
def test_transformers_troubleshooting_lines_are_read_and_raise_nothing(tmp_path, line, entry):
    facts = paste_facts(tmp_path, line)
    assert entry in _ids(facts)
    assert _alarms(facts) == []


def test_an_import_error_of_another_package_is_not_transformers(tmp_path):
    from hpcdoctor.sysroot.replay import SnapshotError

    try:   # numpy's own ImportError (numpy 2 removed names): not transformers' version question
        facts = paste_facts(tmp_path, "ImportError: cannot import name 'float_' from 'numpy'\n")
    except SnapshotError:
        return
    assert "faq_huggingface:transformers-cannot-import-name" not in _ids(facts)


@pytest.mark.parametrize("line,entry", [
    # public titles (vllm-project/vllm#17341, #13332)
    ("[Bug]: ValueError: Model architectures ['Qwen2ForCausalLM'] failed to be inspected. Please check the logs for more details.\n",
     "faq_vllm:vllm-model-failed-to-be-inspected"),
    ("[Bug]: ValueError: Model architectures ['LlamaForCausalLM'] failed to be inspected. Please check the logs for more details\n",
     "faq_vllm:vllm-model-failed-to-be-inspected"),
])
def test_vllms_troubleshooting_messages_are_read_and_raise_nothing(tmp_path, line, entry):
    facts = paste_facts(tmp_path, line)
    assert entry in _ids(facts)
    assert _alarms(facts) == []
