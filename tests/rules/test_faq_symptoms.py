"""Symptoms told in users' words that the projects' own FAQ and troubleshooting pages answer
(knowledge/messages/faq_*.toml): read, and answered at severity info with the documented usual
cause where the document names one (GPU011, THR007, MEM006); never above info from words alone."""

from __future__ import annotations

from rulekit import PASTES, fired, recorded_paste_facts, run_rule

from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.triage.paste import open_paste


def _symptoms(facts):
    return (facts["facts"].get("ticket") or {}).get("symptoms") or []


def _ids(facts):
    return {s["id"] for s in _symptoms(facts)}


def test_low_fluctuating_gpu_util_is_the_tuning_guides_data_loading_at_info():
    facts = recorded_paste_facts("preview-5-low-fluctuating-gpu-util-data-loading.txt")
    (hit,) = fired("dataloader-workers", facts)
    assert hit.severity == "info"
    assert "usual cause (PyTorch Performance Tuning Guide)" in hit.message and "fluctuant" in hit.message
    assert "num_workers=N" in hit.fix and hit.fix.startswith("pip install py-spy && py-spy dump")


def test_a_printed_worker_warning_wins_over_the_users_words():
    # Lightning's "does not have many workers" is a program's own report: its warning, not the words.
    facts = recorded_paste_facts("nemo-speech-1204-gpu-util-zero-few-loader-workers.txt")
    assert "faq_pytorch:gpu-utilization-low" in _ids(facts)
    (hit,) = fired("dataloader-workers", facts)
    assert hit.severity == "warning" and "fewer than 2 workers" in hit.message


def test_memory_kept_after_python_quits_is_the_faqs_leftover_subprocesses_at_info():
    facts = recorded_paste_facts("pytorch-faq-gpu-memory-not-freed.txt")
    assert {"faq_pytorch:gpu-memory-not-freed", "faq_pytorch:gpu-memory-kept-after-exit"} <= _ids(facts)
    (hit,) = fired("gpu-memory-in-use", facts)
    assert hit.severity == "info" and "usual cause (PyTorch FAQ)" in hit.message
    assert hit.fix.startswith("fuser -v /dev/nvidia*")


def _first_lines(name, n, tmp_path):
    path = tmp_path / name
    path.write_text("\n".join((PASTES / name).read_text(encoding="utf-8").splitlines()[:n]) + "\n", encoding="utf-8")
    with open_paste([str(path)]) as (root, _recognised, _notes):
        return pipeline.gather(root, Options())


def test_memory_not_freed_alone_feeds_no_rule(tmp_path):
    # The FAQ's question alone has two causes (the caching allocator, leftover subprocesses): read only.
    facts = _first_lines("pytorch-faq-gpu-memory-not-freed.txt", 6, tmp_path)
    assert "faq_pytorch:gpu-memory-not-freed" in _ids(facts)
    assert "faq_pytorch:gpu-memory-kept-after-exit" not in _ids(facts)
    findings, _skipped = run_rule("gpu-memory-in-use", facts)
    assert findings == []


def test_killed_while_loading_a_model_is_host_memory_at_info():
    for paste in ("cpm-bee-92-loading-model-killed.txt", "langchain-chatchat-35-checkpoint-killed-zh-title.txt"):
        (hit,) = fired("host-memory-oom-killed", recorded_paste_facts(paste))
        assert hit.severity == "info", paste
        assert "usual cause (accelerate's big-model guide) is host memory" in hit.message, paste
        assert hit.fix.startswith("journalctl -k | grep -iE"), paste


def test_a_hang_in_words_is_read_and_judged_by_nothing():
    facts = recorded_paste_facts("nccl-238-hang-socket-recv-nccl-242.txt")
    assert "faq_distributed:distributed-hang" in _ids(facts)
    assert not [s for s in _symptoms(facts) if s["id"].startswith("faq_") and s.get("rules")]


def test_a_torch_version_with_the_cpu_tag_is_the_cpu_build():
    facts = recorded_paste_facts("sdnext-1424-torch-cpu-after-upgrade.txt")
    (hit,) = fired("torch-cpu-only", facts)
    assert "torch 2.0.1+cpu is PyTorch's CPU-only wheel" in hit.message and "asked it for CUDA" not in hit.message
    assert hit.severity == "warning"   # the tag states the build: the rule's usual severity, not info
    assert hit.fix.startswith("python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'")


def _words_alone():
    from hpcdoctor.knowledge import messages

    # The symptom families, whose causes the documents infer. faq_nvidia, faq_containers, faq_rocm
    # and faq_slurm hold programs' own lines and users' statements of the fact itself ("the node
    # came up short a GPU"), answered at the rule's usual severity.
    for fam in messages.families(("faq_distributed", "faq_huggingface", "faq_jax_tf", "faq_pytorch")):
        for entry in fam.entries:
            if entry.get("rules") and entry.get("example") and entry.key != "torch-version-cpu-tag":
                yield entry


def test_words_alone_never_raise_more_than_info(tmp_path):
    # Every FAQ entry that feeds a rule, pasted as its own example: the rule answers at info, unless
    # a program's own line in the same example feeds that rule too (then the printed line wins).
    checked = 0
    for entry in _words_alone():
        path = tmp_path / f"{entry.key}.txt"
        path.write_text(str(entry.get("example")) + "\n", encoding="utf-8")
        with open_paste([str(path)]) as (root, _recognised, _notes):
            facts = pipeline.gather(root, Options())
        for symbol in entry.get("rules"):
            others = [s for s in _symptoms(facts) if symbol in (s.get("rules") or []) and not s["id"].startswith("faq_")]
            findings, _skipped = run_rule(symbol, facts)
            if others:
                continue
            assert [f.severity for f in findings] == ["info"], (entry.id, symbol, findings)
            checked += 1
    assert checked >= 5
