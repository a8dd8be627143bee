"""perf-event-paranoid-restricts-counters on public pastes (tests/fixtures/pastes, SOURCES.md there)
and the node's /proc/sys/kernel/perf_event_paranoid, which is a fact and never a finding alone."""

from __future__ import annotations

import pytest

from rulekit import file_facts, facts, fired, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages



def test_prof_h_refused_is_an_error_with_the_user_space_only_fix():
    (f,) = fired("perf-event-paranoid-restricts-counters", recorded_paste_facts("prof-1-perf-event-paranoid-blocks-counters.txt"))
    assert f.severity == "error" and "PROF error (Permission denied)" in f.message
    assert f.fix.startswith("cat /proc/sys/kernel/perf_event_paranoid") and "PROF_USER_EVENTS_ONLY" in f.fix


def test_perfs_older_refusal_names_perfs_level_not_its_advice():
    # the paste ends with perf's own example "kernel.perf_event_paranoid = -1": the level in force is 3
    (f,) = fired("perf-event-paranoid-restricts-counters", recorded_paste_facts("c-cpp-tutorial-perf-record-paranoid-3.txt"))
    assert f.severity == "error" and "kernel.perf_event_paranoid is 3, which refuses every performance event" in f.message
    assert f.evidence["perf_event_paranoid"] == 3


def test_a_user_stating_level_2_is_info():
    (f,) = fired("perf-event-paranoid-restricts-counters", recorded_paste_facts("likwid-459-perf-event-paranoid-blocks-uncore-events.txt"))
    assert f.severity == "info" and "kernel.perf_event_paranoid = 2" in f.message and "CPU-wide events" in f.message


def test_perfs_and_likwids_current_formats():
    # evsel__open_strerror's lines and LIKWID's perfmon_init_perfevent, the formats filled in
    text = ("Error:\nAccess to performance monitoring and observability operations is limited.\n"
            "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open\n"
            "perf_event_paranoid setting is 4:\n")
    (f,) = fired("perf-event-paranoid-restricts-counters", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert "is 4, which refuses every performance event" in f.message
    text = "Cannot use performance monitoring with perf_event_paranoid = 3\n"
    (f,) = fired("perf-event-paranoid-restricts-counters", facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)}))
    assert f.severity == "error" and "is 3" in f.message


def _node(tmp_path, level):
    return file_facts(tmp_path, {"/proc/sys/kernel/perf_event_paranoid": f"{level}\n"})


@pytest.mark.parametrize("level", [-1, 2, 4])
def test_on_the_node_the_level_is_a_fact_and_no_finding(tmp_path, level):
    g = _node(tmp_path, level)
    assert g["facts"]["system"]["perf_event_paranoid"] == level
    assert not fired("perf-event-paranoid-restricts-counters", g)


def test_unreadable_is_unknown_not_a_level():
    g = facts("h100-kvm-1gpu")
    assert not isinstance(g["facts"].get("system", {}).get("perf_event_paranoid"), int)


@pytest.mark.parametrize("paste", ["ndsl-184-mpi4py-suspicious-mpiexec.txt", "gcc-12-python-h-missing.txt",
                                   "studio-lab-examples-45-libgthread-missing-cv2.txt"])
def test_silent_without_a_counter_tools_refusal(paste):
    assert not fired("perf-event-paranoid-restricts-counters", recorded_paste_facts(paste))


def test_uprofs_event_limit_names_the_level_and_its_limit():
    # sinkovit/profiling-tutorial#1: AMDuProfCLI collect --config data_access, wrapped over two lines
    (f,) = fired("perf-event-paranoid-restricts-counters", recorded_paste_facts("profiling-tutorial-1-uprof-paranoid-event-limit.txt"))
    assert f.severity == "error" and "perf_event_paranoid value greater than -1" in f.message
    assert "at most 6 events together" in f.message and f.fix.startswith("cat /proc/sys/kernel/perf_event_paranoid")


def test_rrs_check_names_the_level_it_read():
    (f,) = fired("perf-event-paranoid-restricts-counters", recorded_paste_facts("rr-2835-needs-perf-event-paranoid-1.txt"))
    assert f.severity == "error" and "kernel.perf_event_paranoid is 2" in f.message and f.evidence["perf_event_paranoid"] == 2
