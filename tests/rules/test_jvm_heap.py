"""jvm-heap-exhausted: java.lang.OutOfMemoryError's heap details in real pastes (Picard in a
pipeline and alone), and the other details that are not the heap's (knowledge/messages/jvm_oom.toml)."""

from __future__ import annotations

from rulekit import fired, recorded_paste_facts, run_rule, told_facts



def test_picards_heap_space_names_the_heap_it_had():
    (f,) = fired("jvm-heap-exhausted", recorded_paste_facts("picard-1221-markduplicates-java-heap-space.txt"))
    assert f.severity == "warning" and "line 5" in f.message and "0.89 GiB (line 3)" in f.message
    assert 'export _JAVA_OPTIONS="-Xmx12g"' in f.fix and "gatk --java-options" in f.fix


def test_gc_overhead_limit_is_the_heap_too():
    (f,) = fired("jvm-heap-exhausted", recorded_paste_facts("nf-core-methylseq-45-picard-gc-overhead-java-options.txt"))
    assert "GC overhead limit exceeded" in f.message


def test_metaspace_array_size_and_a_heap_size_alone_are_not_the_heap():
    for text in ("java.lang.OutOfMemoryError: Metaspace\n",
                 "Exception in thread \"main\" java.lang.OutOfMemoryError: Requested array size exceeds VM limit\n",
                 "Runtime.totalMemory()=954728448\n"):
        facts = told_facts(text)
        assert run_rule("jvm-heap-exhausted", facts)[0] == [], text
        assert not fired("jvm-heap-exhausted", facts)
