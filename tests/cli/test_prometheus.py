"""--format prometheus, checked with the Prometheus client's own parser against the JSON report of
the same run, on the replayed H100 node, a paste, real CPU benchmark figures and hostile labels."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import FIXTURES, NODES, ROOT, report_of, run_cli, run_main, torch_python
from hpcdoctor.report import prometheus

EXAMPLES = ROOT / "examples" / "prometheus"


def samples(text: str):
    """{(name, frozenset(labels)): value} from the exposition text, parsed by the client's parser."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, f"duplicate sample {key}"
            out[key] = s.value
    return out


def value(parsed, _metric, **labels):
    return parsed.get((_metric, frozenset((k, str(v)) for k, v in labels.items())))


def _matches_report(doc, parsed):
    findings = doc["findings"]
    got = {dict(k[1])["code"] + "/" + dict(k[1])["subject"] for k in parsed if k[0] == "hpcdoctor_finding"}
    assert got == {f["code"] + "/" + (f.get("subject") or "") for f in findings}
    for sev in ("error", "warning", "advice"):
        assert value(parsed, "hpcdoctor_findings", severity=sev) == sum(f["severity"] == sev for f in findings)
    bad = {n for n, p in doc["checks"].items() if p["status"] != "ok"}
    assert value(parsed, "hpcdoctor_checks_unknown") == len(bad)
    assert {dict(k[1])["check"] for k in parsed if k[0] == "hpcdoctor_check_unknown"} == bad
    assert value(parsed, "hpcdoctor_run_duration_seconds") == pytest.approx(doc["elapsed_s"])
    info = [dict(k[1]) for k in parsed if k[0] == "hpcdoctor_info"]
    assert info == [{"version": doc["tool"]["version"], "depth": doc["depth"], "source": doc["source"]["mode"]}]


def test_replayed_h100_round_trips_through_the_parser():
    doc = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"), "--fail-on", "never")
    parsed = samples(prometheus.render(doc))
    _matches_report(doc, parsed)
    g = doc["facts"]["gpus"][0]
    assert value(parsed, "hpcdoctor_gpu_pcie_link_gen", gpu=0, which="current") == g["pcie_gen"]
    assert value(parsed, "hpcdoctor_gpu_pcie_link_width", gpu=0, which="max") == g["pcie_width_max"]
    assert value(parsed, "hpcdoctor_gpu_ecc_uncorrectable_errors", gpu=0, scope="aggregate") == \
        g["ecc_uncorrectable_aggregate"]
    assert value(parsed, "hpcdoctor_gpu_remapped_rows_pending", gpu=0) == float(g["remapped_rows"]["pending"])
    for reason in g["clock_event_reasons"]:
        assert value(parsed, "hpcdoctor_gpu_clock_event_reason", gpu=0, reason=reason) == 1
    assert value(parsed, "hpcdoctor_gpu_info", gpu=0, name=g["name"], pci_bus_id=g["pci_bus_id"],
                 driver=g["driver_version"]) == 1
    # Unknown is absent, never 0, and said so.
    assert doc["unknown"].get("gpus.0.retired_pages_pending")
    assert value(parsed, "hpcdoctor_gpu_retired_pages_pending", gpu=0) is None
    assert value(parsed, "hpcdoctor_fact_unknown", fact="gpus.0.retired_pages_pending") == 1


def test_paste_round_trips_and_cli_writes_the_file_atomically(tmp_path):
    paste = FIXTURES / "pastes" / "vllm-dstack-8xh100-collect_env-indented.txt"
    doc = report_of("check", "--from", str(paste), "--fail-on", "never")
    _matches_report(doc, samples(prometheus.render(doc)))
    out = tmp_path / "textfile" / "hpcdoctor.prom"
    out.parent.mkdir()
    out.write_text("stale\n")
    res = run_main("check", "--from", str(paste), "--format", "prometheus", "--output", str(out), "--fail-on", "never")
    assert res.returncode == 0, res.stderr
    parsed = samples(out.read_text())
    assert value(parsed, "hpcdoctor_findings", severity="error") == sum(f["severity"] == "error" for f in doc["findings"])
    assert sorted(p.name for p in out.parent.iterdir()) == ["hpcdoctor.prom"]  # no temporary left behind
    assert sum(1 for k in parsed if k[0] == "hpcdoctor_gpu_info") == 8


def test_hostile_label_values_stay_valid():
    name = 'NVIDIA "H100"\nfake_metric{x="1"} 1\\'
    doc = {"tool": {"version": "0"}, "depth": "fast", "source": {"mode": "live"}, "elapsed_s": 0.1,
           "checks": {'nv"ml\n': {"status": "timeout"}}, "unknown": {},
           "findings": [{"code": "GPU001", "symbol": "x", "severity": "error", "subject": name}],
           "facts": {"gpus": [{"index": 0, "name": name, "ecc_enabled": True}]}}
    text = prometheus.render(doc)
    parsed = samples(text)
    assert "fake_metric" not in {k[0] for k in parsed}
    assert value(parsed, "hpcdoctor_gpu_info", gpu=0, name=name, pci_bus_id="", driver="") == 1
    assert value(parsed, "hpcdoctor_check_unknown", check='nv"ml\n', status="timeout") == 1
    subjects = [dict(k[1])["subject"] for k in parsed if k[0] == "hpcdoctor_finding"]
    assert subjects == [name]


def test_non_finite_and_unknown_values_are_not_exported_as_numbers():
    doc = {"tool": {"version": "0"}, "depth": "fast", "source": {"mode": "live"}, "elapsed_s": float("nan"),
           "checks": {}, "unknown": {}, "findings": [],
           "facts": {"gpus": [{"index": 0, "name": "g", "temperature_c": None, "power_limit_w": float("inf")}]}}
    parsed = samples(prometheus.render(doc))
    assert value(parsed, "hpcdoctor_run_duration_seconds") is None
    assert value(parsed, "hpcdoctor_gpu_temperature_celsius", gpu=0) is None
    assert value(parsed, "hpcdoctor_gpu_power_limit_watts", gpu=0) is None
    assert all(not math.isnan(v) for v in parsed.values())


def _h100_bench_from_recording():
    """The H100 node's measured figures (bench.txt, recorded there) in the payload's own shape."""
    text = (NODES / "h100-kvm-1gpu" / "bench.txt").read_text()
    gemm = {}
    for n, dtype, tflops in re.findall(r"^gemm n=(\d+) (\w+) ([\d.]+) TFLOP/s", text, re.M):
        if dtype not in gemm or float(tflops) > gemm[dtype]["tflops"]:
            gemm[dtype] = {"n": int(n), "tflops": float(tflops)}
    d2d = float(re.search(r"^d2d ([\d.]+) GB/s", text, re.M).group(1))
    pinned = float(re.search(r"^h2d pinned=True ([\d.]+)", text, re.M).group(1))
    return {"gpus": [{"index": 0, "gemm": gemm, "memory": {"d2d_gbs": d2d, "h2d_pinned_gbs": pinned}}]}, gemm


@pytest.mark.slow  # runs check --bench quick: a real benchmark
def test_every_benchmark_figure_is_exported(tmp_path):
    py = torch_python()
    doc = report_of("check", "--bench", "quick", "--python", py, "--fail-on", "never", timeout=180)
    bench = doc["facts"]["bench"]
    assert isinstance(bench, dict), doc["unknown"].get("bench")
    parsed = samples(prometheus.render(doc))
    cpu_figures = {k: v["gflops"] for k, v in (bench.get("cpu") or {}).items()
                   if isinstance(v, dict) and isinstance(v.get("gflops"), (int, float))}
    for dtype, gflops in cpu_figures.items():
        assert value(parsed, "hpcdoctor_bench_cpu_gemm_gflops", dtype=dtype) == pytest.approx(gflops)
    rows = (bench.get("allreduce") or {}).get("results") or []
    if rows:
        assert value(parsed, "hpcdoctor_bench_allreduce_busbw_gbs", backend=bench["allreduce"]["backend"]) == \
            pytest.approx(rows[-1]["busbw_gbs"])
    # Each CPU measurement is a figure or a stated reason, never silently absent.
    for dtype, entry in (bench.get("cpu") or {}).items():
        if isinstance(entry, dict) and dtype not in cpu_figures and dtype not in ("threads", "n"):
            assert entry, dtype
    gpu_bench, gemm = _h100_bench_from_recording()
    parsed = samples(prometheus.render({**doc, "facts": {**doc["facts"], "bench": gpu_bench}}))
    for dtype, r in gemm.items():
        assert value(parsed, "hpcdoctor_bench_gemm_tflops", gpu=0, dtype=dtype) == pytest.approx(r["tflops"])
    assert value(parsed, "hpcdoctor_bench_copy_gbs", gpu=0, kind="d2d") == 3015


def test_one_file_for_all_nodes_labels_every_sample_by_node():
    a = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"), "--fail-on", "never")
    b = report_of("check", "--from", str(NODES / "cpu-kvm-2core"), "--fail-on", "never")
    from prometheus_client import generate_latest

    parsed = samples(generate_latest(prometheus.registry_for_nodes({"gpu01": a, "cpu01": b})).decode())
    assert all(dict(k[1]).get("node") in ("gpu01", "cpu01") for k in parsed)
    assert value(parsed, "hpcdoctor_gpu_pcie_link_gen", node="gpu01", gpu=0, which="current") == 5
    assert not any(dict(k[1]).get("node") == "cpu01" and k[0].startswith("hpcdoctor_gpu_") for k in parsed)


# --- the examples -----------------------------------------------------------------------------

def _hpcdoctor_exe() -> str:
    exe = Path(sys.executable).parent / "hpcdoctor"
    assert exe.exists(), "the test environment installs the hpcdoctor script"
    return str(exe)


def test_systemd_units_verify_and_their_command_runs(tmp_path):
    service = (EXAMPLES / "hpcdoctor-textfile.service").read_text()
    timer = (EXAMPLES / "hpcdoctor-textfile.timer").read_text()
    out = tmp_path / "textfile" / "hpcdoctor.prom"
    out.parent.mkdir()
    service = service.replace("/opt/hpcdoctor/bin/hpcdoctor", _hpcdoctor_exe()).replace(
        "/var/lib/node_exporter/textfile", str(out.parent))
    (tmp_path / "hpcdoctor-textfile.service").write_text(service)
    (tmp_path / "hpcdoctor-textfile.timer").write_text(timer)
    if shutil.which("systemd-analyze"):
        res = subprocess.run(["systemd-analyze", "verify", "hpcdoctor-textfile.service", "hpcdoctor-textfile.timer"],
                             capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert res.returncode == 0, res.stdout + res.stderr
    (execstart,) = [ln.split("=", 1)[1] for ln in service.splitlines() if ln.startswith("ExecStart=")]
    res = subprocess.run(execstart.split(), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    parsed = samples(out.read_text())
    assert value(parsed, "hpcdoctor_checks_unknown") is not None


@pytest.mark.parametrize("script", ["slurm-prolog.sh", "slurm-epilog.sh"])
def test_slurm_prolog_and_epilog_write_metrics_and_never_fail(script, tmp_path):
    path = EXAMPLES / script
    subprocess.run(["bash", "-n", str(path)], check=True)
    env = dict(os.environ, HPCDOCTOR=_hpcdoctor_exe(), HPCDOCTOR_TEXTFILE_DIR=str(tmp_path))
    res = subprocess.run(["bash", str(path)], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout == ""
    assert "hpcdoctor_findings" in {f.name for f in text_string_to_metric_families((tmp_path / "hpcdoctor.prom").read_text())}
    env["HPCDOCTOR"] = str(tmp_path / "missing")  # a broken install must not fail the job's prolog
    assert subprocess.run(["bash", str(path)], env=env, timeout=60).returncode == 0


def test_json_report_of_prometheus_names_is_stable():
    # The metric names are a contract with dashboards and alerts: a rename must be deliberate.
    doc = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"), "--fail-on", "never")
    names = {f.name for f in text_string_to_metric_families(prometheus.render(doc))}
    expected = {"hpcdoctor_info", "hpcdoctor_run_duration_seconds", "hpcdoctor_run_timestamp_seconds",
                "hpcdoctor_findings", "hpcdoctor_checks_unknown", "hpcdoctor_gpu_info", "hpcdoctor_gpu_ecc_enabled",
                "hpcdoctor_gpu_ecc_uncorrectable_errors", "hpcdoctor_gpu_remapped_rows",
                "hpcdoctor_gpu_remapped_rows_pending", "hpcdoctor_gpu_pcie_link_gen", "hpcdoctor_gpu_pcie_link_width",
                "hpcdoctor_gpu_clock_event_reason"}
    assert expected <= names, expected - names


def test_cluster_rank_0_exports_each_node_once(tmp_path):
    """The gathered document rank 0 holds (rank -> report), two ranks on one node: each node's
    samples appear once, labelled by its host name."""
    from hpcdoctor.cluster import analysis

    a = report_of("check", "--from", str(NODES / "h100-kvm-1gpu"), "--fail-on", "never")
    b = report_of("check", "--from", str(NODES / "cpu-kvm-2core"), "--fail-on", "never")
    a["facts"]["system"]["hostname"], b["facts"]["system"]["hostname"] = "gpu01", "cpu01"  # both recorded as "vm"
    gathered = {"world_size": 3, "nodes": {"0": a, "1": a, "2": b}}
    docs = analysis.node_reports(gathered)
    assert len(docs) == 2
    out = tmp_path / "all.prom"
    prometheus.write_registry(prometheus.registry_for_nodes(docs), str(out))
    parsed = samples(out.read_text())
    hosts = {dict(k[1])["node"] for k in parsed}
    assert hosts == set(docs) == {"gpu01", "cpu01"}
    assert value(parsed, "hpcdoctor_gpu_pcie_link_width", node="gpu01", gpu=0, which="current") == 16
    assert not any(k[0] == "hpcdoctor_gpu_info" and dict(k[1])["node"] == "cpu01" for k in parsed)


# --- node metrics judge the node; a textfile folder that cannot be written --------------------

JOB_ENV = {"SLURM_JOB_ID": "42", "SLURM_JOBID": "42", "SLURM_JOB_NTASKS": "4", "SLURM_NTASKS": "4",
           "SLURM_JOB_NUM_NODES": "1", "SLURM_TASKS_PER_NODE": "4", "SLURM_CPUS_PER_TASK": "1"}


def test_node_metrics_set_the_jobs_variables_aside(tmp_path):
    """What a Prolog sees (a job of 4 tasks, no OMP_NUM_THREADS) changes the job's findings but not
    the node's metrics."""
    from hpcdoctor.nodescope import is_job_variable

    clean = {k: v for k, v in os.environ.items() if not is_job_variable(k) and k != "OMP_NUM_THREADS"}
    res = subprocess.run([sys.executable, "-m", "hpcdoctor", "check", "--format", "json", "--fail-on", "never"],
                         env=dict(clean, **JOB_ENV), capture_output=True, text=True, timeout=120)
    in_job = json.loads(res.stdout)
    assert "THR001" in {f["code"] for f in in_job["findings"]}  # the job's own finding, where it belongs
    files = {}
    for name, env in (("job", JOB_ENV), ("timer", {})):
        out = tmp_path / f"{name}.prom"
        res = subprocess.run([sys.executable, "-m", "hpcdoctor", "check", "--format", "prometheus", "--fail-on", "never",
                              "--output", str(out)], env=dict(clean, **env), capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        files[name] = {dict(k[1])["code"] for k in samples(out.read_text()) if k[0] == "hpcdoctor_finding"}
    assert "THR001" not in files["job"] and files["job"] == files["timer"]


def test_node_environment_puts_everything_back():
    from hpcdoctor.nodescope import node_environment

    env = {"SLURM_JOB_ID": "1", "SLURM_CONF": "/etc/slurm/slurm.conf", "CUDA_VISIBLE_DEVICES": "0", "OMP_NUM_THREADS": "8",
           "MPI_LOCALRANKID": "0"}
    before = dict(env)
    with node_environment(env) as aside:
        assert env == {"SLURM_CONF": "/etc/slurm/slurm.conf", "OMP_NUM_THREADS": "8"}
        assert aside == ["CUDA_VISIBLE_DEVICES", "MPI_LOCALRANKID", "SLURM_JOB_ID"]
    assert env == before


def _limit_file_size(size):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))  # Python ignores SIGXFSZ: writes fail with EFBIG
    return limit


def test_a_write_that_fails_half_way_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "textfile" / "hpcdoctor.prom"
    out.parent.mkdir()
    out.write_text("# the previous run's metrics\n")
    t0 = time.monotonic()
    res = subprocess.run([sys.executable, "-m", "hpcdoctor", "check", "--format", "prometheus", "--fail-on", "never",
                          "--budget", "10", "--output", str(out)], capture_output=True, text=True, timeout=60,
                         preexec_fn=_limit_file_size(300))
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.splitlines() == [f"hpcdoctor: error: cannot write {out}: File too large"]
    assert out.read_text() == "# the previous run's metrics\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["hpcdoctor.prom"]
    assert time.monotonic() - t0 < 30


def test_a_textfile_folder_that_cannot_be_written_is_one_line_and_the_prolog_still_passes():
    unwritable = "/sys/kernel"  # sysfs: no one, root included, creates a file there
    res = run_cli("check", "--format", "prometheus", "--fail-on", "never", "--budget", "10",
                  "--output", f"{unwritable}/hpcdoctor.prom")
    assert res.returncode == 2 and res.stdout == ""
    (line,) = res.stderr.splitlines()
    assert line.startswith(f"hpcdoctor: error: cannot write {unwritable}/hpcdoctor.prom: ")
    env = dict(os.environ, HPCDOCTOR=_hpcdoctor_exe(), HPCDOCTOR_TEXTFILE_DIR=unwritable)
    res = subprocess.run(["bash", str(EXAMPLES / "slurm-prolog.sh")], env=env, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and res.stdout == "" and res.stderr.splitlines() == [line]
