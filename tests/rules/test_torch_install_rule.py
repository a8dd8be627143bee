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
