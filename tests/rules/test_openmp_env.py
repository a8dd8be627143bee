"""omp-env-invalid on real pastes (set U, tests/fixtures/pastes/SOURCES.md): libgomp refusing OMP_DYNAMIC
and OMP_PLACES, numexpr's int() meeting an OpenMP list in OMP_NUM_THREADS (its thread's log and the same
line run on the development VM), libomp's value messages; silent on int() of a variable that is no
thread count."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, told_facts, told_paste_facts

SET_U = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_u"


def test_libgomp_refusing_omp_dynamic_names_what_it_accepts(tmp_path):
    (f,) = fired("omp-env-invalid", paste_facts(tmp_path, (SET_U / "steps-10-invalid-omp-dynamic-value.txt").read_text()))
    assert f.severity == "error" and "GNU libgomp refused OMP_DYNAMIC" in f.message and "true or false" in f.message
    assert "export OMP_DYNAMIC=false" in f.fix


def test_libgomp_refusing_omp_places_in_another_thread():
    (f,) = fired("omp-env-invalid", told_paste_facts("rochpl-14-libgomp-places-outside-srun-cpus.txt"))
    assert "OMP_PLACES" in f.message and "export OMP_PLACES=cores" in f.fix


def test_numexpr_and_an_openmp_list(tmp_path):
    text = (SET_U / "numexpr-421-omp-num-threads-list-unsupported.txt").read_text()
    (f,) = fired("omp-env-invalid", paste_facts(tmp_path, text))
    assert "OMP_NUM_THREADS=4,3,2" in f.message and "OpenMP list" in f.message
    assert "export NUMEXPR_NUM_THREADS=4" in f.fix
    (f,) = fired("omp-env-invalid", told_paste_facts("python-3.11-int-of-omp-num-threads-list.txt"))
    assert "OMP_NUM_THREADS=4,3,2" in f.message


def test_libomp_value_messages_carry_the_value():
    # en_US.txt's BadBoolValue and LargeValue in the runtime's Warning format (openmp.toml's examples)
    (f,) = fired("omp-env-invalid", told_facts("OMP: Warning #20: OMP_DYNAMIC=\"maybe\": Wrong value, boolean expected.\n"))
    assert 'OMP_DYNAMIC=maybe' in f.message and "libomp" in f.message and f.severity == "error"
    (f,) = fired("omp-env-invalid", told_facts("OMP: Warning #41: OMP_NUM_THREADS value \"100000\" is too large.\n"))
    assert f.severity == "warning" and "OMP_NUM_THREADS=100000" in f.message


def test_silent_on_int_of_a_variable_that_is_no_thread_count():
    assert not fired("omp-env-invalid", told_paste_facts("python-3.11-int-of-slurm-tasks-per-node.txt"))
