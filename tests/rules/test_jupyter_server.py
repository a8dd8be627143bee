"""The Jupyter server's start-up refusals (knowledge/messages/jupyter_server.toml, issue 24): the
root refusal feeds ENV097 jupyter-refuses-root; the port and browser lines are read and stay silent."""

from __future__ import annotations

from pathlib import Path

from rulekit import fired, message_ids, paste_facts, recorded_paste_facts, told_paste_facts

V = Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"


def test_v_ticket_notebook_in_a_container_as_root(tmp_path):
    text = (V / "dockerfile-keras-jupyter-4-jupyter-refuses-root.txt").read_text(encoding="utf-8")
    found = fired("jupyter-refuses-root", paste_facts(tmp_path, text))
    assert found and found[0].severity == "error"
    assert "--allow-root" in found[0].fix and "docker run --user" in found[0].fix


def test_notebook_and_labapp_refusals_fire():
    for name in ("ansible-jupyter-10-notebook-refuses-root.txt", "jupyterlab-docker-2-labapp-refuses-root.txt"):
        g = told_paste_facts(name)
        assert fired("jupyter-refuses-root", g), name


def test_the_same_container_with_allow_root_is_silent():
    g = told_paste_facts("ansible-jupyter-10-allow-root-runs-healthy.txt")
    assert not fired("jupyter-refuses-root", g)


def test_port_lines_are_read_and_silent():
    g = recorded_paste_facts("vscode-jupyter-1921-port-in-use-trying-another-healthy.txt")
    assert "jupyter_server:port-in-use-trying-another" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert not fired("jupyter-refuses-root", g)
    assert not fired("master-port-in-use", g)
    g = recorded_paste_facts("notebook-5404-permission-to-listen-on-port-denied.txt")
    assert "jupyter_server:port-permission-denied" in {s["id"] for s in g["facts"]["ticket"]["symptoms"]}


def test_server_wordings_from_the_source():
    # format strings of notebookapp.py v6.5.7 and serverapp.py v2.20.0, filled in (no public paste found)
    assert "jupyter_server:running-as-root" in message_ids("[C 2024-07-09 10:12:44.190 ServerApp] Running as root is not recommended. Use --allow-root to bypass.")
    assert "jupyter_server:no-available-port" in message_ids("[C 10:00:00.000 NotebookApp] ERROR: the notebook server could not be started because no available port could be found.")
    assert "jupyter_server:no-available-port" in message_ids("[C 10:00:00.000 ServerApp] ERROR: the Jupyter server could not be started because port 8888 is not available.")
    ids = message_ids("[I 10:00:00.000 ServerApp] The port 8888 is already in use.")
    assert "jupyter_server:port-in-use" in ids and "jupyter_server:port-in-use-trying-another" not in ids
