"""Round three of hostile input (issue 27): what was still quadratic, read before the budget, or
grew the output with the input. Each test uses an input small enough to stay fast when the code
is linear, and large enough that the quadratic code it replaced missed the limit by far."""

from __future__ import annotations

import json
import re
import time
import tracemalloc

import pytest

from conftest import FIXTURES, measured, run_cli, run_main
from hpcdoctor import envfilter
from hpcdoctor.triage import machines as paste_machines
from hpcdoctor.triage.paste import open_paste
from hpcdoctor.sysroot import SnapshotError

VLLM = FIXTURES / "pastes" / "vllm-dstack-8xh100-collect_env-indented.txt"


# -- H1: secrets by value, in linear time ------------------------------------------------------


@pytest.mark.parametrize("unit", ["a", "-a", "x://?a", "sk-"])
def test_scrubbing_a_long_value_is_linear(unit):
    # 40 KB of these took 1.6-2.7 s each (200 KB: 62 s); linear code takes milliseconds.
    value = unit * (40_000 // len(unit))
    if unit.startswith("x://"):
        value = "x://" + value
    t0 = time.perf_counter()
    envfilter.scrub_value(value)
    assert time.perf_counter() - t0 < 0.5


def test_scrubbing_still_finds_a_url_behind_a_long_scheme():
    out = envfilter.scrub_value("a" * 5000 + "://user:hunter2@host/x?sig=abc")
    assert "hunter2" not in out and "abc" not in out


def test_long_value_in_a_pasted_vllm_environment_ends_within_the_budget(tmp_path):
    # A 100 KB value among vLLM's listed variables: 20 s or more with the quadratic pattern.
    paste = tmp_path / "vllm.txt"
    paste.write_text(VLLM.read_text().replace("NCCL_VERSION=2.19.3", "NCCL_VERSION=2.19.3-" + "a" * 100_000))
    res, peak, wall = measured("check", "--from", str(paste), "--budget", "3", "--format", "json", timeout=120)
    assert res.returncode in (0, 1, 3), res.stderr
    assert json.loads(res.stdout)["facts"]["env"]["vars"]["NCCL_VERSION"].endswith("a" * 100)
    assert wall < 3 + 3, wall  # the budget, and a loaded machine's interpreter start


# -- H2/H3: which machine a piece describes --------------------------------------------------


def test_comparing_long_gpu_lists_is_not_quadratic():
    # 1,500 distinct names each side: pairwise comparison took seconds (150 KB lists: 74 s).
    a = [f"NVIDIA H100 80GB HBM3 unit {i}" for i in range(1500)]
    b = list(reversed(a))
    t0 = time.perf_counter()
    assert paste_machines._same_gpus(a, b)
    assert not paste_machines._same_gpus(a, b[:-1] + ["AMD Instinct MI300X"])
    assert time.perf_counter() - t0 < 0.5


def test_truncated_names_still_match_their_whole_names():
    assert paste_machines._same_gpus(["NVIDIA A100-SXM4..."] * 2, ["NVIDIA A100-SXM4-80GB"] * 2)
    assert paste_machines._same_gpus(["NVIDIA A100-SXM4-80GB"], ["NVIDIA A100-SXM4..."])
    assert not paste_machines._same_gpus(["NVIDIA A100-SXM4..."], ["NVIDIA H100 80GB HBM3"])


class _Piece:
    def __init__(self, text: str, kind_name: str, argv):
        self.text, self.line, self.host = text, 1, None
        self.kind = type("K", (), {"name": kind_name, "argv": argv, "file": None})()


def test_identity_of_a_gpu_element_flood_costs_little_memory():
    # 200 KB of <gpu/> built 35,000 GPU records (2 MB: 1.5 GB); now refused before the tree.
    xml = '<?xml version="1.0" ?>\n<nvidia_smi_log><driver_version>550.54</driver_version>' + "<gpu/>" * 35_000 + "</nvidia_smi_log>\n"
    tracemalloc.start()
    try:
        ident = paste_machines.identity(_Piece(xml, "nvidia-smi -q -x", ["nvidia-smi", "-q", "-x"]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "gpus" not in ident
    assert peak < 40 << 20, peak


# -- M1: a paste is read under the budget, and what it prints is bounded ------------------------


def _alternating(path, pairs: int):
    path.write_text("".join(f"CA 'mlx5_{i}'\nhca_id: mlx5_{i}\n" for i in range(pairs)))
    return path


def test_paste_reading_counts_against_the_budget(tmp_path):
    paste = _alternating(tmp_path / "ib.txt", 10)
    with pytest.raises(SnapshotError, match="within the budget"):
        with open_paste([str(paste)], deadline=time.monotonic() - 1):
            pass


def test_paste_of_many_pieces_prints_a_bounded_report(tmp_path):
    # 100,000 one-line pieces (1.9 MB): each one was a recognised entry and a note, 14 MB of JSON.
    paste = _alternating(tmp_path / "ib.txt", 50_000)
    res, peak, wall = measured("check", "--from", str(paste), "--budget", "5", "--format", "json", timeout=120)
    assert res.returncode in (0, 1, 3), res.stderr
    doc = json.loads(res.stdout)
    assert len(res.stdout) < 300_000, len(res.stdout)
    assert any("more than 64 tool outputs" in n for n in doc["source"]["notes"])
    assert wall < 5 + 3, wall


def test_many_rdma_ports_are_refused_not_listed(tmp_path):
    # One ibstat of 40,000 devices: every port was a fact (5 MB of JSON).
    paste = tmp_path / "ibstat.txt"
    paste.write_text("".join(f"CA 'mlx5_{i}'\n\tCA type: MT4123\n\tPort 1:\n\t\tState: Active\n" for i in range(40_000)))
    doc = json.loads(run_cli("check", "--from", str(paste), "--format", "json", timeout=120).stdout)
    assert "more than" in doc["unknown"]["network.rdma_ports"]


# -- M2 and zero-width: values are data in every format -----------------------------------------


HOSTILE_REASON = "[click](http://evil.example) <img src=x onerror=alert(1)>\n```\n\x1b]52;c;cm0gLXJm\x07 \x1b[2J"


def test_markdown_unchecked_line_shows_reasons_as_text():
    from conftest import NODES, report_of
    from hpcdoctor.report import markdown

    doc = report_of("check", "--from", str(NODES / "cpu-kvm-2core"), "--format", "json")
    doc["unchecked"] = [{"area": "gpu_nvidia <b>", "what": "GPU [x](y)", "reason": HOSTILE_REASON}]
    text = markdown.render(doc)
    line = next(l for l in text.splitlines() if l.startswith("- gpu\\_nvidia"))
    assert "\x1b" not in text and "\x07" not in text and "\n```\n\\x1b" not in text
    assert not re.search(r"(?<!\\)\]\(|(?<!\\)<", line), line  # no link, no HTML: each escaped


def test_prometheus_labels_carry_no_control_characters():
    from hpcdoctor.report import prometheus

    doc = {"tool": {"version": "0"}, "source": {"mode": "paste"}, "findings": [
        {"code": "X1", "symbol": "x", "severity": "error", "subject": "GPU \x1b[2J\u202e\u200b0"}],
        "facts": {"gpus": [{"index": 0, "name": "NVIDIA \x1b]52;c;AAAA\x07 H100"}]}}
    out = prometheus.render(doc)
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\u200b" not in out
    assert "\\x1b" in out


def test_zero_width_characters_are_shown_escaped():
    from hpcdoctor.report.safe import term

    assert term("NVIDIA\u200bH100\ufeff\u2060") == "NVIDIA\\u200bH100\\ufeff\\u2060"


# -- M3 and L1: depth ----------------------------------------------------------------------------


def test_bundle_many_folders_deep_is_refused_and_leaves_nothing(tmp_path):
    import io
    import tarfile

    bundle = tmp_path / "deep.tar.gz"
    with tarfile.open(bundle, "w:gz", format=tarfile.GNU_FORMAT) as tar:
        for level in range(1, 1801):  # one folder member per level, as tar writes a tree
            folder = tarfile.TarInfo("snap/" + "d/" * level)
            folder.type = tarfile.DIRTYPE
            tar.addfile(folder)
        data = b"{}"
        info = tarfile.TarInfo("snap/" + "d/" * 1800 + "meta.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    res = run_cli("check", "--from", str(bundle), env={"TMPDIR": str(scratch)})
    assert res.returncode == 2
    assert "deeper than 64 folders" in res.stderr and "internal error" not in res.stderr, res.stderr
    assert list(scratch.iterdir()) == []


def test_removing_a_tree_deeper_than_the_recursion_limit(tmp_path):
    import os
    import sys

    from hpcdoctor.snapshot.bundle import remove_tree

    top = tmp_path / "top"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    for _ in range(sys.getrecursionlimit() + 100):  # made by descriptor: the path would pass PATH_MAX
        os.mkdir("d", dir_fd=fd)
        nxt = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nxt
    os.close(fd)
    remove_tree(str(top))
    assert not top.exists()


def test_json_nested_deeper_than_any_report_is_refused_in_one_line(tmp_path):
    deep = "[" * 500 + "]" * 500
    a = tmp_path / "a.json"
    a.write_text('{"schema_version": "1.0", "findings": [], "unknown": {}, "facts": {"a": %s}}' % deep)
    b = tmp_path / "b.json"
    b.write_text('{"schema_version": "1.0", "findings": [], "unknown": {}, "facts": {"a": 1}}')
    res = run_main("diff", str(a), str(b))
    assert res.returncode == 2 and "deeper than 64 levels" in res.stderr, res.stderr[-300:]
    assert len(res.stdout) < 1000


def test_jsonbound_never_raises_recursion_error():
    from hpcdoctor import jsonbound

    for n in (65, 950, 5000, 100_000):
        with pytest.raises(ValueError):
            jsonbound.loads("[" * n + "]" * n)
    assert jsonbound.loads("[" * 64 + "]" * 64)


def test_rank_report_takes_only_cpu_numbers():
    from hpcdoctor.report import rank

    doc = {"facts": {"affinity": {"allowed_cpus": [0, None, 1, float("nan"), "x"]},
                     "numa": {"nodes": [{"id": 0, "cpus": [0, float("nan"), None]}, "junk"]},
                     "gpus": [{"index": 0, "local_cpus": [None, 1]}]}, "unknown": {}, "findings": []}
    assert "CPUs 0-1 (NUMA 0)" in rank.line(doc)
    assert rank.record(doc)["cpus"] == "0-1"


# -- M5: secrets kept by the filter, and variables injected by a line break ---------------------

SECRET_SHAPES = {
    "TORCH_CALLBACK_URL": ("https://app.example/cb#access_token=fragtok-4411&state=1", "fragtok-4411"),
    "TORCH_EXTRA_CONFIG": ('{"user": "bob", "password": "jsonpw 7781"}', "7781"),
    "TORCH_LAUNCH_ARGS": ("--master 10.0.0.1 --password optpw-5512 --port 1", "optpw-5512"),
    "NCCL_PROXY_ADDR": ("bob:barepw-3371@proxy.example:3128", "barepw-3371"),
    "CUDA_PEM": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAA\n-----END OPENSSH PRIVATE KEY-----",
                 "b3BlbnNzaC1rZXktdjEAAA"),
    "SLURM_EXPORT_NOTE": ("token for the job eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2lnbmF0dXJl here", "c2lnbmF0dXJl"),
}


@pytest.mark.parametrize("name", sorted(SECRET_SHAPES))
def test_secret_shapes_are_scrubbed(name):
    value, needle = SECRET_SHAPES[name]
    out = envfilter.relevant({name: value})[name]
    assert needle not in out and "<redacted>" in out, out


def test_a_line_break_in_a_value_injects_nothing_into_a_snapshot(tmp_path):
    import tarfile

    env = {"TORCH_NOTE": "x\nSLURM_JWT=rawjwt-66123\nOMP_NUM_THREADS=999"}
    assert run_cli("snapshot", str(tmp_path / "s.tar.gz"), env=env).returncode == 0
    with tarfile.open(tmp_path / "s.tar.gz") as tar:
        blob = b"".join(tar.extractfile(m).read() for m in tar if m.isfile()).decode("utf-8", "replace")
    assert "rawjwt-66123" not in blob
    assert "\nOMP_NUM_THREADS=999" not in blob
    doc = json.loads(run_main("check", "--from", str(tmp_path / "s.tar.gz"), "--format", "json").stdout)
    assert doc["facts"]["env"]["vars"].get("OMP_NUM_THREADS") != "999"


# -- low: a FIFO, a site config of NaN, --output's mode, a full TMPDIR ---------------------------


def test_a_fifo_in_a_recording_is_refused_not_waited_on(tmp_path):
    import os
    import shutil

    from conftest import NODES

    snap = tmp_path / "snap"
    shutil.copytree(NODES / "cpu-kvm-2core", snap)
    (snap / "cmd" / "env.txt").unlink()
    os.mkfifo(snap / "cmd" / "env.txt")  # opening it for reading waits for a writer that never comes
    res, peak, wall = measured("check", "--from", str(snap), "--budget", "5", "--format", "json", timeout=60)
    doc = json.loads(res.stdout)
    assert [n for n, p in doc["checks"].items() if p["status"] == "timeout"] == []
    assert wall < 4, wall


@pytest.mark.parametrize("line", ["memory_gib = nan", "cpus = -5", "memory_gib = inf", "gpus = -1"])
def test_site_config_numbers_must_be_finite_and_not_negative(tmp_path, line):
    from hpcdoctor import config

    path = tmp_path / "site.toml"
    path.write_text(f"[expect]\n{line}\n")
    with pytest.raises(config.ConfigError, match="finite number of at least 0"):
        config.load(str(path))


def test_output_over_an_existing_file_keeps_its_mode(tmp_path):
    import os
    import stat as st

    from conftest import NODES

    out = tmp_path / "report.json"
    out.write_text("old")
    os.chmod(out, 0o644)
    run_main("check", "--from", str(NODES / "cpu-kvm-2core"), "--format", "json", "--output", str(out))
    assert st.S_IMODE(out.stat().st_mode) == 0o644 and out.read_text().startswith("{")


def test_a_full_tmpdir_is_one_line_not_an_internal_error(monkeypatch, capsys):
    import errno
    import tempfile

    from conftest import NODES
    from hpcdoctor import cli

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", "/tmp/hpcdoctor-paste-x")

    monkeypatch.setattr(tempfile, "mkdtemp", full)
    rc = cli.main(["check", "--from", str(NODES / "cpu-kvm-2core" / "cmd" / "lscpu.txt")])
    err = capsys.readouterr().err
    assert rc == 2 and "No space left on device" in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) == 1


def test_numa_node_flood_is_refused_not_listed(tmp_path):
    # 100,000 pasted nodes printed 21 MB of report.
    paste = tmp_path / "numa.txt"
    paste.write_text("available: 100000 nodes (0-99999)\n"
                     + "".join(f"node {i} cpus: {i}\nnode {i} size: 1000 MB\n" for i in range(100_000)))
    res = run_cli("check", "--from", str(paste), "--format", "json", timeout=120)
    assert len(res.stdout) < 300_000
    assert "more than hpcdoctor reads" in json.loads(res.stdout)["unknown"]["numa.nodes"]


def test_a_payload_printing_json_950_deep_is_an_unknown_with_its_reason(tmp_path):
    # The old code took it as the torch probe's answer and walked it later.
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nprintf '{\"executable\": \"/x\", \"deep\": %s%s}' "
                    f"'{'[' * 950}' '{']' * 950}'\n")
    fake.chmod(0o755)
    doc = json.loads(run_cli("check", "--python", str(fake), "--format", "json", "--budget", "10").stdout)
    assert any("nested deeper than 64 levels" in v for v in doc["unknown"].values())
