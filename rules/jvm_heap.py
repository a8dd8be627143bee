"""A Java program that used up its heap (knowledge/messages/jvm_oom.toml): the JVM's -Xmx, or its
default of a quarter of the memory it sees, is smaller than the work needs. Native memory the JVM
cannot get is host-memory-insufficient's; threads it cannot start, nproc-limit-too-low's."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_symptoms, told_evidence, told_text

SYMBOL = "jvm-heap-exhausted"
_HEAP_FULL = ("jvm_oom:java-heap-space", "jvm_oom:gc-overhead-limit")

_FIX = ("java -XX:+PrintFlagsFinal -version 2>/dev/null | grep -E ' (MaxHeapSize|MaxRAMPercentage) '   # the heap a JVM "
        "started here takes when no -Xmx is given (bytes)\n"
        "export _JAVA_OPTIONS=\"-Xmx12g\"   # every JVM the job starts reads it (and prints 'Picked up _JAVA_OPTIONS'): "
        "size it a few GB below the job's memory request (sbatch --mem), not above\n"
        "# or the tool's own way, which wins over _JAVA_OPTIONS: gatk --java-options \"-Xmx12g\", the bioconda wrappers "
        "(picard, fastqc, trimmomatic ...) take -Xmx12g as their first argument, Nextflow's own JVM: NXF_OPTS=\"-Xmx4g\"")


@rule("MEM009", SYMBOL, "warning", "a Java program ran out of its heap (-Xmx, or the JVM's default)", impact=5)
def jvm_heap_exhausted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, java.lang.OutOfMemoryError with the detail "Java heap space" or "GC
        overhead limit exceeded": the Java heap is full of live objects. Where Picard's
        "Runtime.totalMemory()=N" is beside it, the heap the JVM had is named.

    Why it matters:
        The JVM's heap is capped by -Xmx, or by default by a quarter of the memory the JVM sees,
        and the wrappers of many tools set a small -Xmx of their own (bioconda's picard: 1 GB): a
        job that asked the scheduler for 64 GB can still die with a 1 GB heap. A larger heap, not
        a larger node, is the usual fix; a program that leaks fills any heap.

    How to fix:
        Give the JVM a heap that fits the work and the job's memory request (-Xmx, through the
        tool's own option or _JAVA_OPTIONS), a few GB below the request to leave room for the
        JVM's native memory.

    References:
        - https://docs.oracle.com/javase/8/docs/technotes/guides/troubleshoot/memleaks002.html
        - https://docs.oracle.com/en/java/javase/17/gctuning/ergonomics.html (default maximum heap: 1/4 of physical memory)
        - https://github.com/nf-core/methylseq/issues/45 (Picard's GC overhead limit, fixed with _JAVA_OPTIONS=-Xmx200g)
        - https://github.com/MonashBioinformaticsPlatform/RNAsik-pipe/issues/36 (bioconda's picard wrapper: -Xmx1g by default)
    """
    s = next((t for t in catalogued(f, SYMBOL) if t.get("id") in _HEAP_FULL), None)
    if s is None:
        return
    heap = ""
    total = ticket_symptoms(f).get("jvm_oom:picard-runtime-total-memory")
    if total is not None and str(total.get("bytes", "")).isdigit():
        heap = f"; the JVM's heap had grown to {int(total['bytes']) / 2**30:.2f} GiB (line {total.get('line')})"
    yield Hit(message=(f"the Java program used up its heap (line {s.get('line')}: \"{told_text(s)}\"){heap}: its -Xmx, or "
                       "the JVM's default of a quarter of the memory it sees, is smaller than the work needs"),
              fix=_FIX, evidence=told_evidence(s))

