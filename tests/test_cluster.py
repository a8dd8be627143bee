"""Cluster mode: several local processes gather through torch.distributed's TCPStore."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time


from conftest import NODES, torch_python
from hpcdoctor.payload.cluster_probe import first_host
from hpcdoctor.report import cluster


def _port():
    from hpcdoctor.payload.bench_probe import free_port

    return free_port()


def _node(tmp_path, fixture, host):
    snap = tmp_path / host
    shutil.copytree(NODES / fixture, snap)
    (snap / "fs" / "proc" / "sys" / "kernel").mkdir(parents=True, exist_ok=True)
    (snap / "fs" / "proc" / "sys" / "kernel" / "hostname").write_text(host + "\n")
    return str(snap)


def _launch(rank, world, port, source, py, *extra):
    env = dict(os.environ, RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    return subprocess.Popen([sys.executable, "-m", "hpcdoctor", "check", "--cluster", "--python", py, "--from", source,
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_first_host_of_a_slurm_nodelist():
    assert first_host("gpu[001-004,010],cpu7") == "gpu001"
    assert first_host("nid001234") == "nid001234"


def test_two_ranks_gather_and_differences_are_reported(tmp_path):
    py = torch_python()
    port = _port()
    a, b = _node(tmp_path, "h100-kvm-1gpu", "node-a"), _node(tmp_path, "h100-kvm-1gpu", "node-b")
    # node-b: a different driver, as after a partial rolling upgrade
    xml = os.path.join(b, "cmd", "nvsmi_qx.txt")
    text = open(xml).read().replace("<driver_version>580.159.04</driver_version>", "<driver_version>570.86.15</driver_version>")
    open(xml, "w").write(text)
    procs = [_launch(0, 2, port, a, py, "--format", "json"), _launch(1, 2, port, b, py)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert procs[1].returncode == 0 and outs[1][0] == ""  # only rank 0 prints
    result = json.loads(outs[0][0])
    assert result["nodes"] == ["node-a", "node-b"] and result["missing_ranks"] == []
    (drv,) = [d for d in result["divergent"] if d["fact"] == "NVIDIA driver"]
    assert drv["differ"] == {"node-b": "570.86.15"} or drv["differ"] == {"node-a": "580.159.04"}
    assert procs[0].returncode == 1  # a divergent node is a problem


def test_a_rank_that_never_arrives_gives_a_partial_result_and_exit_2(tmp_path):
    py = torch_python()
    port = _port()
    t0 = time.monotonic()
    p0 = _launch(0, 3, port, _node(tmp_path, "cpu-kvm-2core", "node-a"), py, "--cluster-timeout", "4")
    p1 = _launch(1, 3, port, _node(tmp_path, "cpu-kvm-2core", "node-b"), py, "--cluster-timeout", "4")
    out0, err0 = p0.communicate(timeout=60)
    p1.communicate(timeout=60)
    assert time.monotonic() - t0 < 40
    assert p0.returncode == 2
    assert "ranks that never reported: 2" in out0 and "never reported" in err0
    assert "2 node(s), 3 rank(s)" in out0


def test_straggler_and_grouping_analysis():
    def doc(host, tflops, codes):
        return {"facts": {"system": {"hostname": host}, "bench": {"gpus": [{"gemm": {"bf16": {"tflops": tflops}}}]}},
                "findings": [{"severity": "warning", "code": c, "symbol": c.lower()} for c in codes]}

    gathered = {"world_size": 3, "missing": [], "reports": {
        "0": doc("n1", 730.0, ["GPU006"]), "1": doc("n2", 725.0, []), "2": doc("n3", 510.0, ["GPU006"])}}
    r = cluster.analyse(gathered)
    assert [s["node"] for s in r["stragglers"]] == ["n3"]
    assert r["findings"] == [{"severity": "warning", "code": "GPU006", "symbol": "gpu006", "nodes": ["n1", "n3"]}]
    assert "Straggler: n3" in cluster.render(r)
