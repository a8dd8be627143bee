"""mesa-dri-driver-not-found on real public pastes (tests/fixtures/pastes/SOURCES.md, set M's ticket)
through the real catalogue (knowledge/messages/mesa.toml) and the paste path."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, paste_facts, recorded_paste_facts

SET_M = Path(__file__).resolve().parent.parent / "fixtures" / "tickets_blind_m"


def test_swrast_outside_the_search_path_in_set_m(tmp_path):
    g = paste_facts(tmp_path, (SET_M / "mast3r-slam-15-dri-driver-outside-search-path.txt").read_text(encoding="utf-8"))
    (f,) = fired("mesa-dri-driver-not-found", g)
    assert f.severity == "warning" and "swrast_dri.so" in f.message and "/usr/lib/dri" in f.message
    assert "LIBGL_DRIVERS_PATH" in f.fix and "LIBGL_DEBUG=verbose" in f.fix
    assert not fired("no-display-on-node", g)


def test_iris_and_swrast_in_a_conda_environment():
    (f,) = fired("mesa-dri-driver-not-found", recorded_paste_facts("katrain-658-mesa-loader-iris-swrast.txt"))
    assert "iris_dri.so" in f.message and "only the last directory" in f.message


def test_silent_on_a_driver_found_but_not_loadable():
    # iris_dri.so was found; libLLVM's undefined symbol refused it: another cause than a missing driver
    assert not fired("mesa-dri-driver-not-found", recorded_paste_facts("labelcloud-144-mesa-iris-undefined-symbol.txt"))


def test_a_kernel_driver_name_asked_of_the_loader_is_not_a_missing_package():
    # adriconf asked for amdgpu_dri.so: no Mesa installs it, so a package fix would be the next fault
    (f,) = fired("mesa-dri-driver-not-found", recorded_paste_facts("adriconf-8-amdgpu-dri-kernel-driver-name.txt"))
    assert f.severity == "info" and "amdgpu is the kernel's DRM driver" in f.message
    assert "radeonsi" in f.fix and "apt-get install" not in f.fix


def test_the_kernel_names_are_never_a_dri_driver_of_the_recorded_mesa():
    from hpcdoctor import knowledge
    table = knowledge.load("mesa_dri_drivers")
    for k in table["kernel"]:
        assert k["name"] not in table["installed"] and (k["dri"] in table["installed"] or not k["dri"])
