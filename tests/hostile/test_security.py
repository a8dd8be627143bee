"""Secrets never leave the node; redaction is consistent; hostile bundles are refused or contained."""

from __future__ import annotations

import io
import json
import shutil
import tarfile

import pytest

from conftest import NODES, run_cli, run_main
from hpcdoctor import pipeline
from hpcdoctor.snapshot import redact
from hpcdoctor.runner import Options
from hpcdoctor.snapshot.bundle import open_snapshot
from hpcdoctor.sysroot import Missing, ReplaySysRoot, SnapshotError

SECRETS = {"AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "HF_TOKEN": "hf_ABCdefGHIjklMNOpqrSTU",
           "MASTER_ADDR": "https://trainer:Sup3rS3cret@10.0.0.7", "NCCL_SOCKET_IFNAME": "eth0",
           "MY_DB_PASSWORD": "hunter2hunter2", "SLURM_JOB_ID": "77", "TORCH_HUB_TOKEN": "thub_ZYXwvuTSRqpo"}
NEEDLES = ("wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "hf_ABCdefGHIjklMNOpqrSTU", "Sup3rS3cret", "hunter2hunter2",
           "thub_ZYXwvuTSRqpo")


def _clean(blob: str):
    for n in NEEDLES:
        assert n not in blob, n


@pytest.mark.parametrize("fmt", ["json", "markdown", "terminal"])
def test_no_secret_in_any_report(fmt):
    res = run_cli("check", "--format", fmt, "--verbose", env=SECRETS)
    assert res.returncode in (0, 1)
    _clean(res.stdout + res.stderr)
    if fmt == "json":
        env = json.loads(res.stdout)["facts"]["env"]["vars"]
        # A relevant name that looks secret keeps its name only; an irrelevant one is not kept at all.
        assert env["TORCH_HUB_TOKEN"] == "<redacted>" and env["NCCL_SOCKET_IFNAME"] == "eth0"
        assert "HF_TOKEN" not in env and "AWS_SECRET_ACCESS_KEY" not in env
        assert "trainer" not in env["MASTER_ADDR"] and "10.0.0.7" in env["MASTER_ADDR"]
        assert "MY_DB_PASSWORD" not in env  # not relevant: not even its name is kept


def test_no_secret_in_snapshot_or_env_output(tmp_path):
    assert run_cli("snapshot", str(tmp_path / "s.tar.gz"), env=SECRETS).returncode == 0
    with tarfile.open(tmp_path / "s.tar.gz") as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar if m.isfile())
    _clean(blob.decode("utf-8", "replace"))
    _clean(run_cli("env", env=SECRETS).stdout)


def test_redaction_is_consistent_on_the_h100_recording(tmp_path):
    snap = tmp_path / "h100"
    shutil.copytree(NODES / "h100-kvm-1gpu", snap)
    (snap / "cmd" / "env.txt").write_text((snap / "cmd" / "env.txt").read_text() + "USER=alice\nHOSTNAME=gpu-node-17\n")
    gathered = pipeline.gather(ReplaySysRoot(snap), Options())
    serial, uuid = gathered["facts"]["gpus"][0]["serial"], gathered["facts"]["gpus"][0]["uuid"]
    r = redact.sensitive_values(gathered["facts"], {"USER": "alice", "HOSTNAME": "gpu-node-17"})
    redact.redact_tree(snap, r)
    blob = "".join(p.read_text(errors="replace") for p in snap.rglob("*") if p.is_file())
    for value in (serial, uuid, "alice", "gpu-node-17"):
        assert value not in blob, value
    # The same UUID maps to the same placeholder everywhere, and the replay still parses.
    assert r.mapping[uuid] in (snap / "cmd" / "nvsmi_qx.txt").read_text()
    assert r.mapping[uuid] in (snap / "cmd" / "nvsmi_q.txt").read_text()
    again = pipeline.gather(ReplaySysRoot(snap), Options())
    assert again["facts"]["gpus"][0]["uuid"] == r.mapping[uuid]
    assert again["facts"]["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return str(path)


def _file(name, data=b"x"):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _link(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


@pytest.mark.parametrize("members,needle", [
    ([_file("/etc/evil")], "leaves the bundle"),
    ([_file("snap/../../evil")], "leaves the bundle"),
    ([_link("snap/fs/proc/cpuinfo", "/etc/shadow")], "links and special files"),
    ([_link("snap/fs/x", "/etc/passwd", tarfile.LNKTYPE)], "links and special files"),
])
def test_hostile_archive_members_are_refused(tmp_path, members, needle):
    bundle = _tar(tmp_path / "evil.tar.gz", members)
    with pytest.raises(SnapshotError, match=needle):
        with open_snapshot(bundle):
            pass
    assert not (tmp_path.parent / "evil").exists()


def test_member_claiming_gigabytes_is_refused_before_reading(tmp_path):
    info = tarfile.TarInfo("snap/fs/proc/cpuinfo")
    info.size = 10 * 1024 ** 3
    raw = io.BytesIO()
    raw.write(info.tobuf(format=tarfile.GNU_FORMAT))  # a header promising 10 GiB, and no data at all
    import gzip

    (tmp_path / "big.tar.gz").write_bytes(gzip.compress(raw.getvalue()))
    res = run_main("check", "--from", str(tmp_path / "big.tar.gz"))
    assert res.returncode == 2 and "over the limit" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.parametrize("content", [b"", b"not a tarball at all", b"\x1f\x8b\x08\x00garbage"])
def test_foreign_or_empty_archive(tmp_path, content):
    (tmp_path / "x.tar.gz").write_bytes(content)
    res = run_main("check", "--from", str(tmp_path / "x.tar.gz"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr


def test_symlink_inside_a_snapshot_folder_cannot_escape(tmp_path):
    snap = tmp_path / "snap"
    (snap / "fs" / "proc").mkdir(parents=True)
    (snap / "fs" / "proc" / "cpuinfo").symlink_to("/etc/passwd")
    root = ReplaySysRoot(snap)
    with pytest.raises(Missing, match="outside the snapshot"):
        root.read("/proc/cpuinfo")
    doc = pipeline.gather(root, Options())
    assert doc["checks"]["cpu"]["status"] == "unknown"


def test_entity_bomb_in_a_recorded_nvidia_smi(tmp_path):
    snap = tmp_path / "bomb"
    (snap / "cmd").mkdir(parents=True)
    lol = "".join(f'<!ENTITY l{i} "{"&l%d;" % (i - 1) * 10 if i else "lol"}">' for i in range(9))
    (snap / "cmd" / "x.txt").write_text(f'<?xml version="1.0"?><!DOCTYPE n [{lol}]><nvidia_smi_log>&l8;</nvidia_smi_log>')
    (snap / "cmd" / "index.json").write_text(json.dumps([{"argv": ["nvidia-smi", "-q", "-x"], "rc": 0, "stdout": "x.txt"}]))
    g = pipeline.gather(ReplaySysRoot(snap), Options())
    assert "entity declarations refused" in g["facts"]["nvidia"]["error"]


def test_redaction_hides_the_bare_uuid_the_benchmark_records(tmp_path):
    # The lease of 2026-11-27 found it: the benchmark payload keeps torch's uuid, NVML's "GPU-<uuid>"
    # without its prefix, and `snapshot --redact` hid only the prefixed form (that recording, made
    # before the fix, still holds it in probes/bench.json; recordings are never edited).
    bench = NODES / "h100-fc-1gpu-quick-2026-11-27" / "probes" / "bench.json"
    text = bench.read_text()
    bare = json.loads(text)["gpus"][0]["uuid"]
    r = redact.sensitive_values({"gpus": [{"uuid": f"GPU-{bare}", "serial": "1753024036894"}]}, {})
    out = r.apply(text)
    assert bare not in out and f'"uuid": "{r.mapping[f"GPU-{bare}"]}"' in out
    # One GPU, one placeholder, whichever form names it.
    assert r.apply(f"GPU-{bare} {bare}") == f"{r.mapping[f'GPU-{bare}']} {r.mapping[f'GPU-{bare}']}"
