"""mpi-library-missing and mpi-library-mismatch on public pastes (tests/fixtures/pastes, SOURCES.md
there; two blind-set tickets) and the emitters' own words: the loader's text for the MPI
implementations' libraries (knowledge/mpi_libraries.toml, from their build files), the loader's
undefined MPI symbol, mpi4py's launcher check and Open MPI's version check."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import facts, fired, recorded_paste_facts, told_facts
from hpcdoctor import knowledge
from hpcdoctor.rules.mpi_libraries import mpi_library
from hpcdoctor.triage.messages import find_messages

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _ticket(corpus: str, name: str):
    text = (FIXTURES / corpus / name).read_text(encoding="utf-8")
    return facts("h100-kvm-1gpu", **{"ticket.symptoms": find_messages(text)})


@pytest.mark.parametrize("paste, so, words", [
    ("examl-19-libmpi-40-missing.txt", "libmpi.so.40", "Open MPI: 3.0 to 5.0"),
    ("wdm-1-mpi4py-libmpi-12-missing.txt", "libmpi.so.12", "MPICH"),
    ("ompi-12578-libopen-pal-80-missing.txt", "libopen-pal.so.80", "Open MPI (its portability layer, OPAL): 5.0"),
    ("lammps-feedstock-36-libmpi-cxx-40-missing.txt", "libmpi_cxx.so.40", "3.0 to 4.1"),
])
def test_a_missing_mpi_library_names_the_mpi_and_the_fix_installs_it(paste, so, words):
    (f,) = fired("mpi-library-missing", recorded_paste_facts(paste))
    assert f.message.startswith(f"{so} (") and words in f.message
    assert f"ldconfig -p | grep -F '{so}'" in f.fix
    conda = "mpich" if so == "libmpi.so.12" else "openmpi"
    assert f"conda install -c conda-forge {conda}" in f.fix and "module avail" in f.fix


@pytest.mark.parametrize("corpus, name", [
    ("tickets_blind_g", "sfepy-941-libmpi-40-missing-conda-openmpi.txt"),
    ("tickets_blind_g", "torchsmoke-wheels-5-libmpi-cxx-missing-raspberry-pi.txt"),   # inside import torch
])
def test_the_blind_tickets_answer(corpus, name):
    (f,) = fired("mpi-library-missing", _ticket(corpus, name))
    assert "the MPI the program was built against is not installed" in f.message
    assert not fired("cuda-runtime-library-missing", _ticket(corpus, name))


def test_another_library_missing_is_not_an_mpi_library():
    # Open MPI's own component failing to load librdmacm (ignored): Open MPI is there
    assert not fired("mpi-library-missing", recorded_paste_facts("fenics-feedstock-211-openmpi-component-librdmacm.txt"))
    assert not fired("mpi-library-missing", recorded_paste_facts("cpcl-4-libcudart-10-0-cuda-path.txt"))


def test_every_mpi_library_of_the_table_is_catalogued_for_the_rule():
    for e in knowledge.load("mpi_libraries")["library"]:
        line = f"OSError: {e['stem']}.so.{e['major']}: cannot open shared object file: No such file or directory"
        (s,) = [s for s in find_messages(line) if s["family"] == "libraries"]
        assert s["rules"] == ["mpi-library-missing"], e
    assert mpi_library("libmpi", "40")["conda"] == "openmpi" and mpi_library("libmpi", "99") is None


@pytest.mark.parametrize("paste, symbol", [
    ("mpi4py-570-undefined-ompi-mpi-errors-abort.txt", "ompi_mpi_errors_abort"),
    ("mpi4py-289-undefined-mpi-aint-add.txt", "MPI_Aint_add"),
    ("horovod-1301-undefined-ompi-mpi-real.txt", "ompi_mpi_real"),
])
def test_an_undefined_mpi_symbol_is_another_mpi_loaded(paste, symbol):
    (f,) = fired("mpi-library-mismatch", recorded_paste_facts(paste))
    assert f"it lacks {symbol}" in f.message
    assert "mpi4py.get_config()" in f.fix and "LD_LIBRARY_PATH" in f.fix


def test_the_blind_ticket_of_an_mpi4py_symbol_answers():
    t = _ticket("tickets_blind_i", "yank-1070-mpi4py-undefined-symbol-wrong-libmpi.txt")
    (f,) = fired("mpi-library-mismatch", t)
    assert "lacks MPI_UNWEIGHTED" in f.message
    assert not fired("torch-import-failed", t)


@pytest.mark.parametrize("corpus, name", [
    ("tickets", "pmdm-5-undefined-symbol-cudart.txt"),
    ("tickets", "pytorch-3345-libaten-undefined-symbol.txt"),
    ("tickets_blind_c", "flash-attention-940-undefined-symbol-torch-2-3.txt"),
    ("tickets_blind_d", "codejudge-2-nccl-comm-register-cu11-cu12-mix.txt"),
])
def test_an_undefined_symbol_of_another_library_is_not_mpis(corpus, name):
    assert not fired("mpi-library-mismatch", _ticket(corpus, name))


def test_mpi4pys_launcher_check_is_a_mismatch():
    (f,) = fired("mpi-library-mismatch", recorded_paste_facts("ndsl-184-mpi4py-suspicious-mpiexec.txt"))
    assert "rank 0 of size 1" in f.message and "mpiexec --version" in f.fix
    (s,) = [s for s in find_messages((Path(__file__).resolve().parents[1] / "fixtures" / "pastes" /
                                      "ndsl-184-mpi4py-suspicious-mpiexec.txt").read_text()) if s["family"] == "mpi4py"]
    assert (s["variable"], s["value"], s["vendor"]) == ("OMPI_COMM_WORLD_SIZE", "6", "MPICH")


@pytest.mark.parametrize("text", [
    # open-mpi/ompi @ v4.1.8 orte/mca/oob/tcp/help-oob-tcp.txt [version mismatch], as show_help prints it
    "Open MPI detected a mismatch in versions between two processes.  This\ntypically means that you executed \"mpirun\"",
    # openpmix/prrte @ v3.0.13 src/docs/show-help-files/help-oob-tcp.txt [version mismatch]
    "PRTE detected a mismatch in versions between two processes.  This\ntypically means that you executed \"mpirun\"",
])
def test_the_runtimes_version_check_is_a_mismatch(text):
    (f,) = fired("mpi-library-mismatch", told_facts(text))
    assert "two releases of the MPI runtime" in f.message and "mpirun --prefix" in f.fix


def test_silent_without_an_mpi_message():
    assert not fired("mpi-library-mismatch", recorded_paste_facts("examl-19-libmpi-40-missing.txt"))
    assert not fired("mpi-library-missing", recorded_paste_facts("mpi4py-289-undefined-mpi-aint-add.txt"))


def test_live_the_job_interpreters_torch_import_failing_on_an_mpi_library():
    # the torch probe's import_error for the exception of tickets_blind_g/torchsmoke-wheels-5 (a torch built with MPI)
    g = facts("h100-kvm-1gpu", **{"torch.import_error":
                                  "OSError: libmpi_cxx.so.40: cannot open shared object file: No such file or directory"})
    (f,) = fired("mpi-library-missing", g)
    assert f.message.startswith("libmpi_cxx.so.40 (Open MPI") and "(import torch on this node:" in f.message
    assert f.evidence["torch.import_error"].startswith("OSError: libmpi_cxx.so.40")
    # the loader's undefined MPI symbol in the same exception (tests/fixtures/pastes/horovod-1301's line)
    g = facts("h100-kvm-1gpu", **{"torch.import_error": "ImportError: /usr/lib/libmpi_cxx.so.1: undefined symbol: ompi_mpi_real"})
    (f,) = fired("mpi-library-mismatch", g)
    assert "lacks ompi_mpi_real (import torch on this node:" in f.message


def test_live_a_torch_import_failing_on_another_library_is_not_mpis():
    g = facts("h100-kvm-1gpu", **{"torch.import_error":
                                  "OSError: libcudnn.so.8: cannot open shared object file: No such file or directory"})
    assert not fired("mpi-library-missing", g)
    assert not fired("mpi-library-mismatch", g)
