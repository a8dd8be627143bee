"""hpcdoctor under a real Slurm (tests/slurm_cluster.py): the pre-job script through sbatch, the
per-rank report under srun's binding, the cluster check on Slurm's own variables, the health check
draining and resuming the node in slurmctld, and the Prolog and Epilog writing node metrics."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT
from hpcdoctor.parse.cpulist import parse_cpulist

pytestmark = pytest.mark.slow  # real daemons: munged, slurmctld, slurmd

EXAMPLES = ROOT / "examples"
PREFLIGHT = EXAMPLES / "preflight.sbatch"
# The example asks for 2 nodes of 4 tasks with 4 GPUs; options on sbatch's command line override its
# #SBATCH lines, which fits it to one node of this machine without editing it.
ONE_NODE = ["--nodes=1", "--ntasks-per-node=2", "--cpus-per-task=1", "--gpus-per-node=0"]


def _job_dir(slurm, name: str) -> Path:
    d = slurm.root / "jobs" / name
    d.mkdir()
    (d / "train.py").write_text('print("training step")\n')  # what the example's last line starts
    return d


def _sbatch(slurm, cwd: Path, *extra: str, env=None):
    slurm.wait_idle()
    res = slurm.run(["sbatch", "--wait", *ONE_NODE, "-o", "job.out", *extra, str(PREFLIGHT)], timeout=90, env=env, cwd=cwd)
    out = (cwd / "job.out").read_text() if (cwd / "job.out").exists() else ""
    return res, out


def test_preflight_passes_on_a_healthy_node(slurm):
    cwd = _job_dir(slurm, "healthy")
    res, out = _sbatch(slurm, cwd)
    assert res.returncode == 0, out + res.stderr
    job = re.search(r"Submitted batch job (\d+)", res.stdout).group(1)
    assert "pre-flight failed" not in out and out.count("training step") == 2
    # step 1 left its JSON record, one per node; step 3 printed one placement line per rank
    (record,) = (cwd / f"hpcdoctor-{job}").iterdir()
    doc = json.loads(record.read_text())
    assert doc["facts"]["scheduler"]["job_id"] == job and not [f for f in doc["findings"] if f["severity"] == "error"]
    ranks = sorted(re.findall(r"^rank (\d+)/2 .* CPUs (\S+) ", out, re.M))
    assert [r for r, _ in ranks] == ["0", "1"]


def test_preflight_fails_with_hpcdoctors_line_when_a_gpu_is_expected(slurm, tmp_path):
    cwd = _job_dir(slurm, "fault")
    site = cwd / "site.toml"
    site.write_text("[expect]\ngpus = 1\n")  # this node has none: the job must stop before training
    res, out = _sbatch(slurm, cwd, env={"HPCDOCTOR_CONFIG": str(site)})
    assert res.returncode != 0
    lines = [ln for ln in out.splitlines() if ln.startswith("hpcdoctor:")]
    assert lines == [f"hpcdoctor: error SYS001 gpu-count-mismatch: 0 GPU(s) visible, 1 expected (site config {site})"]
    assert "pre-flight failed" in out and "training step" not in out


def _rank_reports(slurm, *srun_opts: str):
    """Each rank's --rank-report record beside `taskset -p` of the same process (exec keeps the PID)."""
    slurm.wait_idle()
    script = 'echo "taskset $SLURM_PROCID $(taskset -pc $$)"; exec hpcdoctor check --rank-report --format json'
    res = slurm.run(["srun", *srun_opts, "bash", "-c", script], timeout=60)
    assert res.returncode == 0, res.stderr
    taskset = {int(m.group(1)): parse_cpulist(m.group(2))
               for m in re.finditer(r"^taskset (\d+) pid \d+'s current affinity list: (\S+)$", res.stdout, re.M)}
    records = {r["rank"]: r for r in (json.loads(ln) for ln in res.stdout.splitlines() if ln.startswith("{"))}
    assert sorted(records) == sorted(taskset), res.stdout
    return records, taskset


def test_rank_report_shows_the_cpus_slurm_bound_each_rank_to(slurm):
    cpus = int(slurm.shape["CPUs"])
    records, taskset = _rank_reports(slurm, "-n2", "--cpu-bind=cores")
    for rank, rec in records.items():
        assert parse_cpulist(rec["cpus"]) == taskset[rank]
        assert rec["local_rank"] == rank and rec["ntasks"] == 2
    if cpus >= 2:  # two ranks bound to cores get different cores
        assert taskset[0] and taskset[1] and not set(taskset[0]) & set(taskset[1])


def test_rank_report_without_binding_and_with_two_cpus_per_task(slurm):
    mine = sorted(os.sched_getaffinity(0))  # slurmd's too: we started it
    records, taskset = _rank_reports(slurm, "-n2", "--cpu-bind=none")
    for rank, rec in records.items():
        assert parse_cpulist(rec["cpus"]) == taskset[rank] == mine  # unbound: all slurmd may use
    if len(mine) < 2:
        pytest.skip("one CPU: no room for -c2")
    records, taskset = _rank_reports(slurm, "-n1", "-c2", "--cpu-bind=cores")
    assert parse_cpulist(records[0]["cpus"]) == taskset[0] and len(taskset[0]) == 2


HEALTHCHECK = EXAMPLES / "slurm-healthcheck.sh"


def _site_config(path: Path, text: str) -> None:
    tmp = path.with_suffix(".new")
    tmp.write_text(text)
    tmp.replace(path)  # slurmd's next run reads the old or the new file, never half of one


def _hpcdoctor_exe(slurm) -> str:
    exe = Path(slurm.bin) / "hpcdoctor"
    assert exe.exists(), "the test environment installs the hpcdoctor script"
    return str(exe)


def test_health_check_drains_with_hpcdoctors_reason_and_resumes_its_own_drain(slurm):
    """The shipped HealthCheckProgram, run by slurmd itself every 2 s (tests/slurm_cluster.py)."""
    site = slurm.site_config
    slurm.wait_idle()
    with slurm.hook("healthcheck"):
        try:
            _site_config(site, "[expect]\ngpus = 1\n")
            slurm.wait_for(lambda: slurm.node_reason().startswith("hpcdoctor:"), 30, "the node was not drained")
            assert slurm.node_reason() == f"hpcdoctor: SYS001 gpu-count-mismatch: 0 GPU(s) visible, 1 expected (site config {site})"
            assert "drain" in slurm.node_state()
            (row,) = slurm.run(["sinfo", "-R", "-h"]).stdout.splitlines()  # sinfo cuts the reason to 20 columns
            assert row.startswith("hpcdoctor: SYS001 gp") and row.split()[-1] == slurm.node
            _site_config(site, "")  # the node is healthy again: hpcdoctor resumes its own drain
            slurm.wait_for(lambda: slurm.node_state() == "idle", 30, "the node was not resumed")
            # A drain that is not hpcdoctor's stays, whatever hpcdoctor thinks of the node.
            slurm.run(["scontrol", "update", f"nodename={slurm.node}", "state=drain", "reason=admin: new DIMM"], check=True)
            time.sleep(5)  # two health check rounds
            assert slurm.node_reason() == "admin: new DIMM" and "drain" in slurm.node_state()
        finally:
            _site_config(site, "")
            slurm.run(["scontrol", "update", f"nodename={slurm.node}", "state=resume"])
    slurm.wait_idle()


def _run_healthcheck(slurm, tmp_path, env, limit=60):
    t0 = time.monotonic()
    res = subprocess.run(["bash", str(HEALTHCHECK)], capture_output=True, text=True, timeout=limit,
                         env=dict(slurm.env, HPCDOCTOR=_hpcdoctor_exe(slurm), SLURMD_NODENAME=slurm.node, **env))
    return res, time.monotonic() - t0


def test_health_check_with_slurm_down_says_so_in_one_line(slurm, tmp_path):
    down = tmp_path / "down.conf"  # this cluster's configuration with nothing listening on its port
    text = slurm.conf.read_text()
    text = re.sub(r"^SlurmctldPort=\d+$", f"SlurmctldPort={_closed_port()}", text, flags=re.M)
    down.write_text(re.sub(r"^MessageTimeout=\d+$", "MessageTimeout=2", text, flags=re.M))
    res, took = _run_healthcheck(slurm, tmp_path, {"SLURM_CONF": str(down)})
    assert res.returncode == 1 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith("hpcdoctor-healthcheck: scontrol show failed (exit 1): ") and "contact" in line.lower()
    assert took < 40


def test_health_check_with_a_hung_scontrol_keeps_its_budget(slurm, tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "scontrol").write_text("#!/bin/sh\nexec sleep 600\n")  # a slurmctld that never answers
    (fake / "scontrol").chmod(0o755)
    res, took = _run_healthcheck(slurm, tmp_path, {"PATH": f"{fake}:{slurm.env['PATH']}", "SCONTROL_LIMIT": "2"})
    assert res.returncode == 1 and res.stdout == ""
    assert res.stderr.splitlines() == [f"hpcdoctor-healthcheck: scontrol show did not answer within 2s (node {slurm.node} left as it is)"]
    assert took < 10


def _closed_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    return port


PROLOG, EPILOG = EXAMPLES / "prometheus" / "slurm-prolog.sh", EXAMPLES / "prometheus" / "slurm-epilog.sh"


def _finding_codes(prom: str) -> set:
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.labels["code"], s.labels["subject"]) for fam in text_string_to_metric_families(prom)
            for s in fam.samples if s.name == "hpcdoctor_finding"}


def test_prolog_and_epilog_write_node_metrics_that_do_not_depend_on_the_job(slurm, tmp_path):
    slurm.wait_idle()
    with slurm.hook("prolog") as pro, slurm.hook("epilog") as epi:
        res = slurm.run(["srun", "-n2", "true"], timeout=60)
        assert res.returncode == 0, res.stderr
        slurm.wait_for(lambda: (epi / "hpcdoctor.prom").exists(), 30, "the epilog wrote no metrics")
        assert (pro / "hpcdoctor.prom").exists(), "the prolog wrote no metrics"
    # The timer's run on the same node, outside any job, with a service's plain environment (the
    # hooks' hpcdoctor finds python3 on the default path too): the node's metrics must say the same.
    timer = tmp_path / "timer.prom"
    subprocess.run([_hpcdoctor_exe(slurm), "check", "--format", "prometheus", "--fail-on", "never", "--budget", "15",
                    "--output", str(timer)], check=True, timeout=60, env={"PATH": os.defpath.strip(":")})
    node = _finding_codes(timer.read_text())
    assert _finding_codes((pro / "hpcdoctor.prom").read_text()) == node
    assert _finding_codes((epi / "hpcdoctor.prom").read_text()) == node
    assert sorted(p.name for p in pro.iterdir()) == ["hpcdoctor.prom"]  # no temporary file left behind


def test_triage_reads_what_this_slurm_says_of_requests_no_node_can_hold(slurm, tmp_path):
    """sbatch's own refusals on this real cluster, pasted into triage: a memory request beyond the
    node, and a partition given as a #SBATCH variable that sbatch passes on unexpanded."""
    big = int(slurm.shape["RealMemory"]) * 100
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\n#SBATCH --partition=$part\n#SBATCH -n 1\nsrun hostname\n")
    text = []
    for argv in (["sbatch", f"--mem={big}", "--wrap=true"], ["sbatch", str(script)]):
        res = slurm.run(argv, timeout=30, cwd=tmp_path)
        assert res.returncode == 1, res.stdout + res.stderr
        text += [f"$ {' '.join(argv)}", res.stderr.rstrip(), script.read_text() if argv[-1] == str(script) else ""]
    paste = tmp_path / "ticket.txt"
    paste.write_text("\n".join(text))
    res = subprocess.run([_hpcdoctor_exe(slurm), "check", "--from", str(paste), "--format", "json"],
                         capture_output=True, text=True, timeout=60)
    found = {f["symbol"]: f for f in json.loads(res.stdout)["findings"]}
    assert "Memory specification can not be satisfied" in found["slurm-request-exceeds-node"]["message"]
    access = found["slurm-invalid-account"]["message"]
    assert 'partition "$part"' in access and "--partition from $part" in access


def test_cluster_check_under_srun_finds_its_store_from_slurms_variables(slurm):
    from conftest import torch_python

    py = torch_python()
    slurm.wait_idle()
    assert not {"MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK"} & set(slurm.env)
    res = slurm.run(["srun", "-n2", "--cpu-bind=cores", "--label", "hpcdoctor", "check", "--cluster", "--python", py,
                     "--format", "json", "--cluster-timeout", "30", "--fail-on", "never"], timeout=120)
    by_rank = {}
    for ln in res.stdout.splitlines():
        rank, _, text = ln.partition(": ")
        by_rank.setdefault(rank.strip(), []).append(text)
    assert list(by_rank) == ["0"], res.stdout[-2000:] + res.stderr[-2000:]  # the report is rank 0's alone
    result = json.loads("\n".join(by_rank["0"]))
    assert result["nodes"] == [slurm.node] and result["missing_ranks"] == [] and result["rejected_posts"] == []
    assert result["node_checked_by"] == {slurm.node: 0}  # one check for the node, by its first local rank
    assert sorted(result["ranks"]) == ["0", "1"]
    if int(slurm.shape["CPUs"]) >= 2:  # each rank's CPUs as Slurm bound them, and no two share one
        cpus = [set(parse_cpulist(result["ranks"][r]["cpus"])) for r in ("0", "1")]
        assert not cpus[0] & cpus[1] and result["shared_cpus"] == []
