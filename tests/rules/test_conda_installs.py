"""shared-conda-install-not-writable and nfs-refuses-setgid-chmod (rules/conda_installs.py) on set
T's pastes and conda's own issue threads (tests/fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

import pytest

from rulekit import fired, recorded_paste_facts

T = "../tickets_blind_t/"


@pytest.mark.parametrize("paste, root", [
    (T + "oars-safs-resources-19-shared-conda-install-not-writable.txt", "/gscratch/merlab/software/miniconda3"),
    ("conda-9609-system-conda-pkgs-not-writable.txt", "/opt/conda"),
])
def test_a_shared_installations_cache_is_not_the_users_to_write(paste, root):
    gathered = recorded_paste_facts(paste)
    (f,) = fired("shared-conda-install-not-writable", gathered)
    assert f.severity == "error" and f"installation at {root}," in f.message
    assert "conda config --add pkgs_dirs ~/.conda/pkgs" in f.fix and "sudo" not in f.fix
    assert not fired("nfs-refuses-setgid-chmod", gathered)


def test_an_installation_in_a_home_directory_is_only_info():
    # conda#9753: the user's own Miniconda in his home; the path cannot say whose it is
    (f,) = fired("shared-conda-install-not-writable", recorded_paste_facts("conda-9753-own-home-miniconda-not-writable.txt"))
    assert f.severity == "info" and "/home/tims/miniconda3" in f.message


def test_a_refused_setgid_chmod_on_dot_conda_is_a_warning():
    gathered = recorded_paste_facts(T + "conda-8335-nfs-refuses-setgid-on-dot-conda.txt")
    (f,) = fired("nfs-refuses-setgid-chmod", gathered)
    assert f.severity == "warning" and "sgid bit on .conda" in f.message
    assert f.fix.startswith("mkdir -p ~/.conda/pkgs ~/.conda/envs")
    assert not fired("shared-conda-install-not-writable", gathered)
