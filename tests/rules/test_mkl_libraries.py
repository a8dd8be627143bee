"""mkl-libraries-incomplete: Intel MKL's dispatcher failing on its own libraries (knowledge/messages/mkl.toml),
on real pastes (fixtures/pastes, set V's ticket); MKL's argument checks (xerbla) stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulekit import fired, paste_facts, recorded_paste_facts, told_facts, told_paste_facts

SYMBOL = "mkl-libraries-incomplete"
V = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"


def test_set_v_ticket_cpu_library_and_its_fallback(tmp_path):
    text = (V / "tigrlab-admin-1102-mkl-libraries-missing-in-conda.txt").read_text(encoding="utf-8")
    (f,) = fired(SYMBOL, paste_facts(tmp_path, text))
    assert "libmkl_mc3.so or libmkl_def.so" in f.message
    assert "conda install mkl" in f.fix and "LD_LIBRARY_PATH" in f.fix


@pytest.mark.parametrize("paste", ["spinalcordtoolbox-1009-mkl-cannot-load-avx-or-def.txt",
                                   "anaconda-issues-1641-mkl-avx2-other-mkl-on-ld-path.txt"])
def test_linux_pastes_fire_with_the_linux_fix(paste):
    (f,) = fired(SYMBOL, recorded_paste_facts(paste) if paste.startswith("spinal") else told_paste_facts(paste))
    assert "or libmkl_def.so" in f.message and f.fix.startswith('echo "$LD_LIBRARY_PATH"'), f.fix


def test_windows_dll_forms_get_path_not_ld_library_path():
    (f,) = fired(SYMBOL, told_paste_facts("conda-9685-mkl-intel-thread-dll-not-found.txt"))
    assert "mkl_intel_thread.dll" in f.message and "The specified module could not be found." in f.message
    assert f.fix.startswith("where mkl_*.dll"), f.fix
    (g,) = fired(SYMBOL, told_paste_facts("nuitka-2285-mkl-intel-thread-2-dll-missing.txt"))
    assert "mkl_intel_thread.2.dll" in g.message
    (h,) = fired(SYMBOL, told_paste_facts("anaconda-698-mkl-cannot-load-libmkl-avx.txt"))
    assert "mkl_avx.dll or mkl_def.dll" in h.message


def test_a_function_missing_from_a_loaded_library_is_two_releases_mixed():
    (f,) = fired("mkl-libraries-incomplete", told_paste_facts("anaconda-issues-698-mkl-error-on-loading-function.txt"))
    assert "mkl_blas_avx_xdcopy" in f.message and "two MKL releases" in f.message


def test_the_loaders_undefined_symbol_is_quoted():
    # constructed from MKL's "INTEL MKL ERROR: %s." with a dlerror() text as a public README quotes it
    text = ("INTEL MKL ERROR: /usr/lib/x86_64-linux-gnu/libmkl_avx2.so: undefined symbol: mkl_sparse_optimize_bsr_trsm_i8.\n"
            "Intel MKL FATAL ERROR: Cannot load libmkl_avx2.so or libmkl_def.so.\n")
    (f,) = fired(SYMBOL, told_facts(text))
    assert "undefined symbol" in f.message and "two MKL releases mixed" in f.message


def test_mkls_argument_checks_and_other_mkl_words_are_silent():
    assert not fired("mkl-libraries-incomplete", told_paste_facts("qball-26-mkl-parameter-incorrect-zlacpy.txt"))
    assert not fired(SYMBOL, told_paste_facts("signac-1165-mkl-minimum-requirements.txt"))
    assert not fired(SYMBOL, told_paste_facts("hd-bet-9-mkl-intel-layer-with-wheel-libgomp.txt"))
