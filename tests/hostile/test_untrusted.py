"""Input that chooses hpcdoctor's memory and time, and snapshots that try to read outside
themselves (issue 19). Every hostile input is generated here, a few KB on disk; where memory or time
is the point, the CLI runs in a child process and its peak RSS is read with getrusage."""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from conftest import NODES, measured, run_cli, run_main
from hostile_inputs import header_bundle as hostile_header_bundle
from hpcdoctor.parse import cpulist, nvsmi_xml
from hpcdoctor.sysroot import Missing, ReplaySysRoot, SnapshotError

# Today's code used 2-4 GB on these inputs; a bounded run stays near 100 MB. The bound is wide
# so that a loaded CI machine cannot make it flaky, and narrow enough to catch the old behaviour.
PEAK_RSS_LIMIT_MB = 500


# -- CPU lists ---------------------------------------------------------------------------------


def test_cpulist_total_is_capped_not_only_each_range():
    hostile = ",".join(f"{i * 70000}-{i * 70000 + 65536}" for i in range(400))  # 7 KB, 26 M CPUs
    with pytest.raises(cpulist.ListFormatError, match="more than"):
        cpulist.parse_cpulist(hostile)
    with pytest.raises(cpulist.ListFormatError):
        cpulist.parse_cpumask("f" * 100_000)
    assert cpulist.parse_cpulist("0-8191") == list(range(8192))  # the largest kernel build passes


def test_cpulist_bomb_in_a_bundle_is_an_unknown_with_its_reason(tmp_path):
    snap = tmp_path / "snap"
    shutil.copytree(NODES / "cpu-kvm-2core", snap)
    hostile = ",".join(f"{i * 70000}-{i * 70000 + 65536}" for i in range(400))
    for folder in ("cpu", "node"):
        (snap / "fs" / "sys" / "devices" / "system" / folder / "online").write_text(hostile + "\n")
    res, peak, wall = measured("check", "--from", str(snap), "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    # The CPU count falls back to the whole /proc/cpuinfo; NUMA has no other source here.
    assert doc["facts"]["cpu"]["logical_cpus"] == 2
    assert "more than 65536" in doc["unknown"]["numa.nodes"]
    assert peak < PEAK_RSS_LIMIT_MB, peak


# -- nvidia-smi XML ----------------------------------------------------------------------------

_BOMB = ('<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "aaaaaaaaaa">'
         '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<nvidia_smi_log><driver_version>&b;</driver_version>'
         '</nvidia_smi_log>')


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-8"])
def test_entities_refused_in_any_encoding(encoding):
    doc = _BOMB if encoding != "utf-8" else _BOMB.replace("UTF-16", "UTF-8")
    text = doc.encode(encoding).decode("utf-8", "replace")  # as a recording is read: no BOM
    with pytest.raises(nvsmi_xml.NvsmiXmlError, match="entity"):
        nvsmi_xml.parse(text)


# -- budgets, strict JSON, surrogates, snapshot versions, plugins -------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "NaN"])
def test_budget_must_be_finite_and_positive(value):
    res = run_main("check", "--budget", value, "--from", str(NODES / "cpu-kvm-2core"))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "budget" in res.stderr, res.stderr


def _snapshot_with_probe(tmp_path, name, data) -> Path:
    snap = tmp_path / "snap"
    shutil.copytree(NODES / "cpu-kvm-2core", snap)
    (snap / "probes").mkdir(exist_ok=True)
    (snap / "probes" / f"{name}.json").write_text(data)
    return snap


def test_json_report_never_holds_nan(tmp_path):
    # Any recorded probe may carry NaN (json.loads accepts it); the report must stay strict JSON
    # with the reason among the unknowns.
    snap = _snapshot_with_probe(tmp_path, "statvfs_dev_shm", '{"size_bytes": NaN}')
    (snap / "meta.json").write_text(json.dumps({"format": "hpcdoctor-snapshot", "version": 1}))
    assert math.isnan(ReplaySysRoot(snap).probe("statvfs_dev_shm", dict)["size_bytes"])
    res = run_main("check", "--from", str(snap), "--format", "json")
    assert res.returncode in (0, 1), res.stderr
    assert "NaN" not in res.stdout and "Infinity" not in res.stdout
    doc = json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert doc["facts"]["memory"]["shm_size_bytes"] is None
    assert "finite" in doc["unknown"]["memory.shm_size_bytes"]
    from hpcdoctor.report.json_report import strict_json

    doc = {"facts": {"a": float("nan"), "b": [1.0, float("inf")]}, "unknown": {}}
    out = json.loads(strict_json(doc))
    assert out["facts"] == {"a": None, "b": [1.0, None]}
    assert set(out["unknown"]) == {"facts.a", "facts.b.1"}


def test_lone_surrogate_in_a_fact_is_written_escaped(tmp_path):
    # JSON's \\ud800 escape is how a lone surrogate arrives: json.loads gives it back as is.
    snap = _snapshot_with_probe(tmp_path, "hostname", '"gpu\\ud800node"')
    for fmt in ("markdown", "json", "terminal"):
        out = tmp_path / f"r.{fmt}"
        res = run_main("check", "--from", str(snap), "--format", fmt, "-o", str(out))
        assert res.returncode in (0, 1) and "UnicodeEncodeError" not in res.stderr, res.stderr
        assert out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".r.")] == []  # no temp file left
    res = run_main("check", "--from", str(snap))
    assert res.returncode in (0, 1) and "UnicodeEncodeError" not in res.stderr, res.stderr


@pytest.mark.parametrize("version", [999, "1", 0, None])
def test_unknown_snapshot_version_is_refused_in_one_line(tmp_path, version):
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "meta.json").write_text(json.dumps({"format": "hpcdoctor-snapshot", "version": version}))
    res = run_main("check", "--from", str(snap))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "version" in res.stderr, res.stderr


def test_current_snapshot_version_is_read(tmp_path):
    snap = tmp_path / "snap"
    snap.mkdir()
    (snap / "meta.json").write_text(json.dumps({"format": "hpcdoctor-snapshot", "version": 1}))
    assert ReplaySysRoot(snap).meta["version"] == 1


def test_site_plugins_are_loaded_without_writing_bytecode(tmp_path):
    from hpcdoctor import plugins

    d = tmp_path / "checks.d"
    d.mkdir()
    (d / "site_probe.py").write_text("NAME = 'site_probe'\nVALUE = 41 + 1\n")
    d.chmod(0o755)
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False  # as an interpreter normally runs
    try:
        mods, errors = plugins.load_dir(str(d), "checks")
    finally:
        sys.dont_write_bytecode = saved
    assert errors == [] and [m.VALUE for m in mods] == [42]
    assert sorted(p.name for p in d.iterdir()) == ["site_probe.py"]


# -- tools on PATH that misbehave --------------------------------------------------------------


def _fake_tool(tmp_path, name: str, script: str) -> dict:
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    tool = bindir / name
    tool.write_text("#!/bin/sh\n" + script)
    tool.chmod(0o755)
    return {"PATH": f"{bindir}:{os.environ['PATH']}"}


def _pids_with(marker: str):
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if marker in line and "ps -eo" not in line]


def _kill_marked(marker: str) -> None:
    """End what a test's fake tool left behind: each marked process's group (its sleep too)."""
    for pid in _pids_with(marker):
        try:
            pgid = os.getpgid(pid)
            if pgid != os.getpgrp():
                os.killpg(pgid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_tool_printing_without_end_is_cut_and_ended(tmp_path):
    env = _fake_tool(tmp_path, "nvidia-smi", f"exec yes {'x' * 200}\n")
    res, peak, wall = measured("check", "--budget", "20", "--format", "json", env=env)
    assert res.returncode in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    reasons = json.dumps(doc["unknown"]) + json.dumps(doc["facts"].get("nvidia"))
    assert "printed more than 8 MiB" in reasons
    assert peak < PEAK_RSS_LIMIT_MB, peak
    assert wall < 15, wall


def test_descendant_holding_the_output_open_is_not_waited_for(tmp_path):
    marker = f"hpcdoctor-setsid-marker-{os.getpid()}"
    env = _fake_tool(tmp_path, "nvidia-smi", f"setsid sh -c 'sleep 60; : {marker}' &\necho 'NVIDIA-SMI has failed'\nexit 9\n")
    try:
        t0 = time.monotonic()
        res = run_cli("check", "--budget", "30", "--format", "json", env=env, timeout=60)
        wall = time.monotonic() - t0
        assert res.returncode in (0, 1), res.stderr
        probe = json.loads(res.stdout)["checks"]["gpu_nvidia"]
        # It waited out the check's own 10 s limit (or the budget, where that came first).
        assert probe["status"] != "timeout" and probe["duration_s"] < 5, probe
        assert wall < 8, wall
    finally:
        _kill_marked(marker)


# -- stop signals ------------------------------------------------------------------------------

SLOW_CHECK = '''
NAME = "site_slow"
TIMEOUT = 60.0


def collect(root, ctx):
    import time
    try:
        root.run(["nvidia-smi", "--marker"], timeout=60)  # live: a child that hangs
    except Exception:
        pass  # replay: not recorded
    time.sleep(60)
    return {}
'''


def _default_stop_signals() -> None:
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


# Each signal costs 2-3 s of real processes: SIGTERM (what a scheduler sends first) stays in the
# fast run, SIGHUP and SIGINT run with the slow tests (CI runs them all).
@pytest.mark.parametrize("signum", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.slow),
                                    pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_stop_signal_cleans_children_and_temporary_folders(tmp_path, signum):
    marker = f"hpcdoctor-signal-marker-{os.getpid()}-{int(signum)}"
    env = _fake_tool(tmp_path, "nvidia-smi", f"sh -c 'sleep 600; : {marker}'\n")
    (tmp_path / "plugins" / "checks").mkdir(parents=True)
    (tmp_path / "plugins" / "checks" / "site_slow.py").write_text(SLOW_CHECK)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    bundle = tmp_path / "b.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(str(NODES / "cpu-kvm-2core"), arcname="b")
    env.update(HPCDOCTOR_PATH=str(tmp_path / "plugins"), TMPDIR=str(tmp))
    try:
        for args in (["check", "--budget", "60"], ["check", "--from", str(bundle), "--budget", "60"]):
            # As a scheduler or a terminal starts it: a runner under nohup or in a background job
            # passes SIGHUP or SIGINT on ignored, and hpcdoctor rightly keeps an inherited SIG_IGN.
            proc = subprocess.Popen([sys.executable, "-m", "hpcdoctor", *args], env=dict(os.environ, **env),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    preexec_fn=_default_stop_signals)
            deadline = time.monotonic() + 30
            # A replay holds its bundle in a temporary folder; a live run has its child started.
            while time.monotonic() < deadline and not (list(tmp.iterdir()) if "--from" in args else _pids_with(marker)):
                time.sleep(0.05)
            time.sleep(0.5)
            proc.send_signal(signum)
            out, err = proc.communicate(timeout=60)  # a loaded CI machine; a hang still fails
            assert proc.returncode == 128 + signum, (proc.returncode, err)
            assert err.count("\n") == 1 and err.startswith("hpcdoctor: ") and "Traceback" not in err, err
            time.sleep(0.3)
            assert _pids_with(marker) == [], args
            assert list(tmp.iterdir()) == [], args
    finally:
        _kill_marked(marker)


# -- bundles -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.GNUTYPE_LONGLINK])
def test_oversized_extended_header_is_refused_before_it_is_read(tmp_path, kind):
    # Only the header is there (a few hundred bytes): refusing it must not need its content.
    bundle = hostile_header_bundle(tmp_path / "h.tar.gz", 3 << 30, kind, data=False)
    res = run_main("check", "--from", str(bundle))
    assert res.returncode == 2 and "extended header of 3221225472 bytes" in res.stderr, res.stderr
    assert res.stderr.count("\n") == 1


@pytest.mark.slow  # gzips a 700 MB header of zeros, then measures the peak memory of refusing it
def test_long_name_of_zeros_costs_no_memory(tmp_path):
    bundle = hostile_header_bundle(tmp_path / "h.tar.gz", 700 << 20)  # 0.7 MB on disk
    res, peak, wall = measured("check", "--from", str(bundle), "--budget", "3")
    assert res.returncode == 2 and "extended header" in res.stderr, res.stderr
    assert peak < PEAK_RSS_LIMIT_MB, peak  # today's code: 1.4 GB here, 3.2 GB for 3 GB of zeros


def test_bundles_with_long_names_and_pax_records_are_read(tmp_path):
    long_dir = "d" * 120
    for fmt in (tarfile.GNU_FORMAT, tarfile.PAX_FORMAT):
        bundle = tmp_path / f"ok{fmt}.tar.gz"
        with tarfile.open(bundle, "w:gz", format=fmt) as tar:
            tar.add(str(NODES / "cpu-kvm-2core"), arcname="snap")
            extra = tarfile.TarInfo(f"snap/fs/{long_dir}/é.txt")
            extra.size = 5
            tar.addfile(extra, io.BytesIO(b"hello"))
        from hpcdoctor.snapshot.bundle import open_snapshot

        with open_snapshot(str(bundle)) as root:
            assert root.read(f"/{long_dir}/é.txt") == "hello"
            assert "GenuineIntel" in root.read("/proc/cpuinfo")


def test_sparse_members_are_refused(tmp_path):
    info = tarfile.TarInfo("snap/fs/proc/cpuinfo")
    info.type, info.size = tarfile.GNUTYPE_SPARSE, 0
    raw = info.tobuf(format=tarfile.GNU_FORMAT) + b"\0" * 1024
    (tmp_path / "s.tar.gz").write_bytes(gzip.compress(raw))
    res = run_main("check", "--from", str(tmp_path / "s.tar.gz"))
    assert res.returncode == 2 and "special files" in res.stderr, res.stderr


def test_bundle_extraction_is_bounded_by_the_budget(tmp_path):
    from hpcdoctor.snapshot.bundle import extract_bundle

    bundle = tmp_path / "b.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(str(NODES / "cpu-kvm-2core"), arcname="snap")
    (tmp_path / "out").mkdir()
    with pytest.raises(SnapshotError, match="within the budget"):
        extract_bundle(str(bundle), str(tmp_path / "out"), deadline=time.monotonic() - 1)


# -- snapshots that reach outside themselves ---------------------------------------------------


def _outside_secret(tmp_path) -> Path:
    secret = tmp_path / "outside.json"
    secret.write_text('{"hostname": "OUTSIDE-SECRET", "format": "hpcdoctor-snapshot", "version": 1}')
    return secret


@pytest.mark.parametrize("link", ["probes/hostname.json", "probes/nvml.json", "meta.json", "cmd/index.json",
                                  "cmd/uname.txt", "fs/proc", "fs/sys/devices/system/cpu/online"])
def test_no_way_into_a_snapshot_follows_a_link_out_of_it(tmp_path, link):
    secret = _outside_secret(tmp_path)
    outside_dir = tmp_path / "outside_dir"
    outside_dir.mkdir()
    (outside_dir / "cpuinfo").write_text("processor\t: 0\nmodel name\t: OUTSIDE-SECRET\n")
    snap = tmp_path / "snap"
    shutil.copytree(NODES / "cpu-kvm-2core", snap)
    (snap / "probes").mkdir(exist_ok=True)
    target = snap / link
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside_dir if link == "fs/proc" else secret)
    res = run_main("check", "--from", str(snap), "--format", "json")
    assert "OUTSIDE-SECRET" not in res.stdout + res.stderr
    if link in ("meta.json", "cmd/index.json"):
        assert res.returncode == 2 and "outside the snapshot" in res.stderr, res.stderr
    else:
        assert res.returncode in (0, 1), res.stderr
    root = ReplaySysRoot(snap) if res.returncode != 2 else None
    if root is not None and link.startswith("fs/"):
        path = "/" + link[3:]
        assert not root.exists(path)
        with pytest.raises(Missing, match="outside the snapshot"):
            root.listdir(path) if link == "fs/proc" else root.read(path)
    if root is not None and link.startswith("probes/"):
        with pytest.raises(Missing, match="outside the snapshot"):
            root.probe(Path(link).stem, dict)


def test_recorded_output_over_the_limit_is_refused_with_its_reason(tmp_path):
    from hpcdoctor.sysroot import MAX_RECORDED_BYTES

    snap = tmp_path / "snap"
    (snap / "cmd").mkdir(parents=True)
    big = snap / "cmd" / "q.txt"
    with open(big, "wb") as fh:
        fh.truncate(MAX_RECORDED_BYTES + 1)  # sparse: nothing on disk
    (snap / "cmd" / "index.json").write_text(json.dumps([{"argv": ["nvidia-smi", "-q"], "rc": 0, "stdout": "q.txt"}]))
    with pytest.raises(Missing, match="larger than the 16 MiB"):
        ReplaySysRoot(snap).run(["nvidia-smi", "-q"])


@pytest.mark.slow  # a 9 MiB paste in a fresh process, its peak memory measured
def test_paste_of_a_thousand_gpus_is_read_whole(tmp_path):
    # Between 8 and 16 MiB a paste used to be cut at 8 MiB in silence (609 of 1000 GPUs).
    src = (Path(__file__).parent.parent / "fixtures" / "public" / "nvsmi" / "gls_8xH100-SXM_nvsmi_a_565.txt").read_text()
    head, *blocks = re.split(r"(?m)^(?=GPU [0-9A-F]{8}:)", src)
    n = 1000
    head = re.sub(r"(Attached GPUs\s*: )\d+", lambda m: m.group(1) + str(n), head)
    paste = tmp_path / "q.txt"
    with open(paste, "w") as fh:
        fh.write(head)
        for i in range(n):
            fh.write(re.sub(r"^GPU [0-9A-F:.]+", f"GPU {i // 256:08X}:{i % 256:02X}:00.0", blocks[i % len(blocks)], count=1))
    assert paste.stat().st_size > 9 << 20
    res, peak, wall = measured("check", "--from", str(paste), "--format", "json", timeout=300)
    assert res.returncode in (0, 1), res.stderr
    assert len(json.loads(res.stdout)["facts"]["gpus"]) == n
    assert peak < PEAK_RSS_LIMIT_MB, peak


# -- diff --------------------------------------------------------------------------------------


def _report(path: Path, cpus) -> Path:
    path.write_text(json.dumps({"schema_version": "1.0", "facts": {"affinity": {"allowed_cpus": cpus}},
                                "findings": [], "unknown": {}}))
    return path


def test_diff_of_long_lists_is_not_quadratic(tmp_path):
    # 45,000 CPUs each side (300 KB): pairwise membership took 23-52 s; sets take milliseconds.
    a = _report(tmp_path / "a.json", [2 * i for i in range(45_000)])
    b = _report(tmp_path / "b.json", [2 * i + 1 for i in range(45_000)])
    res, peak, wall = measured("diff", str(a), str(b))
    assert res.returncode == 1, res.stderr
    out = res.stdout.decode()
    assert "+1 +3 +5" in out and "(and 89950 more)" in out
    assert wall < 10, wall
    full = json.loads(run_main("diff", str(a), str(b), "--format", "json").stdout)
    assert len(full["facts"][0]["b"]) == 45_000


def test_diff_refuses_what_no_report_is(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    res = run_main("diff", str(deep), str(deep))
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr


def test_run_process_bounds_output_and_waits_only_for_the_command():
    from hpcdoctor.sysroot import MAX_READ_BYTES, RC_TOO_MUCH_OUTPUT, run_process

    res = run_process(["yes"], timeout=30)
    assert res.rc == RC_TOO_MUCH_OUTPUT and len(res.stdout) == MAX_READ_BYTES
    assert "printed more than 8 MiB" in res.why_failed()
    # Closing its output early does not end a command: its exit status is still waited for...
    res = run_process(["sh", "-c", "echo a; exec >&- 2>&-; sleep 0.5; exit 4"], timeout=10)
    assert (res.rc, res.stdout) == (4, "a\n")
    # ...up to its deadline.
    res = run_process(["sh", "-c", "exec >&- 2>&-; sleep 30"], timeout=0.5)
    assert res.rc == 124
    lines = []
    res = run_process(["sh", "-c", "echo one >&2; echo two >&2; printf three >&2"], timeout=10, on_stderr_line=lines.append)
    assert lines == ["one", "two", "three"] and res.rc == 0
