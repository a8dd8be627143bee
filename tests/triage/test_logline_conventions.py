"""Log-line conventions of the producers HPC users paste (errorlines.toml's loggers, MPI runtimes and
library banners; errno.toml's strerror texts retold in parentheses or without their hyphen),
replayed from public pastes: each line is read and quoted back as not in hpcdoctor's catalogue,
so the paste is answered instead of refused (issue 24), and no rule fires on a convention alone.
Where a specific family knows the line (openmpi.toml's MPI_ERRORS_ARE_FATAL block, mpich.toml's
"Fatal error in PMPI_..."), that family keeps it."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from
from hpcdoctor.knowledge import messages
from hpcdoctor.triage.messages import find_messages

PASTES = FIXTURES / "pastes"
SET_P = FIXTURES / "tickets_blind_p"
SET_N = FIXTURES / "tickets_blind_n"

# (paste, [(line, emitter the reply names)]); public text, verbatim (SOURCES.md, or the set's tickets.toml)
CASES = [
    (PASTES / "mpitutorial-95-openmpi-process-received-signal.txt",
     [(3, "Open MPI's report of a process killed by a signal")]),
    (PASTES / "ompi-9785-pmix-error-unreachable.txt",
     [(5, "an Open MPI runtime error log line (ORTE, PRRTE, PMIx, OPAL)")]),
    (PASTES / "prrte-24-orte-error-log.txt", [(1, "an Open MPI runtime error log line (ORTE, PRRTE, PMIx, OPAL)")]),
    (PASTES / "ray-31477-core-worker-and-raylet-log.txt",
     [(4, "a Ray C++ component's log line at level E or C (raylet, GCS, core worker)")]),
    (PASTES / "nextflow-4140-error-executing-process.txt", [(2, "a Nextflow error")]),
    (SET_P / "sst-core-895-cray-mpich-gtl-not-linked.txt",
     [(11, "an MPI job aborted through PMI (MPICH's PMI_Abort/PMI2_Abort)")]),
    (SET_N / "nextflow-383-slurm-memory-kill.txt",
     [(6, "a shell's report of a command killed by a signal (bash's job status line)")]),
]


@pytest.mark.parametrize("paste, quoted", CASES, ids=[c[0].stem for c in CASES])
def test_each_paste_is_answered_with_its_log_lines_quoted_back(paste, quoted):
    run = check_from(paste)
    assert run["rc"] != 2 and run["doc"] is not None, run["stderr"]
    said = run["doc"]["source"]["recognised"]
    for line, emitter in quoted:
        want = f"line {line}: {emitter}, not in hpcdoctor's catalogue: "
        assert any(want in r for r in said), (want, said)


@pytest.mark.parametrize("paste", [c[0] for c in CASES if c[0].parent == PASTES], ids=lambda p: p.stem)
def test_a_log_line_convention_fires_no_rule(paste):
    run = check_from(paste)
    assert [f["symbol"] for f in run["doc"]["findings"] if f["severity"] in ("error", "warning")] == []


def test_a_line_a_specific_family_reads_stays_that_familys():
    # Open MPI's MPI_ERRORS_ARE_FATAL block is openmpi.toml's entry, not the generic "*** An error occurred"
    text = (PASTES / "ompi-1530-openmpi-errors-are-fatal.txt").read_text(encoding="utf-8")
    got = {s["line"]: s["family"] for s in find_messages(text)}
    assert got.get(6) == "openmpi", got
    # Cray MPICH's "MPICH ERROR [Rank n] ... Abort(...): Fatal error in PMPI_Gatherv" is mpich.toml's class
    text = (PASTES / "diffbragg-reproducer-cray-mpich-abort.txt").read_text(encoding="utf-8")
    got = {s["line"]: s["id"] for s in find_messages(text)}
    assert got.get(6) == "mpich:MPI_ERR_OTHER", got
    # set P's Cray GTL abort and HDF5 version checks: cray_mpich.toml's and version_check.toml's entries
    text = (SET_P / "sst-core-895-cray-mpich-gtl-not-linked.txt").read_text(encoding="utf-8")
    assert {s["line"]: s["id"] for s in find_messages(text)}.get(8) == "cray_mpich:gtl-not-linked"
    for paste, line in (("dbscan-multiplex-7-hdf5-headers-library-mismatch", 1),
                        ("latfield2-4-hdf5-two-installs-include-vs-linker", 7),
                        ("openmeeg-363-hdf5-built-against-other-library", 6)):
        text = (SET_P / f"{paste}.txt").read_text(encoding="utf-8")
        got = {s["line"]: s["id"] for s in find_messages(text)}
        assert got.get(line) == "version_check:hdf5-version-mismatched", (paste, got)


def test_a_strerror_text_retold_without_its_hyphen_is_that_errno():
    # set P's title "failure at ms2pip (Read only file system)": EROFS, not a refusal
    text = (SET_P / "mhcquant-340-ms2pip-models-in-unwritable-home.txt").read_text(encoding="utf-8")
    got = [s["id"] for s in find_messages(text) if s["line"] == 1]
    assert got == ["errno:EROFS"], got
    errno = messages.families(("errno",))[0]
    for said in ("Read only file system", "read-only file system", "READ ONLY FILE SYSTEM"):
        assert errno.lookup("message", said).key == "EROFS", said
    assert errno.lookup("message", "Invalid cross device link").key == "EXDEV"
    # the hyphen is dropped, not the words: "Read only" alone names nothing
    assert errno.lookup("message", "Read only") is None


def test_the_parenthesised_text_must_be_the_whole_parenthesis():
    # a strerror text inside longer words in parentheses is not the errno's report
    for line in ("the run stopped (no space left on device was not the cause)",
                 "failure at ms2pip (Read only file system check skipped)"):
        assert [s for s in find_messages(line) if s["family"] == "errno"] == [], line


# Words of the new conventions out of place (written for the test, as hostile input is: the point is
# what must NOT be read).
PROSE = [
    "Killed it with kill -9 and restarted the job.",
    "Terminated after two hours, see the log below.",
    "Headers are installed in /usr/include, library is in /usr/lib64.",
    "BUG: the scheduler ignores my --mem request",
    "Nextflow printed ERROR ~ and nothing else, I think",
    "We see [ERROR]s from time to time but the job finishes.",
    "Sometimes MPICH ERROR [Rank is printed twice.",
    "loguru prints ERROR | for these lines",
]


@pytest.mark.parametrize("sentence", PROSE)
def test_prose_with_the_conventions_words_is_not_a_log_line(sentence):
    assert [s for s in find_messages(sentence) if s["family"] == "errorlines"] == []


def test_a_catalogued_message_again_with_other_numbers_is_not_called_unknown():
    # set I's openbabel#2658: the title and line 23 hold Slurm's "Step N exceeded memory limit (A > B)"
    # for two steps; oom.toml records its first match only, and the second must not be quoted back as
    # "not in hpcdoctor's catalogue" by the generic Slurm-log family
    path = next(FIXTURES.glob("tickets_blind_*/openbabel-2658-*.txt"))
    found = find_messages(path.read_text(encoding="utf-8"))
    assert any(s["id"] == "oom:slurm-step-exceeded-memory-limit" for s in found)
    assert not [s for s in found if s.get("unlisted") and "exceeded memory limit" in s.get("text", "")]
    # the same generic line with a message no entry holds is still quoted back
    other = find_messages("slurmstepd-falkor7: error: Step 1141810.0 exceeded a limit nobody catalogued\n")
    assert [s for s in other if s.get("unlisted")]


def test_a_spank_plugin_line_is_slurm_spanks_alone():
    # set AA's ArjunaUsers#212: "sbatch: error: spank: x11.so: Plugin file not found" is slurm_spank's
    # EPLUGIN_NOTFOUND; the Slurm client's catch-all line must not quote it back as unknown as well
    path = next(FIXTURES.glob("tickets_blind_*/arjunausers-212-*.txt"))
    found = [s for s in find_messages(path.read_text(encoding="utf-8")) if "spank: " in s.get("text", "")]
    assert found and all(not s.get("unlisted") for s in found)
    assert any(s["id"] == "slurm_spank:EPLUGIN_NOTFOUND" for s in found)


def test_sruns_exit_code_and_out_of_memory_lines_are_not_signal_texts():
    # set F's hafs#101: "srun: error: Orion-01-01: task 4: Out Of Memory" is oom.toml's ("task N: Exited with
    # exit code N" is slurm_job_end's): the signals family's srun form must not quote them back as unknown
    path = next(FIXTURES.glob("tickets_blind_*/hafs-101-*.txt"))
    found = find_messages(path.read_text(encoding="utf-8"))
    assert not [s for s in found if s["id"] == "signals:unlisted"]
    assert any(s["id"] == "oom:srun-task-out-of-memory" for s in found)
