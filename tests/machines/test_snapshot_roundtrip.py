"""Record this machine, replay the recording: the same facts, folder and archive alike."""

from __future__ import annotations

import json

import pytest

from conftest import report_of, run_cli
from hpcdoctor import pipeline
from hpcdoctor.runner import Options
from hpcdoctor.snapshot.bundle import open_snapshot
from hpcdoctor.sysroot import LiveSysRoot, RecordingSysRoot, ReplaySysRoot


def _strip(gathered):
    return {"facts": gathered["facts"], "unknown": gathered["unknown"],
            "status": {k: v["status"] for k, v in gathered["checks"].items()}}


def test_recorded_facts_equal_replayed_facts(tmp_path):
    root = RecordingSysRoot(tmp_path / "snap")
    recorded = pipeline.gather(root, Options())
    root.finish({"checks": recorded["checks"]})
    replayed = pipeline.gather(ReplaySysRoot(tmp_path / "snap"), Options())
    assert _strip(replayed) == _strip(recorded)


@pytest.fixture(scope="module")
def _snapshots(tmp_path_factory):
    """`hpcdoctor snapshot` of this machine, once per form, as a user runs it."""
    made = {}

    def make(name):
        if name not in made:
            out = tmp_path_factory.mktemp("live") / name
            made[name] = (out, run_cli("snapshot", str(out)))
        return made[name]
    return make


@pytest.fixture
def live_snapshot(_snapshots):
    out, res = _snapshots("snap")
    assert res.returncode == 0, res.stderr
    return out


@pytest.mark.parametrize("name", ["snap", "snap.tar.gz"])
def test_cli_snapshot_then_replay_matches_live(_snapshots, name):
    out, res = _snapshots(name)
    assert res.returncode == 0, res.stderr
    assert "snapshot written" in res.stderr
    live = pipeline.gather(LiveSysRoot(), Options())["facts"]
    replay = report_of("check", "--from", str(out))["facts"]
    # Counters that move between two runs aside (free memory; and in a VM with a balloon driver
    # even MemTotal), the machine is the same. The exact round trip is the test above.
    for section in ("cpu", "affinity", "system"):
        assert replay[section] == live[section], section
    strip = lambda nodes: [{k: v for k, v in n.items() if k != "mem_total_bytes"} for n in nodes]  # noqa: E731
    assert strip(replay["numa"]["nodes"]) == strip(live["numa"]["nodes"])
    assert replay["memory"]["thp_enabled"] == live["memory"]["thp_enabled"]


def test_snapshot_layout_and_meta(live_snapshot):
    meta = json.loads((live_snapshot / "meta.json").read_text())
    assert meta["format"] == "hpcdoctor-snapshot" and meta["version"] == 1
    assert (live_snapshot / "fs" / "proc" / "cpuinfo").is_file()
    index = json.loads((live_snapshot / "cmd" / "index.json").read_text())
    assert any(e["argv"] == ["env"] for e in index)


def test_snapshot_never_records_secrets(tmp_path):
    env = {"HF_TOKEN": "hf_supersecret123", "AWS_SECRET_ACCESS_KEY": "AKIAsecretvalue",
           "MASTER_ADDR": "https://alice:pa55word@10.1.2.3", "SLURM_JOB_ID": "1"}
    run_cli("snapshot", str(tmp_path / "s"), env=env)
    blob = b"".join(p.read_bytes() for p in (tmp_path / "s").rglob("*") if p.is_file())
    for secret in (b"hf_supersecret123", b"AKIAsecretvalue", b"pa55word"):
        assert secret not in blob


def test_snapshot_refuses_to_overwrite(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "x").write_text("keep me")
    res = run_cli("snapshot", str(tmp_path / "s"))
    assert res.returncode == 2 and "already exists" in res.stderr
    assert (tmp_path / "s" / "x").read_text() == "keep me"


def test_archive_with_escaping_member_is_refused(tmp_path):
    import io
    import tarfile

    bad = tmp_path / "evil.tar.gz"
    with tarfile.open(bad, "w:gz") as tar:
        data = b"owned"
        info = tarfile.TarInfo("../../escape.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(Exception, match="leaves the bundle"):
        with open_snapshot(str(bad)):
            pass
    assert not (tmp_path.parent / "escape.txt").exists()


def test_a_listed_folder_replays_with_its_entries(tmp_path):
    # The network check lists LD_LIBRARY_PATH folders for NCCL's plugin without reading the files.
    libdir = tmp_path / "ofi" / "lib"
    libdir.mkdir(parents=True)
    (libdir / "libnccl-net.so").write_bytes(b"\x7fELF")
    root = RecordingSysRoot(tmp_path / "snap")
    assert root.listdir(str(libdir)) == ["libnccl-net.so"]
    root.finish({})
    assert ReplaySysRoot(tmp_path / "snap").listdir(str(libdir)) == ["libnccl-net.so"]
