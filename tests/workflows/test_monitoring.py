"""hpcdoctor's metrics in the real Prometheus tools (Debian: prometheus-node-exporter, prometheus):
node_exporter's textfile collector serves the file hpcdoctor wrote, promtool lints it, and the
shipped alerting rules pass their own unit tests. Skipped where the tools are absent outside CI;
in CI (CI=true) their absence is a failure."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import NODES, ROOT, run_cli
from slurm_cluster import die_with_parent

pytestmark = pytest.mark.slow  # a real node_exporter and promtool

ALERTS = ROOT / "examples" / "prometheus" / "hpcdoctor-alerts.yml"
ALERT_TESTS = ROOT / "examples" / "prometheus" / "hpcdoctor-alerts.test.yml"


def tool(*names: str) -> str:
    for name in names:
        path = shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
        if path:
            return path
    why = f"{names[0]} not installed (Debian: apt-get install prometheus-node-exporter prometheus)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"required in CI: {why}")
    pytest.skip(why)


def _samples(text: str) -> dict:
    return {(s.name, frozenset(s.labels.items())): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def _node_file(folder: Path, *args: str) -> Path:
    folder.mkdir(exist_ok=True)
    out = folder / "hpcdoctor.prom"
    res = run_cli("check", "--format", "prometheus", "--fail-on", "never", "--output", str(out), *args)
    assert res.returncode == 0, res.stderr
    return out


def _free_port() -> int:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _scrape(url: str, proc: subprocess.Popen, deadline: float) -> str:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode("utf-8")
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_node_exporter_serves_hpcdoctors_file(tmp_path):
    exporter = tool("prometheus-node-exporter", "node_exporter")
    folder = tmp_path / "textfile"
    prom = _node_file(folder)
    port = _free_port()
    proc = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                             "--collector.textfile", f"--collector.textfile.directory={folder}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=die_with_parent)
    try:
        url = f"http://127.0.0.1:{port}/metrics"
        served = _samples(_scrape(url, proc, time.monotonic() + 15))
        assert served[("node_textfile_scrape_error", frozenset())] == 0
        assert ("node_textfile_mtime_seconds", frozenset({("file", str(prom))})) in served or \
            ("node_textfile_mtime_seconds", frozenset({("file", "hpcdoctor.prom")})) in served
        written = _samples(prom.read_text())
        ours = {k: v for k, v in served.items() if k[0].startswith("hpcdoctor_")}
        assert ours == written and ("hpcdoctor_checks_unknown", frozenset()) in ours
        # The check can fail: a file the collector cannot parse is flagged on the next scrape.
        (folder / "broken.prom").write_text("hpcdoctor_x{ 1\n")
        assert _samples(_scrape(url, proc, time.monotonic() + 15))[("node_textfile_scrape_error", frozenset())] == 1
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


@pytest.mark.parametrize("source", ["live", "h100-kvm-1gpu"])
def test_promtool_check_metrics_passes_on_hpcdoctors_file(source, tmp_path):
    promtool = tool("promtool")
    prom = _node_file(tmp_path / "textfile", *([] if source == "live" else ["--from", str(NODES / source)]))
    res = subprocess.run([promtool, "check", "metrics"], input=prom.read_text(), capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr
    # and promtool does lint: a counter without _total is reported
    bad = "# HELP x_bytes a counter\n# TYPE x_bytes counter\nx_bytes 1\n"
    res = subprocess.run([promtool, "check", "metrics"], input=bad, capture_output=True, text=True, timeout=60)
    assert res.returncode != 0


def test_alerting_rules_pass_their_unit_tests():
    promtool = tool("promtool")
    res = subprocess.run([promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and "SUCCESS: 6 rules found" in res.stdout, res.stdout + res.stderr
    res = subprocess.run([promtool, "test", "rules", ALERT_TESTS.name], capture_output=True, text=True, timeout=60,
                         cwd=ALERT_TESTS.parent)
    assert res.returncode == 0, res.stdout + res.stderr


def test_alerting_rules_name_only_metrics_hpcdoctor_writes():
    """A renamed metric must break the rules' test, not silence an alert in production."""
    from hpcdoctor.report import prometheus

    doc = {"tool": {"version": "0"}, "depth": "fast", "source": {"mode": "live"}, "elapsed_s": 1.0,
           "generated_at": "2026-11-25T00:00:00Z", "checks": {"gpu_nvidia": {"status": "timeout"}}, "unknown": {},
           "unchecked": [{"area": "gpu", "what": "the GPUs", "reason": "nvidia-smi timed out"}],
           "findings": [{"code": "SYS001", "symbol": "gpu-count-mismatch", "severity": "error"}],
           "facts": {"gpus": [{"index": 0, "name": "H100", "ecc_uncorrectable_volatile": 0,
                               "remapped_rows": {"pending": False, "failed": False}, "retired_pages_pending": False}]}}
    names = {f.name for f in text_string_to_metric_families(prometheus.render(doc))}
    used = set(re.findall(r"\b(hpcdoctor_[a-z_]+)", ALERTS.read_text()))
    assert used and used <= names, used - names
