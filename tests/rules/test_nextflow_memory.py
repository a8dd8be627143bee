"""host-memory-insufficient (MEM007) on Nextflow's local executor refusing a task (nextflow.toml)."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule


def test_a_task_asking_more_memory_than_the_host_gives_is_capped_at_what_it_has():
    [hit] = fired("host-memory-insufficient", recorded_paste_facts("fa-nf-9-nextflow-requirement-exceeds-memory.txt"))
    assert "asks 24 GB" in hit.message and "gives 12 GB" in hit.message
    assert "process.resourceLimits = [memory: 12.GB]" in hit.fix


def test_the_cpus_refusal_is_read_but_is_no_memory_finding(tmp_path):
    # LocalPollingMonitor's own CPUs format, figures filled in by hand
    g = paste_facts(tmp_path, "Caused by:\n  Process requirement exceeds available CPUs -- req: 4; avail: 2\n")
    assert not run_rule("host-memory-insufficient", g)[0]   # not judged (no /proc/meminfo), no finding


def test_nextflows_other_executor_words_are_read_and_are_no_memory_finding(tmp_path):
    # nextflow-io/nextflow#1453's line and LocalPollingMonitor's accelerator format (figures filled in)
    g = paste_facts(tmp_path, "Caused by:\n  Process `SlideCov (TagX)` terminated for an unknown reason -- Likely it "
                              "has been terminated by the external system\n"
                              "Process requirement exceeds available accelerators -- req: 8; avail: 4\n")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"nextflow:terminated-unknown-reason", "nextflow:requirement-exceeds-accelerators"} <= ids
    assert not run_rule("host-memory-insufficient", g)[0]
