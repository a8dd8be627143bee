"""torch-wheel-unavailable as a rule: it reads pip's refusal from a pasted ticket (fixtures/pastes, real
public threads) and nothing on a live node; the triage-level cases are in tests/triage/test_pip_refusals.py."""

from __future__ import annotations

from rulekit import facts, fired, recorded_paste_facts


def test_fires_on_a_pasted_refusal_with_the_release_this_python_has():
    (f,) = fired("torch-wheel-unavailable", recorded_paste_facts("taggui-34-cp311-wheel-on-python310-windows.txt"))
    assert f.fix.startswith("pip install torch==2.1.2 --index-url https://download.pytorch.org/whl/cu121"), f.fix
    assert f.evidence["wheel.python"] == "3.11" and f.evidence["python"] == "3.10"


def test_silent_on_another_packages_wheel_and_on_a_node_without_a_paste():
    assert not fired("torch-wheel-unavailable", recorded_paste_facts("cogvideoxwrapper-294-torchao-cp312-wheel-python311.txt"))
    assert not fired("torch-wheel-unavailable", facts("h100-kvm-1gpu"))


def test_silent_where_pip_read_no_index_and_so_saw_no_release():
    # An http:// mirror pip skipped as insecure, and a wheel host it could not connect to: "from
    # versions: " is empty because no index was read, which says nothing of the wheels.
    untrusted = recorded_paste_facts("pytorch-9124-pip-untrusted-http-index.txt")
    unreachable = recorded_paste_facts("pytorch-51723-pip-index-unreachable.txt")
    assert not fired("torch-wheel-unavailable", untrusted)
    assert not fired("torch-wheel-unavailable", unreachable)
    assert fired("no-outbound-network", unreachable)
    ids = {s["id"] for s in untrusted["facts"]["ticket"]["symptoms"]}
    assert {"pip:untrusted-host-ignored", "pip:no-version-satisfies"} <= ids


def test_a_pin_that_is_no_release_at_all_is_info_not_a_platform_error(tmp_path):
    # Set V's healthy control: torch==1.15.0 was never released (1.x ended at 1.13, then 2.0.0).
    from pathlib import Path

    from rulekit import paste_facts

    text = (Path(__file__).resolve().parents[1] / "fixtures" / "tickets_blind_v"
            / "e2e-coref-pytorch-1-torch-version-typo-healthy.txt").read_text(encoding="utf-8")
    (f,) = fired("torch-wheel-unavailable", paste_facts(tmp_path, text))
    assert f.severity == "info" and "is not a torch release" in f.message, f.message
    # A pin inside a series (1.13.1 exists) keeps the platform reading.
    g = paste_facts(tmp_path, text.replace("1.15.0", "1.13.1"))
    assert all(h.severity == "error" for h in fired("torch-wheel-unavailable", g))
