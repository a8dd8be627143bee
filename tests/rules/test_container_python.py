"""ENV025 host-python-env-in-container: set F's tickets (a scanpy traceback through ~/.local inside
Singularity, a notebook's sys.path in ~/.conda), the torch payload's user site and shadowed
packages run for real in this interpreter, and the rule on those facts inside and outside a container."""

from __future__ import annotations

import sys

from conftest import NODES
from rulekit import fired, paste_facts, with_env
from hpcdoctor import pipeline
from hpcdoctor.checks import torch_stack
from hpcdoctor.runner import Options
from hpcdoctor.triage.paste import open_paste

BLIND_F = NODES.parent / "tickets_blind_f"


def ticket_facts(name: str):
    with open_paste([str(BLIND_F / name)]) as (root, _recognised, _notes):
        return pipeline.gather(root, Options())


def test_scanpy_from_the_user_site_inside_singularity():
    (hit,) = fired("host-python-env-in-container", ticket_facts("scenicprotocol-2-home-local-shadows-container.txt"))
    assert "user's site directory" in hit.message and "line 4" in hit.message
    assert hit.fix.startswith("apptainer exec --env PYTHONNOUSERSITE=1") and "--no-home" in hit.fix


def test_a_conda_env_in_the_home_inside_singularity_keeps_the_home_out_first():
    (hit,) = fired("host-python-env-in-container", ticket_facts("singularity-2600-home-conda-shadows-container.txt"))
    assert "~/.conda" in hit.message and "line 27" in hit.message
    assert hit.fix.startswith("apptainer exec --cleanenv --no-home")


def test_a_user_site_traceback_without_a_container_is_not_this_rule(tmp_path):
    text = (BLIND_F / "scenicprotocol-2-home-local-shadows-container.txt").read_text()
    # the same traceback, without the title and sentence that name Singularity
    g = paste_facts(tmp_path, text.split("```", 1)[1])
    assert any(s["id"] == "python_site:user-site-path" for s in g["facts"]["ticket"]["symptoms"])
    assert not fired("host-python-env-in-container", g)


def _fake_site(tmp_path, where, name, version):
    d = tmp_path / where
    (d / f"{name}-{version}.dist-info").mkdir(parents=True)
    return d


def test_payload_reports_the_copy_that_wins_and_the_user_site(tmp_path, monkeypatch):
    first = _fake_site(tmp_path, "home/u/.local/lib/site-packages", "numpy", "1.26.4")
    second = _fake_site(tmp_path, "opt/image/site-packages", "numpy", "2.1.0")
    monkeypatch.setenv("PYTHONPATH", f"{first}:{second}")
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    data = torch_stack.run_payload(sys.executable, "fast", 30)
    facts = torch_stack.from_payload(data, {})
    (numpy,) = [s for s in facts["shadowed"] if s["name"] == "numpy"]
    assert (numpy["version"], numpy["location"]) == ("1.26.4", str(first))
    assert numpy["hidden"] == [{"version": "2.1.0", "location": str(second)}]
    assert facts["user_site"]["enabled"] is False and facts["user_site"]["on_path"] is False


def _container(env, shadowed, torch_path=None):
    changes = {"torch.shadowed": shadowed, "torch.user_site": {"enabled": True, "path": "/home/u/.local/lib/python3.11/site-packages",
                                                                 "on_path": True}}
    if torch_path:
        changes["torch.path"] = torch_path
    return with_env("h100-kvm-1gpu", env, **changes)


SHADOWED = [{"name": "numpy", "version": "1.26.4", "location": "/home/u/.local/lib/python3.11/site-packages",
             "hidden": [{"version": "2.1.0", "location": "/usr/local/lib/python3.11/site-packages"}]}]


def test_live_user_site_copy_hides_the_images_inside_apptainer():
    (hit,) = fired("host-python-env-in-container", _container({"APPTAINER_CONTAINER": "/x.sif", "HOME": "/home/u"}, SHADOWED))
    assert "numpy 1.26.4 from /home/u/.local" in hit.message and "2.1.0 in /usr/local" in hit.message
    assert "PYTHONNOUSERSITE=1" in hit.fix and "--cleanenv" in hit.fix


def test_live_torch_from_a_host_pythonpath_in_docker():
    g = _container({"PYTHONPATH": "/home/u/pylib", "HOME": "/home/u"}, [], torch_path="/home/u/pylib/torch")
    g["facts"]["scheduler"]["in_container"] = True
    (hit,) = fired("host-python-env-in-container", g)
    assert "torch is imported from /home/u/pylib/torch" in hit.message and hit.fix.startswith("docker run -e PYTHONNOUSERSITE=1")


def test_live_silent_outside_a_container_and_on_the_images_own_packages():
    assert not fired("host-python-env-in-container", _container({"HOME": "/home/u"}, SHADOWED))
    own = [{"name": "numpy", "version": "2.1.0", "location": "/usr/local/lib/python3.11/site-packages",
            "hidden": [{"version": "1.26.4", "location": "/usr/lib/python3/dist-packages"}]}]
    assert not fired("host-python-env-in-container", _container({"APPTAINER_CONTAINER": "/x.sif", "HOME": "/home/u"}, own))
    # torch in a venv the user keeps in the home is their choice, not the user site leaking in
    assert not fired("host-python-env-in-container", _container({"APPTAINER_CONTAINER": "/x.sif", "HOME": "/home/u"}, [],
                                      torch_path="/home/u/venv/lib/python3.11/site-packages/torch"))


PYTHONHOME_RUN = (NODES.parent / "pastes" / "cpython-3.11.7-pythonhome-elsewhere.txt").read_text()


def test_host_pythonhome_inside_apptainer_from_cpythons_own_words(tmp_path):
    g = paste_facts(tmp_path, "Apptainer> python3 -c 1\n" + PYTHONHOME_RUN)
    (hit,) = fired("host-python-env-in-container", g)
    assert "standard library" in hit.message and "PYTHONHOME = '/nonexistent'" in hit.message
    assert "--cleanenv" in hit.fix
    # the same failure outside a container is not this rule's (a module's PYTHONHOME on the host)
    assert not fired("host-python-env-in-container", paste_facts(tmp_path, PYTHONHOME_RUN, "host.txt"))


def test_live_pythonhome_in_a_container_that_stops_the_jobs_python():
    g = with_env("h100-kvm-1gpu", {"APPTAINER_CONTAINER": "/x.sif", "PYTHONHOME": "/sw/python/3.9"})
    g["facts"]["torch"] = None
    g["unknown"]["torch"] = ("the torch probe failed in /usr/bin/python3 (exit 1): Fatal Python error: init_fs_encoding: "
                             "failed to get the Python codec of the filesystem encoding")
    (hit,) = fired("host-python-env-in-container", g)
    assert "PYTHONHOME=/sw/python/3.9" in hit.message and "--cleanenv" in hit.fix
    g["facts"]["env"]["vars"].pop("PYTHONHOME")
    assert not fired("host-python-env-in-container", g)


def test_payload_that_cannot_start_says_cpythons_fatal_error(tmp_path, monkeypatch):
    import pytest

    from hpcdoctor.sysroot import Missing

    monkeypatch.setenv("PYTHONHOME", str(tmp_path))  # no standard library there
    with pytest.raises(Missing) as exc:
        torch_stack.run_payload(sys.executable, "fast", 30)
    assert "Fatal Python error: init_fs_encoding" in str(exc.value)
