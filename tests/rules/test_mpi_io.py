"""impi-native-fs-io-fails on set Q's paste, and silent where the setting is off or nothing failed."""

from __future__ import annotations

from rulekit import PASTES as PASTE_DIR, fired, recorded_paste_facts, told_facts

_PASTE = "gsi-694-impi-native-fs-io-fails.txt"


def test_the_setting_beside_an_hdf5_failure_is_a_warning():
    (f,) = fired("impi-native-fs-io-fails", recorded_paste_facts(_PASTE))
    assert f.severity == "warning" and "I_MPI_EXTRA_FILESYSTEM=1" in f.message and "HDF5-DIAG" in f.message
    assert f.fix.startswith("unset I_MPI_EXTRA_FILESYSTEM")



def test_silent_without_a_failure_or_with_the_setting_off():
    text = (PASTE_DIR / _PASTE).read_text()
    title, failure = text.split("\n", 1)[0] + "\n", text.split("```console", 1)[1]
    assert not fired("impi-native-fs-io-fails", told_facts(title))   # the setting named, nothing failed
    assert not fired("impi-native-fs-io-fails", told_facts(title.replace("=1", "=0") + failure))   # turned off

