"""Set R's class of issue 24: a preload whose mapping is refused (ld-preload-blocked-by-apparmor),
through the real catalogue and the paste path. Pastes are set R's and the public ones in
tests/fixtures/pastes/SOURCES.md; near misses from the same emitters stay silent."""

from __future__ import annotations

import pytest

from conftest import FIXTURES
from rulekit import fired, paste_facts, recorded_paste_facts


def _r(tmp_path, name):
    return paste_facts(tmp_path, (FIXTURES / "tickets_blind_r" / f"{name}.txt").read_text(encoding="utf-8"))


# -- a preload whose mapping is refused ---------------------------------------------------------

def test_preload_refused_under_apparmor_names_apparmor(tmp_path):
    (f,) = fired("ld-preload-blocked-by-apparmor", _r(tmp_path, "xalt-58-preload-blocked-by-apparmor"))
    assert f.severity == "warning" and "libxalt_init.so" in f.message and "AppArmor, which the paste names" in f.message
    assert "findmnt -no TARGET,OPTIONS --target /N/soft/sles15/xalt/2.10.34/lib64" in f.fix and "apparmor" in f.fix


@pytest.mark.parametrize("paste, quoted", [
    ("firejail-2375-ld-preload-failed-to-map-segment.txt", "/home/damluk/.local/share/spotify/spotifywm.so"),
    ("procs-73-snap-preload-failed-to-map-segment.txt", "libgtk3-nocsd.so.0"),
])
def test_preload_refused_elsewhere_names_both_causes(paste, quoted):
    (f,) = fired("ld-preload-blocked-by-apparmor", recorded_paste_facts(paste))
    assert f.severity == "warning" and quoted in f.message
    assert "security module (AppArmor or SELinux)" in f.message and "noexec" in f.message


def test_a_preload_not_found_is_not_a_refused_mapping():
    assert not fired("ld-preload-blocked-by-apparmor", recorded_paste_facts("ld-preload-open-5-cannot-open-shared-object.txt"))
