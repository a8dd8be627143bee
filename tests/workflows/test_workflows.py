"""Scheduler and support workflows: nhc, per-rank report, diff, pre-job examples."""

from __future__ import annotations

import json
import shutil
import subprocess


from conftest import NODES, ROOT, report_of, run_cli, run_main
from hpcdoctor.snapshot import diff
from hpcdoctor.report import nhc, rank

H100 = str(NODES / "h100-kvm-1gpu")
CPU = str(NODES / "cpu-kvm-2core")


def _broken_h100(tmp_path):
    """The H100 recording with an uncorrectable ECC error in its nvidia-smi report."""
    snap = tmp_path / "bad"
    shutil.copytree(H100, snap)
    xml = snap / "cmd" / "nvsmi_qx.txt"
    text = xml.read_text()
    start = text.index("<volatile>")
    end = text.index("</volatile>")
    block = text[start:end].replace("<dram_uncorrectable>0</dram_uncorrectable>", "<dram_uncorrectable>2</dram_uncorrectable>")
    xml.write_text(text[:start] + block + text[end:])
    return snap


def test_nhc_silent_and_zero_on_a_healthy_node():
    res = run_main("nhc", "--from", H100)
    assert res.returncode == 0 and res.stdout == ""


def test_nhc_one_line_and_exit_1_on_an_error(tmp_path):
    res = run_main("nhc", "--from", str(_broken_h100(tmp_path)))
    assert res.returncode == 1
    (line,) = res.stdout.splitlines()
    assert line.startswith("hpcdoctor: GPU002 ecc-uncorrectable-errors: GPU 0: 2 uncorrectable ECC error(s)")
    assert len(line) <= nhc.MAX_REASON


def test_nhc_ignores_advice_and_warnings():
    assert run_main("nhc", "--from", CPU).returncode == 0  # advice only


def test_rank_report_line():
    doc = report_of("check", "--from", H100)
    doc["facts"]["env"]["vars"].update({"CUDA_VISIBLE_DEVICES": "0", "OMP_NUM_THREADS": "4"})
    doc["facts"]["scheduler"].update({"rank": 5, "local_rank": 1, "ntasks": 8})
    text = rank.line(doc)
    assert text.startswith("rank 5/8 · host vm · local 1 · CPUs 0-15 (NUMA 0)")
    assert "visible GPUs 0" in text and "GPU 0:NUMA ? local" in text and text.endswith("ok")


def test_rank_report_cli_under_slurm():
    res = run_cli("check", "--rank-report", env={"SLURM_JOB_ID": "1", "SLURM_PROCID": "3", "SLURM_NTASKS": "4",
                                                 "SLURM_LOCALID": "3", "OMP_NUM_THREADS": "64"})
    (line,) = res.stdout.splitlines()
    assert line.startswith("rank 3/4") and "omp-threads-mismatch" in line


def test_diff_of_the_two_recorded_nodes():
    result = diff.compare(diff.load_report(H100), diff.load_report(CPU))
    paths = {d["path"]: d for d in result["facts"]}
    assert paths["cpu.logical_cpus"]["a"] == 16 and paths["cpu.logical_cpus"]["b"] == 2
    assert paths["gpus.0.name"]["b"] == diff.ABSENT
    assert {f["symbol"] for f in result["only_a"]} == set()  # tf32-disabled: quiet from a default alone
    assert "login-node" in {f["symbol"] for f in result["only_b"]}
    assert not any(p.endswith(".serial") or p.startswith("bench.") for p in paths)


def test_diff_cli_report_against_its_own_snapshot(tmp_path):
    out = tmp_path / "a.json"
    assert run_main("check", "--from", H100, "--format", "json", "-o", str(out)).returncode == 0
    res = run_main("diff", str(out), H100)
    assert res.returncode == 0 and "the facts agree" in res.stdout
    res = run_main("diff", H100, str(_broken_h100(tmp_path)), "--format", "json")
    data = json.loads(res.stdout)
    assert res.returncode == 1
    assert any(d["path"] == "gpus.0.ecc_uncorrectable_volatile" for d in data["facts"])
    assert [f["code"] for f in data["only_b"]] == ["GPU002"]


def test_diff_refuses_other_schema_versions_and_foreign_files(tmp_path):
    a = report_of("check", "--from", CPU)
    b = dict(a, schema_version="1.0")  # a report from before the 2.0 renames
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    res = run_main("diff", str(tmp_path / "a.json"), str(tmp_path / "b.json"))
    assert res.returncode == 2 and "different schema versions" in res.stderr
    (tmp_path / "c.json").write_text('{"hello": 1}')
    res = run_main("diff", str(tmp_path / "a.json"), str(tmp_path / "c.json"))
    assert res.returncode == 2 and "not an hpcdoctor report" in res.stderr


def test_examples_are_valid_shell():
    for name in ("preflight.sbatch", "hpcdoctor.nhc", "slurm-healthcheck.sh"):
        assert subprocess.run(["bash", "-n", str(ROOT / "examples" / name)]).returncode == 0
    text = (ROOT / "examples" / "preflight.sbatch").read_text()
    assert "--quiet --fail-on error" in text and 'eval "$(hpcdoctor env)"' in text
