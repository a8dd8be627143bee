"""checks/clock_sync.py's adjtimex reading against node_exporter's timex collector, which reads the
same syscall (collector/timex.go: node_timex_sync_status, node_timex_maxerror_seconds), on this
machine."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hpcdoctor.checks.clock_sync import read_adjtimex, timex_facts
from slurm_cluster import die_with_parent

pytestmark = pytest.mark.slow  # a real node_exporter


def _exporter() -> str:
    path = shutil.which("prometheus-node-exporter", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") or shutil.which("node_exporter")
    if path:
        return path
    why = "prometheus-node-exporter not installed (Debian: apt-get install prometheus-node-exporter)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"required in CI: {why}")
    pytest.skip(why)


def _timex_metrics(exporter: str) -> dict:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen([exporter, f"--web.listen-address=127.0.0.1:{port}", "--collector.disable-defaults",
                             "--collector.timex"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=die_with_parent)
    deadline = time.monotonic() + 15
    try:
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                    text = r.read().decode("utf-8")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return {s.name: s.value for fam in text_string_to_metric_families(text) for s in fam.samples
            if s.name.startswith("node_timex_")}


def test_synchronised_and_maxerror_agree_with_node_exporter():
    exporter = _exporter()
    before = timex_facts(read_adjtimex())
    served = _timex_metrics(exporter)
    after = timex_facts(read_adjtimex())
    assert before["synchronised"] == after["synchronised"], "the clock state changed during the test: rerun"
    # node_exporter calls "synchronised" what adjtimex's return value says (not TIME_ERROR); ours also
    # counts STA_UNSYNC, which the kernel sets together with TIME_ERROR
    assert served["node_timex_sync_status"] == (1.0 if before["synchronised"] else 0.0)
    assert served["node_timex_status"] == float(before["status"])
    # maxerror grows by 500 us a second while unsynchronised: compare within the seconds the scrape took
    lo, hi = sorted((before["maxerror_s"], after["maxerror_s"]))
    assert lo - 1e-3 <= served["node_timex_maxerror_seconds"] <= hi + 1e-3
