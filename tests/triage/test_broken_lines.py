"""Pastes with broken lines (issue 13, bad input): a screenshot's OCR text, a terminal or a mail
client wraps long lines at a column, so a value can end mid-word ("GPU models and configuration:
No" / "CUDA", "No space left on devi" / "ce"). No real OCR ticket was found, so each paste of the
real corpus is broken here the way a hard wrap breaks it, at a narrow and a common width, and
read again. What hpcdoctor reads from the broken paste must be what it read from the whole one or
nothing: never a guess from half a line.

Before the parser knew broken lines, this found a healthy macOS report read as one GPU named "No"
(and torch-cpu-only fired), a cut "No space left on devi" read as an errno that a larger /dev/shm
would not cure, cut GPU names ("NVIDIA GeForce GTX 1", "Tesla V100-SX" taken for a V100 PCIe), a
broken ROCm build line read as a CPU build, and cut package versions."""

from __future__ import annotations

import json

import pytest

from conftest import run_main
from ticketkit import MANIFEST, TICKETS

WIDTHS = (33, 80)
# The one finding a broken paste may add: it names no cause, quotes NCCL's first warning and asks
# for a rerun with NCCL_DEBUG=INFO, which is the honest answer when the line naming the cause broke.
NAMES_NO_CAUSE = {"nccl-system-error"}


def hard_wrap(text: str, width: int) -> str:
    out = []
    for line in text.splitlines():
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out) + "\n"


@pytest.fixture(scope="module")
def readings(tmp_path_factory, triage):
    """Every corpus paste, whole and wrapped at each width, through `check --from` (in this
    process: conftest's triage runs the CLI's entry point)."""
    jobs = []
    for width in WIDTHS:
        folder = tmp_path_factory.mktemp(f"w{width}")
        for t in MANIFEST:
            text = (TICKETS / f"{t['id']}.txt").read_text(encoding="utf-8")
            (folder / f"{t['id']}.txt").write_text(hard_wrap(text, width), encoding="utf-8")
            jobs.append((t["id"], width, folder / f"{t['id']}.txt"))
    jobs += [(t["id"], None, TICKETS / f"{t['id']}.txt") for t in MANIFEST]
    return {(tid, width): triage(path) for tid, width, path in jobs}


def _alarms(doc) -> set:
    return {f["symbol"] for f in (doc or {}).get("findings", []) if f["severity"] in ("error", "warning")}


def _read(doc) -> dict:
    """What was read from the paste itself: the torch report's fields and each GPU's name and driver."""
    facts = (doc or {}).get("facts") or {}
    out = {}
    for key, value in (facts.get("torch") or {}).items():
        if isinstance(value, dict):
            out.update({f"torch.{key}.{k}": v for k, v in value.items()})
        else:
            out[f"torch.{key}"] = value
    for n, gpu in enumerate(facts.get("gpus") or []):
        for key in ("name", "driver_version", "gfx_target"):
            out[f"gpus[{n}].{key}"] = gpu.get(key)
    return out


def test_the_wrap_is_real():
    text = (TICKETS / "pytorch-121067-macos-email-wrapped-healthy.txt").read_text(encoding="utf-8")
    assert "GPU models and configuration: No \nCUDA\n" in hard_wrap(text, 33)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_broken_paste_never_crashes(readings, width):
    for t in MANIFEST:
        run = readings[(t["id"], width)]
        assert run["rc"] in (0, 1, 2) and "Traceback" not in run["stderr"], (t["id"], width, run["stderr"][-500:])
        if run["rc"] == 2:
            assert run["stderr"].strip().count("\n") == 0, f"{t['id']}: one clear line, got {run['stderr']!r}"


@pytest.mark.parametrize("width", WIDTHS)
def test_a_broken_paste_adds_no_diagnosis(readings, width):
    for t in MANIFEST:
        whole, broken = readings[(t["id"], None)], readings[(t["id"], width)]
        added = _alarms(broken["doc"]) - _alarms(whole["doc"]) - NAMES_NO_CAUSE
        assert not added, f"{t['id']} wrapped at {width}: {added} from half a line"
        assert not (_alarms(broken["doc"]) & set(t["must_not"])) - NAMES_NO_CAUSE, (t["id"], width)


@pytest.mark.parametrize("width", WIDTHS)
def test_what_a_broken_paste_reads_is_what_the_whole_one_says_or_nothing(readings, width):
    for t in MANIFEST:
        whole, broken = readings[(t["id"], None)], readings[(t["id"], width)]
        if broken["doc"] is None:
            continue  # declined, with one line (test above)
        said = _read(whole["doc"])
        for key, value in _read(broken["doc"]).items():
            if value in (None, [], {}) or key in ("torch.lines_cut", "torch.libraries_cut"):
                continue
            if isinstance(value, list) and isinstance(said.get(key), list) and len(value) == len(said[key]):
                # An Unknown (a name cut by the break) reads as null; every other entry is the same.
                assert all(v is None or v == w for v, w in zip(value, said[key])), (t["id"], width, key, value, said[key])
                continue
            assert said.get(key) == value, f"{t['id']} wrapped at {width}: {key} = {value!r}, the whole paste says {said.get(key)!r}"


def test_a_broken_line_is_said_not_guessed(tmp_path):
    """The healthy macOS report (pytorch#121067) broken at 33 columns: no GPU named "No", no finding.
    A fresh CLI process, as a support engineer runs it: its exit status and streams too."""
    text = (TICKETS / "pytorch-121067-macos-email-wrapped-healthy.txt").read_text(encoding="utf-8")
    path = tmp_path / "broken.txt"
    path.write_text(hard_wrap(text, 33), encoding="utf-8")
    res = run_main("check", "--from", str(path), "--format", "json", env={"NO_COLOR": "1"})
    assert res.returncode == 0 and "Traceback" not in res.stderr, res.stderr
    doc = json.loads(res.stdout)
    assert not doc["findings"] or not _alarms(doc)
    assert not (doc["facts"].get("gpus") or [])
    assert doc["facts"]["torch"]["version"] == "2.2.2"
    # What was not read is said, by name, in one note.
    (note,) = [n for n in doc["source"]["notes"] if "broken line" in n]
    # "GCC version: Could not collect" is 30 columns and whole; "Clang version: ..." after it is a
    # key collect_env prints (and hpcdoctor does not read), not the rest of the GCC line (issue 24).
    assert note.endswith("not read: python_platform")
