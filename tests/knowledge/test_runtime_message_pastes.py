"""The OpenMP runtimes' (openmp.toml, threads.toml's libgomp) and MPICH's (mpich.toml) catalogues,
built from their emitters' message tables, on real public pastes (tests/fixtures/pastes, SOURCES.md
there): each message is read as its entry, whatever number the runtime release gave it, and a
healthy KMP_AFFINITY=verbose report is read as informational and fires no rule."""

from __future__ import annotations

import pytest

from rulekit import recorded_paste_facts
from hpcdoctor import engine
from hpcdoctor.facts import FactView
from hpcdoctor.triage.messages import find_messages
from conftest import FIXTURES

PASTES = FIXTURES / "pastes"


def _read(name):
    return find_messages((PASTES / name).read_text(encoding="utf-8"))


def _ids(found, family):
    return [s["id"] for s in found if s["family"] == family]


def _findings(name):
    rules, _ = engine.load_rules()
    g = recorded_paste_facts(name)
    findings, _ = engine.evaluate(rules, FactView(g["facts"], g["unknown"], None))
    return findings


def test_libgomp_places_outside_the_cpus_srun_gave():
    found = _read("rochpl-14-libgomp-places-outside-srun-cpus.txt")
    ids = _ids(found, "threads")
    assert ids[:4] == ["threads:libgomp-places-reduced", "threads:libgomp-cpu-out-of-range",
                       "threads:libgomp-invalid-env-value", "threads:libgomp-cpu-out-of-range"][:len(ids[:4])]
    assert {"threads:libgomp-places-reduced", "threads:libgomp-cpu-out-of-range", "threads:libgomp-invalid-env-value"} <= set(ids)
    reduced = next(s for s in found if s["id"] == "threads:libgomp-places-reduced")
    assert (reduced["before"], reduced["after"], reduced["cause"]) == ("61", "1", "configuration")
    assert next(s for s in found if s["id"] == "threads:libgomp-invalid-env-value")["variable"] == "OMP_PLACES"


def test_intel_openmp_ignoring_proc_ids_outside_the_job_and_its_display_affinity():
    found = _read("geoschem-614-omp-invalid-proc-id-under-slurm.txt")
    ids = _ids(found, "openmp")
    assert "openmp:omp-ignoring-invalid-proc-id" in ids and "openmp:omp-display-affinity" in ids
    shown = next(s for s in found if s["id"] == "openmp:omp-display-affinity")
    assert (shown["pid"], shown["thread"], shown["set"]) == ("35790", "0", "4")


def test_a_healthy_kmp_affinity_verbose_report_is_informational_and_fires_nothing():
    found = _read("tensorflow-29354-kmp-affinity-verbose-healthy.txt")
    ids = set(_ids(found, "openmp"))
    assert {"openmp:omp-aff-capable", "openmp:omp-aff-initial-proc-set", "openmp:omp-aff-available-procs",
            "openmp:omp-aff-uniform", "openmp:omp-aff-topology", "openmp:omp-aff-proc-map"} <= ids
    assert all(not s["rules"] for s in found if s["family"] == "openmp")
    assert _findings("tensorflow-29354-kmp-affinity-verbose-healthy.txt") == []


def test_a_deprecated_routine_is_read_whatever_number_the_release_gave_it():
    found = _read("fmscoupler-68-omp-set-nested-deprecated.txt")
    (s,) = [s for s in found if s["family"] == "openmp"]
    assert (s["id"], s["routine"], s["instead"]) == ("openmp:omp-routine-deprecated", "omp_set_nested", "omp_set_max_active_levels")
    assert _findings("fmscoupler-68-omp-set-nested-deprecated.txt") == []
    # the same message as numbered by other releases (titles of public issues: clang 9's libomp
    # https://github.com/souffle-lang/souffle/issues/1116, Intel 2023 https://github.com/ESCOMP/CAM/issues/1079)
    for line in ("OMP: Info #270: omp_set_nested routine deprecated, please use omp_set_max_active_levels instead.",
                 "OMP: Info #277: omp_set_nested routine deprecated, please use omp_set_max_active_levels instead."):
        assert _ids(find_messages(line), "openmp") == ["openmp:omp-routine-deprecated"]


def test_an_openmp_assertion_is_the_runtimes_own_and_its_hint_is_not_a_second_reading():
    found = _read("audiodvp-27-omp-assertion-after-fork.txt")
    (s,) = [s for s in found if s["family"] == "openmp"]
    assert (s["id"], s["file"], s["srcline"]) == ("openmp:omp-assertion-failure", "z_Linux_util.cpp", "2338")
    assert s["cause"] == "internal"


def test_mpich_fatal_error_is_read_as_its_error_class():
    found = _read("hypre-535-mpich-invalid-rank.txt")
    (s,) = [s for s in found if s["family"] == "mpich"]
    assert (s["id"], s["function"], s["code"]) == ("mpich:MPI_ERR_RANK", "PMPI_Irecv", 6)


def test_mpich_class_message_not_catalogued_is_quoted_as_unlisted():
    found = find_messages("Fatal error in PMPI_Foo: A message no MPICH release prints, error stack:\n")
    assert [s["id"] for s in found if s["family"] == "mpich"] == ["mpich:unlisted"]


@pytest.mark.parametrize("text", [
    "Out of heap memory.",                  # the runtime's words without its "OMP: Error #n: " prefix
    "Cannot create thread.",
    "Thread identifier invalid.",
    "Invalid value for environment variable OMP_NUM_THREADS",   # libgomp's words without "libgomp: "
    "OMP: pid 1 tid 2 thread 3 bound to OS proc set",           # cut before the set
    'Cannot open file "input.dat" for reading:',                # many programs' words; the runtime prefixes its own
    "Assertion failure at solver.cpp(120).",                    # not a file of the OpenMP runtime
])
def test_generic_words_without_the_emitters_prefix_are_not_its_message(text):
    assert _ids(find_messages(text + "\n"), "openmp") == [] and _ids(find_messages(text + "\n"), "threads") == []


def test_fatal_error_of_something_other_than_an_mpi_function_is_not_mpich():
    # Python's Windows launcher (pip.exe) and a program's own words
    for text in ("Fatal error in launcher: Unable to create process using '\"c:\\python39\\python.exe\"'",
                 "Fatal error in main loop: bad input, error stack: none"):
        assert _ids(find_messages(text + "\n"), "mpich") == []


def test_json_lines_with_quoted_keys_are_not_openmp_size_warnings():
    text = '{"OMP_STACKSIZE": "16M", "size": "value too large"}\n' * 3
    assert _ids(find_messages(text), "openmp") == []


def _fired(name, symbol):
    return [f for f in _findings(name) if f.symbol == symbol]


def test_hdf5_110_locking_disabled_wording_is_the_unsupported_lock():
    found = _read("yank-855-hdf5-110-locking-disabled-enosys.txt")
    ids = _ids(found, "hdf5")
    assert ids[0] == "hdf5:hdf5-diag" and "hdf5:lock-disabled-enosys" in ids
    assert {"hdf5:H5E_FILE", "hdf5:H5E_CANTOPENFILE", "hdf5:H5E_VFL", "hdf5:H5E_CANTUPDATE", "hdf5:H5E_BADFILE"} <= set(ids)
    assert next(s for s in found if s["id"] == "hdf5:hdf5-diag")["version"] == "1.10.1"
    (f,) = _fired("yank-855-hdf5-110-locking-disabled-enosys.txt", "hdf5-file-locking")
    assert f.severity == "error" and "HDF5_USE_FILE_LOCKING" in (f.fix or "") + f.message


def test_hdf5_114_stack_with_a_held_lock_reads_every_frame_class_and_stays_a_held_lock():
    found = _read("ed2-400-hdf5-114-lock-held-errno-11.txt")
    ids = set(_ids(found, "hdf5"))
    assert {"hdf5:hdf5-diag", "hdf5:lock-held-eagain", "hdf5:H5E_FILE", "hdf5:minor-unable-to-lock-file",
            "hdf5:H5E_CANTOPENFILE", "hdf5:major-virtual-object-layer", "hdf5:H5E_CANTOPENOBJ"} <= ids
    (f,) = _fired("ed2-400-hdf5-114-lock-held-errno-11.txt", "hdf5-file-locking")
    assert f.severity == "warning"


def test_the_words_major_and_minor_elsewhere_are_not_hdf5():
    text = "Python version major: 3\nminor: 11\nThe dataset has major: Dataset issues\n"
    assert _ids(find_messages(text), "hdf5") == []


def test_mpich_init_failure_is_read_down_to_the_stack_line_that_names_the_node():
    found = _read("amica-11-mpich-gethostbyname-failed.txt")
    assert _ids(found, "mpich") == ["mpich:MPI_ERR_OTHER", "mpich:ch3-channel-init-failed", "mpich:gethostbyname-failed"]
    assert next(s for s in found if s["id"] == "mpich:gethostbyname-failed")["cause"] == "environment"


def test_an_mpich_stack_message_in_prose_is_not_the_stack_line():
    text = "I think the gethostbyname failed and the channel initialization failed on my laptop\n"
    assert _ids(find_messages(text), "mpich") == []


def test_intel_mpi_2019_ofi_failure_is_the_mpich_class_and_intels_network_line():
    found = _read("qmcpack-1158-intel-mpi-2019-ofi-addrinfo.txt")
    assert _ids(found, "mpich") == ["mpich:MPI_ERR_OTHER"]
    (s,) = [s for s in found if s["family"] == "intel_mpi"]
    assert (s["id"], s["error"], s["srcline"]) == ("intel_mpi:ofi-addrinfo-failed", "No data available", "689")


def test_intel_mpi_launcher_that_cannot_start_its_proxies():
    found = _read("azhop-906-intel-mpi-bstrap-proxy.txt")
    assert _ids(found, "intel_mpi") == ["intel_mpi:bstrap-proxy-failed", "intel_mpi:bstrap-setup-error"]
    proxy = next(s for s in found if s["id"] == "intel_mpi:bstrap-proxy-failed")
    assert (proxy["host"], proxy["exitcode"]) == ("hb120v3-3.internal.cloudapp.net", "256")
