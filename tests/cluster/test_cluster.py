"""Cluster mode: several local processes gather through torch.distributed's TCPStore."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import NODES, torch_python
from hpcdoctor.payload.cluster_probe import first_host
from hpcdoctor.cluster import analysis
from hpcdoctor.report import cluster


def _port():
    from hpcdoctor.payload.bench_allreduce import free_port

    return free_port()


def _node(tmp_path, fixture, host):
    snap = tmp_path / host
    shutil.copytree(NODES / fixture, snap)
    (snap / "fs" / "proc" / "sys" / "kernel").mkdir(parents=True, exist_ok=True)
    (snap / "fs" / "proc" / "sys" / "kernel" / "hostname").write_text(host + "\n")
    return str(snap)


def _launch(rank, world, port, source, py, *extra):
    # Each rank stands for a node of its own (the snapshot it replays): the first rank on it.
    home = Path(tempfile.gettempdir()) / f"hpcdoctor-test-home-{port}"  # the job's shared home
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
               MASTER_PORT=str(port), LOCAL_RANK="0")
    return subprocess.Popen([sys.executable, "-m", "hpcdoctor", "check", "--cluster", "--python", py, "--from", source,
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_payload_waits_for_a_node_report_written_after_it_started(tmp_path):
    # the node check and the payload's torch import run at once; on a loaded node the import won and
    # the payload opened a report not yet written (FileNotFoundError, rank 1 exit 2 in CI)
    import threading

    from hpcdoctor.payload.cluster_probe import await_report

    path = tmp_path / "local.json"

    def write_late():
        time.sleep(0.3)
        part = tmp_path / "local.json.part"
        part.write_text(json.dumps({"node": {}, "rank": {"rank": 1}}))
        os.replace(part, path)

    threading.Thread(target=write_late).start()
    assert await_report(str(path), 10) == {"node": {}, "rank": {"rank": 1}}
    with pytest.raises(SystemExit, match="wrote no report"):
        await_report(str(tmp_path / "never.json"), 0.2)


def test_first_host_of_a_slurm_nodelist():
    assert first_host("gpu[001-004,010],cpu7") == "gpu001"
    assert first_host("nid001234") == "nid001234"


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
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
    assert procs[1].returncode == 0 and outs[1][0] == "", outs[1][1][-2000:]  # only rank 0 prints
    result = json.loads(outs[0][0])
    assert result["nodes"] == ["node-a", "node-b"] and result["missing_ranks"] == []
    (drv,) = [d for d in result["divergent"] if d["fact"] == "NVIDIA driver"]
    assert drv["differ"] == {"node-b": "570.86.15"} or drv["differ"] == {"node-a": "580.159.04"}
    assert procs[0].returncode == 1  # a divergent node is a problem


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
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
    r = analysis.analyse(gathered)
    assert [s["node"] for s in r["stragglers"]] == ["n3"]
    assert r["findings"] == [{"severity": "warning", "code": "GPU006", "symbol": "gpu006", "nodes": ["n1", "n3"],
                              "message": "", "fix": ""}]
    assert "Straggler (CLU004 node-straggler): n3" in cluster.render(r)


def _rank(rank, world, port, py, node, source=None, local=0, per_node=1, extra=(), env_extra=None):
    """One rank as srun/torchrun starts it; `node` is its host name for the node-local channel
    (a test-only override) and `source` the snapshot its leader replays."""
    home = Path(tempfile.gettempdir()) / f"hpcdoctor-test-home-{port}"  # the job's shared home
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home), RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
               LOCAL_RANK=str(local), LOCAL_WORLD_SIZE=str(per_node), HPCDOCTOR_TESTING="1", HPCDOCTOR_TEST_NODE=node,
               GLOO_SOCKET_IFNAME="lo",  # gloo would otherwise bind to the address the host name resolves to
               **(env_extra or {}))
    argv = [sys.executable, "-m", "hpcdoctor", "check", "--cluster", "--python", py, "--format", "json", *extra]
    if source:
        argv += ["--from", source]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_two_nodes_of_two_ranks_started_in_reverse_one_check_per_node(tmp_path):
    py = torch_python()
    port = _port()
    src = {"node-a": _node(tmp_path, "cpu-kvm-2core", "node-a"), "node-b": _node(tmp_path, "cpu-kvm-2core", "node-b")}
    layout = [(0, "node-a", 0), (1, "node-a", 1), (2, "node-b", 0), (3, "node-b", 1)]
    procs = {}
    for rank, node, local in reversed(layout):
        # the followers get a python without torch: they must never need it
        procs[rank] = _rank(rank, 4, port, py if local == 0 else "/nonexistent/python3", node,
                            src[node] if local == 0 else None, local, 2)
        time.sleep(0.2)
    outs = {r: p.communicate(timeout=120) for r, p in procs.items()}
    assert all(p.returncode in (0, 1) for p in procs.values()), {r: o[1][-300:] for r, o in outs.items()}
    assert all(outs[r][0] == "" for r in (1, 2, 3))
    result = json.loads(outs[0][0])
    assert result["missing_ranks"] == [] and result["rejected_posts"] == []
    assert result["node_checked_by"] == {"node-a": 0, "node-b": 2}  # the followers checked nothing
    assert {r: v["node"] for r, v in result["ranks"].items()} == {"0": "node-a", "1": "node-a", "2": "node-b", "3": "node-b"}
    assert result["auth"] == "a secret file private to this user, ~/.hpcdoctor/cluster-secret"


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_a_slow_follower_is_waited_for(tmp_path):
    py = torch_python()
    port = _port()
    p0 = _rank(0, 2, port, py, "node-a", _node(tmp_path, "cpu-kvm-2core", "node-a"), 0, 2, ("--cluster-timeout", "30"))
    time.sleep(3)
    p1 = _rank(1, 2, port, "/nonexistent", "node-a", None, 1, 2)
    out0, err0 = p0.communicate(timeout=60)
    p1.communicate(timeout=60)
    assert p0.returncode in (0, 1), err0
    assert json.loads(out0)["missing_ranks"] == []


FOREIGN = r"""
import datetime, hashlib, hmac, json, sys
from torch.distributed import TCPStore
s = TCPStore("127.0.0.1", int(sys.argv[1]), 1, False, timeout=datetime.timedelta(seconds=20))
body = json.dumps({"job": "x", "from": 1, "node": {"facts": {"system": {"hostname": "intruder"}}},
                   "ranks": {"1": {"cpus": "0"}}}).encode()
for payload in (body, hmac.new(b"guess", body, hashlib.sha256).hexdigest().encode() + body):
    s.queue_push("hpcdoctor/posts", payload)  # where rank 0 reads posts (torch >= 2.8, libuv store)
"""


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_a_foreign_post_is_rejected_and_reported_and_the_real_rank_still_counts(tmp_path):
    py = torch_python()
    port = _port()
    env = {"HPCDOCTOR_CLUSTER_SECRET": "s3cret-for-this-job"}
    p0 = _rank(0, 2, port, py, "node-a", _node(tmp_path, "cpu-kvm-2core", "node-a"), 0, 1,
               ("--cluster-timeout", "20", "--format", "terminal"), env)
    time.sleep(2)
    subprocess.run([py, "-c", FOREIGN, str(port)], check=True, timeout=60, capture_output=True)
    p1 = _rank(1, 2, port, py, "node-b", _node(tmp_path, "cpu-kvm-2core", "node-b"), 0, 1, (), env)
    out0, err0 = p0.communicate(timeout=90)
    p1.communicate(timeout=90)
    assert p0.returncode == 2 and "rejected" in err0
    assert "2 bad or missing signature" in out0 and "intruder" not in out0
    assert "2 node(s), 2 rank(s)" in out0 and "never reported" not in out0
    assert "s3cret" not in out0 + err0 and "posts signed with a per-job key (HPCDOCTOR_CLUSTER_SECRET)" in out0


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_links_pass_with_gloo_names_the_slowed_node(tmp_path):
    py = torch_python()
    port = _port()
    hosts = ["node-a", "node-b", "node-c", "node-d"]
    procs = []
    for rank, host in enumerate(hosts):
        slow = {"HPCDOCTOR_TEST_SLOW_S": "0.3"} if host == "node-c" else {}
        procs.append(_rank(rank, 4, port, py, host, _node(tmp_path, "cpu-kvm-2core", host), 0, 1,
                           ("--bench", "quick", "--cluster-timeout", "60"), slow))
    outs = [p.communicate(timeout=240) for p in procs]
    assert all(p.returncode in (0, 1) for p in procs), [o[1][-400:] for o in outs]
    result = json.loads(outs[0][0])
    ar = result["links"]["allreduce"]
    assert ar["backend"] == "gloo" and ar["nodes"] == 4
    for row in ar["results"]:
        assert abs(row["busbw_gbs"] - row["algbw_gbs"] * 2 * 3 / 4) < 1e-9
    pairs = {(p["a"], p["b"]) for p in result["links"]["pairs"]}
    assert pairs == {("node-a", "node-b"), ("node-b", "node-c"), ("node-c", "node-d"), ("node-d", "node-a")}
    slow = sorted(f["subject"] for f in result["link_findings"] if f["symbol"] == "cluster-link-slow")
    assert slow == ["node-b <-> node-c", "node-c <-> node-d"]
    assert "every slow pair includes node-c" in result["link_findings"][0]["message"]
    # the replayed VM has no RDMA port: the all-reduce is shown but not judged, and the report says so
    assert [s["symbol"] for s in result["link_unjudged"]] == ["cluster-allreduce-low"]


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_an_absent_follower_is_named_and_the_leader_does_not_wait_past_the_timeout(tmp_path):
    py = torch_python()
    port = _port()
    t0 = time.monotonic()
    p0 = _rank(0, 3, port, py, "node-a", _node(tmp_path, "cpu-kvm-2core", "node-a"), 0, 3, ("--cluster-timeout", "4"))
    p2 = _rank(2, 3, port, "/nonexistent", "node-a", None, 2, 3)  # local rank 1 (global 1) never starts
    out0, err0 = p0.communicate(timeout=60)
    p2.communicate(timeout=60)
    assert p0.returncode == 2 and "1 of 3 rank(s) never reported" in err0
    result = json.loads(out0)
    assert result["missing_ranks"] == [1] and sorted(result["ranks"]) == ["0", "2"]
    assert time.monotonic() - t0 < 30


LAUNCHER_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def _launched(ranking, py, node, source=None, extra=()):
    """A rank as a launcher other than torchrun starts it: ``ranking`` is all it is told."""
    env = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS and not k.startswith(("SLURM_", "OMPI_", "PMI_", "MPI_"))}
    home = Path(tempfile.gettempdir()) / f"hpcdoctor-test-home-{ranking.get('MASTER_PORT', 'mpi')}"  # not the real home
    home.mkdir(exist_ok=True)
    env.update(ranking, HOME=str(home), HPCDOCTOR_TESTING="1", HPCDOCTOR_TEST_NODE=node, GLOO_SOCKET_IFNAME="lo")
    argv = [sys.executable, "-m", "hpcdoctor", "check", "--cluster", "--python", py, "--format", "json", *extra]
    if source:
        argv += ["--from", source]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(procs):
    outs = {r: p.communicate(timeout=120) for r, p in procs.items()}
    assert all(p.returncode in (0, 1) for p in procs.values()), {r: o[1][-300:] for r, o in outs.items()}
    assert all(outs[r][0] == "" for r in procs if r != 0)
    return json.loads(outs[0][0])


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_without_a_local_rank_each_node_elects_one_leader(tmp_path):
    py = torch_python()
    port = str(_port())
    src = {"node-a": _node(tmp_path, "cpu-kvm-2core", "node-a"), "node-b": _node(tmp_path, "cpu-kvm-2core", "node-b")}
    procs = {}
    for rank, node in ((0, "node-a"), (1, "node-a"), (2, "node-b"), (3, "node-b")):
        ranking = {"RANK": str(rank), "WORLD_SIZE": "4", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
        # rank 1 shares rank 0's node, which rank 0 leads: it must never need torch
        procs[rank] = _launched(ranking, "/nonexistent/python3" if rank == 1 else py, node, src[node])
        time.sleep(0.5)
    result = _finish(procs)
    assert result["missing_ranks"] == [] and sorted(result["ranks"]) == ["0", "1", "2", "3"]
    checked = result["node_checked_by"]
    assert sorted(checked) == ["node-a", "node-b"] and checked["node-a"] == 0 and checked["node-b"] in (2, 3)
    assert {r: v["node"] for r, v in result["ranks"].items()} == {"0": "node-a", "1": "node-a", "2": "node-b", "3": "node-b"}


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_mpirun_ranks_inside_an_allocation_use_the_launchers_numbers(tmp_path):
    """Open MPI's mpirun inside a one-task Slurm step: every rank inherits SLURM_PROCID=0 and
    SLURM_LOCALID=0; its own OMPI_COMM_WORLD_* variables say who is who."""
    py = torch_python()
    port = str(_port())
    src = _node(tmp_path, "cpu-kvm-2core", "node-a")
    procs = {}
    for rank in (0, 1):
        ranking = {"OMPI_COMM_WORLD_RANK": str(rank), "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": str(rank),
                   "OMPI_COMM_WORLD_LOCAL_SIZE": "2", "SLURM_PROCID": "0", "SLURM_LOCALID": "0", "SLURM_NTASKS": "1",
                   "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port}
        procs[rank] = _launched(ranking, py if rank == 0 else "/nonexistent/python3", "node-a", src if rank == 0 else None)
    result = _finish(procs)
    assert result["world_size"] == 2 and result["missing_ranks"] == []
    assert result["node_checked_by"] == {"node-a": 0} and sorted(result["ranks"]) == ["0", "1"]


def test_local_rank_prefers_the_launchers_own_variables():
    from hpcdoctor.cluster.orchestrate import local_count, local_rank

    assert local_rank({"MPI_LOCALRANKID": "3", "MPI_LOCALNRANKS": "4", "SLURM_LOCALID": "0"}) == 3
    assert local_count({"MPI_LOCALNRANKS": "4", "SLURM_STEP_TASKS_PER_NODE": "1", "SLURM_NODEID": "0"}) == 4
    assert local_rank({"SLURM_LOCALID": "1"}) == 1 and local_rank({"RANK": "5"}) is None


def test_the_cluster_summary_carries_each_findings_message_and_fix():
    from conftest import report_of

    docs = {}
    for rank, host in enumerate(("n1", "n2", "n3")):
        doc = report_of("check", "--from", str(NODES / "cpu-kvm-2core"), "--fail-on", "never")
        doc["facts"]["system"]["hostname"] = host
        docs[str(rank)] = doc
    per_node = {f["code"]: f for f in docs["0"]["findings"]}
    assert per_node
    # n3 says one of the same findings in other words (another figure, as nodes of one job do)
    docs["2"]["findings"][0] = dict(docs["2"]["findings"][0], message="the same finding, in n3's words")
    result = analysis.analyse({"world_size": 3, "missing": [], "nodes": docs})
    text = cluster.render(result)
    for f in result["findings"]:
        assert f["message"] == per_node[f["code"]]["message"] and f"{f['code']} {f['symbol']}: " in text
        assert f["message"][:60] in text
        if per_node.get(f["code"], {}).get("fix"):
            assert f"fix: {per_node[f['code']]['fix']}"[:60] in text
    # the same code with another message on one node: each variant is shown with its nodes
    differ = [f for f in result["findings"] if f.get("variants")]
    assert differ, [f["code"] for f in result["findings"]]
    assert any(v["nodes"] == ["n3"] for v in differ[0]["variants"]) and "(on n3)" in text


@pytest.mark.slow  # real ranks: hpcdoctor processes and a TCPStore daemon in torch
def test_cluster_prometheus_output_creates_its_folder(tmp_path):
    py = torch_python()
    out = tmp_path / "new" / "folder" / "all.prom"
    p = _rank(0, 1, _port(), py, "node-a", _node(tmp_path, "cpu-kvm-2core", "node-a"), 0, 1,
              ("--format", "prometheus", "--output", str(out)))
    _, err = p.communicate(timeout=120)
    assert p.returncode in (0, 1), err
    assert 'node="node-a"' in out.read_text()


def test_the_host_election_first_claim_wins_rank_0_leads_and_a_stale_claim_is_taken_over(tmp_path, monkeypatch):
    import tempfile

    from hpcdoctor.cluster.orchestrate import job_key, leads_host, local_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    (tmp_path / "home").mkdir()
    env = {"HOME": str(tmp_path / "home")}  # the job's shared home, where its secret is kept
    now = time.time()
    ident = "job\0identity"
    assert leads_host(env, ident, "node-b", 3, "node-a", now - 60) is True
    assert leads_host(env, ident, "node-b", 2, "node-a", now - 60) is False
    assert leads_host(env, ident, "node-b", 0, "node-a", now - 60) is True  # rank 0 always leads its host
    # on the rendezvous host, named as the launcher names it, every other rank follows rank 0
    assert leads_host(env, ident, "node-a.cluster", 5, "node-a", now - 60) is False
    # a claim left by an earlier run (older than this run's window) does not silence the node
    leader = local_dir(env, ident, "node-b", create=False, key=job_key(env, ident)[0]) / "leader"
    os.utime(leader, (now - 3600, now - 3600))
    assert leads_host(env, ident, "node-b", 4, "node-a", now - 60) is True
    assert leader.read_text() == "4"


def test_node_divergent_names_the_odd_nodes_and_a_drain_that_runs():
    from fixcheck import fix_problem
    from rulekit import fired

    values = {"NVIDIA driver": {"n1": "580.159.04", "n2": "580.159.04", "n3": "570.86.15", "n4": None},
              "torch": {"n1": "2.11.0+cu130", "n2": "2.11.0+cu130", "n3": "2.11.0+cu130", "n4": "2.11.0+cu130"}}
    (f,) = fired("node-divergent", {"facts": {"cluster": {"nodes": ["n1", "n2", "n3", "n4"], "node_values": values}},
                                    "unknown": {}})
    assert f.subject == "NVIDIA driver" and "580.159.04 on 2 of 3 node(s) but differs on n3: 570.86.15" in f.message
    assert f.fix.startswith("scontrol update nodename=n3 state=drain reason=")
    assert fix_problem(f.fix, "bash") is None
    # the job's own software differing is the job's environment, not a node to drain
    values["torch"]["n4"] = "2.10.0+cu128"
    found = {x.subject: x for x in fired("node-divergent", {"facts": {"cluster": {"node_values": values}}, "unknown": {}})}
    assert "scontrol" not in found["torch"].fix and "each node" in found["torch"].fix
    same = {"kernel": {"n1": "6.8.0", "n2": "6.8.0", "n3": None}}
    assert not fired("node-divergent", {"facts": {"cluster": {"node_values": same}}, "unknown": {}})


def test_node_straggler_against_the_jobs_median_only():
    from rulekit import fired

    gemm = {"n1": 730.0, "n2": 725.0, "n3": 510.0}
    (f,) = fired("node-straggler", {"facts": {"cluster": {"gemm_tflops": gemm}}, "unknown": {}})
    assert f.subject == "n3" and "median of 725.0 across 3 nodes" in f.message
    assert not fired("node-straggler", {"facts": {"cluster": {"gemm_tflops": {"n1": 730.0}}}, "unknown": {}})  # one node: nothing to compare
