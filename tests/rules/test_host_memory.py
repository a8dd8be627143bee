"""host-memory-insufficient (rules/host_memory.py): memory refused in the emitter's words, on real
public pastes (tests/fixtures/pastes, SOURCES.md there) and the emitters' format strings; the live
judgement on the commit accounting as checks/memory.py records it."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts, run_rule, told_facts

MIB = 2 ** 20


@pytest.mark.parametrize("paste,mib", [("cantaloupe-119-jvm-commit-memory-enomem.txt", 122),
                                       ("scylladb-2641-java-version-cannot-commit-heap.txt", 320)])
def test_the_jvm_that_cannot_commit_its_heap(paste, mib):
    (f,) = fired("host-memory-insufficient", recorded_paste_facts(paste))
    assert f.severity == "warning" and f"({mib} MiB asked)" in f.message and "line 6" in f.message
    assert "-Xmx" in f.fix and "/proc/meminfo" in f.fix


@pytest.mark.parametrize("text", ["-bash: fork: Cannot allocate memory\n",   # bash's sys_error with strerror(ENOMEM)
                                  "runtime: failed to create new OS thread (have 9 already; errno=12)\n"])  # Go's newosproc
def test_fork_and_clone_refused_for_memory(tmp_path, text):
    (f,) = fired("host-memory-insufficient", paste_facts(tmp_path, text))
    assert f.severity == "error" and "ENOMEM" in f.message and "not the process limit" in f.message


def test_go_fork_exec_refused_for_memory():
    (f,) = fired("host-memory-insufficient", recorded_paste_facts("moby-10917-fork-exec-enomem.txt"))
    assert f.severity == "error" and "line 1" in f.message and "fragmented" in f.message


def test_go_fork_exec_eagain_is_a_task_count(tmp_path):
    g = paste_facts(tmp_path, "fork/exec /usr/bin/nvidia-container-cli: resource temporarily unavailable\n")
    (f,) = fired("nproc-limit-too-low", g)
    assert f.severity == "error"
    findings, _ = run_rule("host-memory-insufficient", g)
    assert findings == []


def test_a_process_limit_is_not_memory(tmp_path):
    g = paste_facts(tmp_path, "runtime: failed to create new OS thread (have 13 already; errno=11)\n")
    findings, _ = run_rule("host-memory-insufficient", g)
    assert findings == [] and fired("nproc-limit-too-low", g)[0].severity == "error"


def test_a_bare_thread_refusal_names_both_causes_and_claims_neither():
    # sbws-195: the reporter found the host short of RAM, but the line alone cannot say so
    g = recorded_paste_facts("sbws-195-thread-start-fails-low-ram.txt")
    findings, _ = run_rule("host-memory-insufficient", g)
    assert findings == []
    (f,) = fired("nproc-limit-too-low", g)
    assert f.severity == "info" and "memory" in f.message and "overcommit_memory" in f.fix


@pytest.mark.parametrize("corpus,name", [("tickets_blind_j", "numpy-17595-meshgrid-201gib-array-healthy"),
                                         ("tickets_blind_j", "single-cell-tutorial-85-926gib-dense-matrix-healthy")])
def test_an_array_too_big_for_any_node_is_the_programs_not_the_hosts(tmp_path, corpus, name):
    from pathlib import Path
    paste = Path(__file__).resolve().parent.parent / "fixtures" / corpus / f"{name}.txt"
    findings, _ = run_rule("host-memory-insufficient", paste_facts(tmp_path, paste.read_text()))
    assert findings == []


def _live(mode, limit, committed, stack=8 * MIB):
    return facts("cpu-kvm-2core", **{"memory.overcommit_memory": mode, "memory.commit_limit_bytes": limit,
                                     "memory.committed_as_bytes": committed, "limits.stack": {"soft": stack, "hard": None}})


def test_live_strict_overcommit_with_no_room_for_a_stack():
    (f,) = fired("host-memory-insufficient", _live(2, 4000 * MIB, 3996 * MIB))
    assert f.severity == "error" and "4 MiB left to commit" in f.message and "ulimit -s: 8 MiB" in f.message


@pytest.mark.parametrize("mode,committed", [(2, 3000 * MIB), (0, 9000 * MIB), (1, 9000 * MIB)])
def test_live_room_left_or_heuristic_overcommit_says_nothing(mode, committed):
    assert not fired("host-memory-insufficient", _live(mode, 4000 * MIB, committed))


def test_live_overcommit_mode_unknown_is_skipped_not_passed():
    from hpcdoctor.facts import Unknown
    g = facts("cpu-kvm-2core")
    g["facts"]["memory"]["overcommit_memory"] = Unknown("/proc/sys/vm/overcommit_memory unreadable")
    g["unknown"]["memory.overcommit_memory"] = "/proc/sys/vm/overcommit_memory unreadable"
    findings, skipped = run_rule("host-memory-insufficient", g)
    assert findings == [] and skipped


# Language runtimes' own words that an allocation failed (knowledge/messages/runtime_memory.toml): a
# warning that says the words do not tell which limit refused it, with the commands that do.
@pytest.mark.parametrize("paste", ["oom-recorded-cxx.txt", "oom-recorded-python.txt", "oom-recorded-numpy.txt",
                                   "oom-recorded-bash.txt", "numpy-keypointfusion-3-array-memory-error.txt"])
def test_a_runtime_refused_memory_is_a_warning_that_says_how_to_tell(paste):
    (f,) = fired("host-memory-insufficient", recorded_paste_facts(paste))
    assert f.severity == "warning" and "does not say which limit" in f.message
    assert "ulimit -v" in f.fix and "free -g" in f.fix and "MaxRSS" in f.fix


def test_r_cannot_allocate_vector_blind_v(tmp_path):
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_v" / "cellid-7-r-vector-exceeds-ram.txt").read_text()
    (f,) = fired("host-memory-insufficient", paste_facts(tmp_path, text))
    assert f.severity == "warning" and "(4.5 Gb asked)" in f.message


def test_octaves_bad_alloc_is_info(tmp_path):
    # gnu-octave/octave libinterp/parse-tree/pt-eval.cc, the message filled in
    (f,) = fired("host-memory-insufficient", paste_facts(tmp_path, "error: out of memory or dimension too large for Octave's index type\n"))
    assert f.severity == "info" and "index type" in f.message


@pytest.mark.parametrize("text", [
    "Error: vector memory exhausted (limit reached?)\n",   # R's own R_MAX_VSIZE ceiling
    "cannot allocate memory block of size 67108864 Tb\n",   # R_alloc past 4096 TB: a size computed wrongly
    'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space\n',   # the JVM's -Xmx, recorded on the development VM
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n",   # the GPU's memory
    "numpy.core._exceptions._ArrayMemoryError\n",   # a title naming the class, no allocation
])
def test_runtime_ceilings_and_other_memories_are_not_the_host(tmp_path, text):
    findings, _ = run_rule("host-memory-insufficient", paste_facts(tmp_path, text))
    assert findings == []   # not fired("host-memory-insufficient"


# torch's own host allocator (torch.toml cpu-alloc-failed): posix_memalign's ENOMEM for a 1.1 GiB
# tensor is the host's memory, at a warning like the other runtimes' words; the 1 PiB asked by the
# recorded torch.empty(2**50) is the program's own request, not the node's.
def test_torchs_cpu_allocator_refused_memory_is_a_warning():
    (f,) = fired("host-memory-insufficient", recorded_paste_facts("torch-cpu-allocator-enomem-fang.txt"))
    assert f.severity == "warning" and "1.10 GiB asked" in f.message and "does not say which limit" in f.message
    assert "ulimit -v" in f.fix and "free -g" in f.fix


def test_torchs_cpu_allocator_asked_a_petabyte_is_the_programs_own():
    findings, _ = run_rule("host-memory-insufficient", recorded_paste_facts("torch-2.13-cpu-alloc-enomem.txt"))
    assert findings == []   # not fired("host-memory-insufficient" on a request no node holds
def test_condas_own_out_of_memory_is_an_allocation_refused_at_a_warning():
    (f,) = fired("host-memory-insufficient", recorded_paste_facts("conda-10751-conda-memory-error.txt"))
    assert f.severity == "warning" and "does not say which limit" in f.message and "free -g" in f.fix


def test_libgomps_failed_allocation_is_answered_and_an_absurd_one_is_the_programs():
    # libgomp.so.1 (GCC 12) "libgomp: Out of memory allocating %lu bytes" filled in: no public paste recorded
    (f,) = fired("host-memory-insufficient", told_facts("libgomp: Out of memory allocating 1073741824 bytes\n"))
    assert f.severity == "warning" and "1024 MiB asked" in f.message
    # 2 TiB: past what any node gives (thresholds.toml runtime_allocation): the program's own request
    findings, _skipped = run_rule("host-memory-insufficient", told_facts("libgomp: Out of memory allocating 2199023255552 bytes\n"))
    assert not findings


# Apple's libmalloc (knowledge/messages/libmalloc.toml), on real macOS pastes: a modest region refused
# by mach_vm_map (462 MiB, nw.js) is memory, at a warning with its size; a 128 TiB or 200 TB request is
# the program's own, and so is the bare MemoryError or std::bad_alloc the language reports for it
# right after; heap corruption found by libmalloc is the program's and never memory.
def test_libmallocs_modest_refused_region_is_memory():
    (f,) = fired("host-memory-insufficient", recorded_paste_facts("libmalloc-nwjs-1216-mach-vm-map-484mb.txt"))
    assert f.severity == "warning" and "462 MiB asked" in f.message and "line 1" in f.message


@pytest.mark.parametrize("paste", ["libmalloc-pandas-8525-200tb-memoryerror.txt",     # then CPython's MemoryError
                                   "libmalloc-commandcenter-93-128tib-region.txt"])  # the flags form, then bad_alloc
def test_libmallocs_region_beyond_any_node_and_the_memoryerror_after_it_are_the_programs(paste):
    findings, _ = run_rule("host-memory-insufficient", recorded_paste_facts(paste))
    assert findings == []   # not fired("host-memory-insufficient" on a request no node holds, nor its MemoryError


def test_a_bare_memoryerror_before_or_without_a_huge_request_still_counts(tmp_path):
    (f,) = fired("host-memory-insufficient", paste_facts(tmp_path, "Traceback (most recent call last):\nMemoryError\n"))
    assert f.severity == "warning"
    # the MemoryError comes first: the later 200 TB request does not explain it away
    text = ("MemoryError\n" + "x\n" * 3
            + "python(86000,0x7fff7a7aa310) malloc: *** mach_vm_map(size=200447690256384) failed (error code=3)\n"
              "*** error: can't allocate region\n")   # libmalloc-53 .. 140's szone_error format, filled in
    (f,) = fired("host-memory-insufficient", paste_facts(tmp_path, text))
    assert "line 1" in f.message


def test_libmallocs_heap_corruption_is_not_memory():
    findings, _ = run_rule("host-memory-insufficient", recorded_paste_facts("libmalloc-lsd2-13-incorrect-checksum.txt"))
    assert findings == []   # not fired("host-memory-insufficient" on a use after free
