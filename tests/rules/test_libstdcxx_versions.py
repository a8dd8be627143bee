"""libstdcxx-older-than-binary on real pastes of the loader's GLIBCXX/CXXABI refusals
(tests/fixtures/pastes, SOURCES.md there; blind set W), and where it must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from hpcdoctor import knowledge
from rulekit import fired, recorded_paste_facts, told_facts

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
W = FIXTURES / "tickets_blind_w"


def _one(text: str):
    (f,) = fired("libstdcxx-older-than-binary", told_facts(text))
    return f


def test_a_conda_envs_copy_older_than_the_extension():
    # W: pixel-perfect-sfm#11: the env's lib/libstdc++.so.6 lacks GLIBCXX_3.4.29 (GCC 11); the system's has it
    f = _one((W / "pixel-perfect-sfm-11-conda-libstdcxx-too-old.txt").read_text())
    assert "needs GLIBCXX_3.4.29 (first in GCC 11.1.0's libstdc++)" in f.message
    assert "the conda environment /home/kevin/anaconda3/envs/pixSfM's own copy" in f.message
    assert "the listing of /usr/lib/libstdc++.so.6 (line 8) stops at GLIBCXX_3.4.29" in f.message
    assert 'conda install -y -p /home/kevin/anaconda3/envs/pixSfM -c conda-forge "libstdcxx-ng>=11"' in f.fix
    assert "ln -s" not in f.fix


def test_the_systems_copy_under_a_conda_binary():
    # W: TGS-GapCloser#88: a bioconda binary in a subfolder of bin/ finds /lib64's GCC 4.8 copy
    f = _one((W / "tgs-gapcloser-88-system-libstdcxx-too-old.txt").read_text())
    assert "needs GLIBCXX_3.4.21 (first in GCC 5.1.0's libstdc++)" in f.message
    assert "the system's copy (/lib64/libstdc++.so.6)" in f.message and "GLIBCXX_3.4.20, GLIBCXX_3.4.21" in f.message
    assert "-p /public/home/sunzhg/miniconda3/envs/tgsgapcloser -c conda-forge \"libstdcxx-ng>=5\"" in f.fix
    assert "export LD_LIBRARY_PATH=/public/home/sunzhg/miniconda3/envs/tgsgapcloser/lib" in f.fix
    assert "module load gcc/5" in f.fix and "g++ -print-file-name=libstdc++.so.6" in f.fix


def test_a_title_and_the_users_words_of_the_hosts_copy():
    # W: smext-fakequeries#13: "version `CXXABI_1.3.9' not found", host "only have versions until CXXABI_1.3.7"
    f = _one((W / "smext-fakequeries-13-host-libstdcxx-too-old.txt").read_text())
    assert "needs CXXABI_1.3.9 (first in GCC 5.1.0's libstdc++)" in f.message
    assert "goes to CXXABI_1.3.7 (GCC 4.8.0's libstdc++)" in f.message
    assert f.fix.startswith("ldd ./PROGRAM | grep libstdc++") and "module load gcc/5" in f.fix


def test_a_listing_names_the_copy_a_bare_title_does_not():
    f = fired("libstdcxx-older-than-binary", recorded_paste_facts("anaconda-483-conda-libstdcxx-listing-3-4-19.txt"))[0]
    assert "needs GLIBCXX_3.4.20 (first in GCC 4.9.0's libstdc++)" in f.message
    assert "stops at GLIBCXX_3.4.19, GCC 4.8.3's copy" in f.message
    assert "conda install -y -p ~/.miniconda3/envs/fenics_test -c conda-forge \"libstdcxx-ng>=5\"" in f.fix


@pytest.mark.parametrize("paste, version, prefix, spec", [
    ("anaconda-7284-conda-cxxabi-1-3-9-scipy.txt", "CXXABI_1.3.9", "/algo/algos2dev4/anaconda", ">=5"),
    ("fastllm-301-conda-env-glibcxx-3-4-30-symlink.txt", "GLIBCXX_3.4.30", "/home/suser/.conda/envs/llm", ">=12"),
    ("libmamba-544-base-env-system-libstdcxx-centos7.txt", "GLIBCXX_3.4.29", "/data3/lgb_data_softwear/miniconda", ">=11"),
])
def test_conda_environments_get_a_newer_runtime(paste, version, prefix, spec):
    (f,) = fired("libstdcxx-older-than-binary", recorded_paste_facts(paste))
    assert f"needs {version}" in f.message
    assert f'conda install -y -p {prefix} -c conda-forge "libstdcxx-ng{spec}"' in f.fix
    assert f"grep -c '^{version}$'" in f.fix


def test_a_gcc_modules_copy():
    (f,) = fired("libstdcxx-older-than-binary", recorded_paste_facts("anaconda-13100-gcc-module-libstdcxx-3-4-29.txt"))
    assert "a GCC 10.2.0 installation's copy (/u/local/compilers/gcc/10.2.0/lib64/libstdc++.so.6" in f.message
    assert "module load gcc/11" in f.fix and "conda install" not in f.fix


def test_a_bundled_copy_is_preloaded_over():
    text = ("./app: /opt/MATLAB/R2019a/bin/glnxa64/libstdc++.so.6.0.22: version `GLIBCXX_3.4.26' not found "
            "(required by /home/u/app/libfoo.so)\n")
    f = _one(text)
    assert "bundles" in f.message and "libstdc++.so.6.0.22 is GCC 6.1.0's file name" in f.message
    assert 'LD_PRELOAD="$(g++ -print-file-name=libstdc++.so.6)" /home/u/app/libfoo.so' in f.fix
    assert "module load gcc/9" in f.fix


def test_with_glibc_also_too_old_the_fix_says_so():
    (f,) = fired("libstdcxx-older-than-binary", recorded_paste_facts("node-46412-glibc-2-28-centos-7.txt"))
    assert "needs CXXABI_1.3.9 (first in GCC 5.1.0's libstdc++)" in f.message
    assert "misses GLIBC_2.28 of glibc too" in f.fix


def test_a_version_newer_than_the_table():
    f = _one("/lib64/libstdc++.so.6: version `GLIBCXX_3.4.36' not found (required by ./prog)\n")
    assert "newer than libstdc++'s ABI table" in f.message


def test_not_fired_on_glibc_torch_or_a_listing_alone():
    assert not fired("libstdcxx-older-than-binary", recorded_paste_facts("kymoknot-1-binary-built-for-newer-glibc.txt"))
    for name in ("trixie-97-glibcxx-not-found-import-torch.txt", "pytorch-157709-glibcxx-system-libstdcxx-conda.txt"):
        assert not fired("libstdcxx-older-than-binary", told_facts((FIXTURES / "tickets_blind_d" / name).read_text()))
    healthy = ("$ strings /usr/lib/x86_64-linux-gnu/libstdc++.so.6 | grep GLIBCXX | tail -2\n"
               "GLIBCXX_3.4.32\nGLIBCXX_3.4.33\n")
    assert not fired("libstdcxx-older-than-binary", told_facts(healthy))
    glibc = "./prog: /lib64/libc.so.6: version `GLIBC_2.34' not found (required by ./prog)\n"
    assert not fired("libstdcxx-older-than-binary", told_facts(glibc))


def test_the_table_covers_every_version_through_gcc_15():
    first = knowledge.load("libstdcxx_versions")["symbol_versions"]["first_release"]
    assert [f"GLIBCXX_3.4.{n}" for n in range(1, 35)] == [k for k in first if k.startswith("GLIBCXX_3.4.")][:34]
    assert all(f"CXXABI_1.3.{n}" in first for n in range(1, 17))
    assert first["GLIBCXX_3.4.29"] == "11.1.0" and first["GLIBCXX_3.4.34"] == "15.1.0" and first["CXXABI_1.3.15"] == "14.1.0"
