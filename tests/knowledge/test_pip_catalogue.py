"""pip's messages (knowledge/messages/pip.toml) read from real pastes: the wheel's tags, the whole
"from versions" list, the Python pip's own lines show (fixtures/pastes/SOURCES.md)."""

from __future__ import annotations

from conftest import FIXTURES
from hpcdoctor.triage.messages import find_messages

PASTES = FIXTURES / "pastes"


def found(name: str) -> dict:
    text = (PASTES / f"{name}.txt").read_text()
    out = {}
    for s in find_messages(text, families=["pip"]):
        out.setdefault(s["key"], s)
    return out


def test_a_wheels_tags_are_read_from_its_file_name():
    s = found("taggui-34-cp311-wheel-on-python310-windows")["unsupported-wheel"]
    assert (s["dist"], s["version"], s["pytag"], s["abitag"], s["plat"]) == (
        "torch", "2.1.2+cu121", "cp311", "cp311", "win_amd64")


def test_an_old_abi_tag_and_markdown_around_the_line():
    s = found("deep-text-edit-38-cp37-wheel-unsupported")["unsupported-wheel"]
    assert (s["version"], s["pytag"], s["abitag"], s["plat"]) == ("1.11.0+cu113", "cp37", "cp37m", "linux_x86_64")


def test_the_whole_from_versions_list_is_read():
    s = found("comic-translate-215-cu121-find-links-python312")["no-version-satisfies"]
    assert s["req"] == "torch==2.1.0+cu121"
    listed = [v.strip() for v in s["versions"].split(",")]
    assert listed[0] == "2.2.0" and listed[-1] == "2.6.0" and "2.3.1+cu121" in listed and len(listed) == 25


def test_a_refusal_printed_without_its_list_is_read_as_such():
    got = found("pytorch-56917-cu102-pin-python35")
    assert got["no-version-satisfies"]["req"] == "torch==1.8.1+cu102"
    assert got["no-version-satisfies"].get("versions") is None
    assert got["python-end-of-life"]["python"] == "3.5"
    assert got["no-matching-distribution"]["req"] == "torch==1.8.1+cu102"


def test_pips_own_lines_tell_the_interpreter_and_the_index():
    assert found("chattts-2-torch21-from-versions-python312-site-packages")["python-from-site-packages"]["python"] == "3.12"
    assert found("fastsdcpu-78-torch201-cpu-index-python312")["looking-in-indexes"]["urls"] == \
        "https://download.pytorch.org/whl/cpu"
    assert found("fastsdcpu-78-torch201-cpu-index-python312")["no-version-satisfies"]["versions"] == "none"


def test_mambas_refusal_is_read_as_conda_family_and_not_as_a_wheel_problem():
    from conftest import check_from

    text = (PASTES / "openmm-torch-170-mamba-could-not-solve-pytorch-gpu.txt").read_text()
    keys = {s["key"] for s in find_messages(text, families=["conda"])}
    assert {"could-not-solve", "packages-incompatible"} <= keys
    run = check_from(PASTES / "openmm-torch-170-mamba-could-not-solve-pytorch-gpu.txt")
    assert run["doc"] is not None, run["stderr"]
    assert "torch-wheel-unavailable" not in {f["symbol"] for f in run["doc"]["findings"]}
