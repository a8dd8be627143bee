"""The links between nodes (check --cluster --bench): the rules over what rank 0 gathers, fed
with network facts parsed from recorded real ibstat / fi_info outputs."""

from __future__ import annotations

from conftest import PUBLIC
from rulekit import fired

from hpcdoctor.parse import rdma
from hpcdoctor.cluster import analysis
from hpcdoctor.report import cluster

NET = PUBLIC / "net"


def _ib_net():
    # 8x ConnectX-7 at 400 Gb/s, Ethernet link layer (RoCE), all active
    return {"rdma_ports": rdma.parse_ibstat((NET / "gpud_ibstat_h100_node_8xCX7_400G_eth_all_active.txt").read_text()),
            "cxi_devices": []}


def _gathered(busbw, pairs, net=None):
    hosts = sorted({h for p in pairs for h in (p["a"], p["b"])})
    return {"facts": {"cluster": {
        "nodes": hosts, "pairs": pairs, "network": {h: net or _ib_net() for h in hosts},
        "allreduce": {"backend": "nccl", "nodes": len(hosts),
                      "results": [{"bytes": 64 << 20, "algbw_gbs": busbw / 1.5, "busbw_gbs": busbw}]}}},
        "unknown": {}}


def _ring(slow_node=None, fast=40.0, slow=4.0):
    hosts = ["n1", "n2", "n3", "n4"]
    return [{"a": a, "b": b, "gbs": slow if slow_node in (a, b) else fast}
            for a, b in zip(hosts, hosts[1:] + hosts[:1])]


def test_roce_rate_from_ibstat_sets_the_expectation_and_the_finding_says_so():
    (f,) = fired("cluster-allreduce-low", _gathered(6.0, _ring()))
    assert "RoCE" in f.message and "400 Gb/s" in f.message and "as the nodes report their network" in f.message
    assert f.evidence["expected_gbs"] == 25.0  # half of one 400 Gb/s port (50 GB/s)


def test_allreduce_near_line_rate_is_silent():
    assert not fired("cluster-allreduce-low", _gathered(44.0, _ring()))


def test_slingshot_nic_is_the_expectation_when_no_rdma_port_is_active():
    net = {"rdma_ports": [], "cxi_devices": ["cxi0"]}
    (f,) = fired("cluster-allreduce-low", _gathered(5.0, _ring(), net))
    assert "Slingshot-11" in f.message and f.evidence["expected_gbs"] == 12.5


def test_no_network_figure_is_not_judged_and_says_why_rather_than_passing():
    from rulekit import run_rule

    net = {"rdma_ports": [], "cxi_devices": []}
    findings, skipped = run_rule("cluster-allreduce-low", _gathered(0.01, _ring(), net))
    assert not findings and "no active InfiniBand/RoCE port or Slingshot NIC reported by n1" in skipped[0]["reason"]


def test_the_pairs_of_a_slow_node_are_named_and_the_node_with_them():
    found = fired("cluster-link-slow", _gathered(44.0, _ring("n3")))
    assert sorted(f.subject for f in found) == ["n2 <-> n3", "n3 <-> n4"]
    assert all("every slow pair includes n3" in f.message for f in found)
    assert all("--exclude=n3" in f.fix for f in found)


def test_even_links_are_silent():
    assert not fired("cluster-link-slow", _gathered(44.0, _ring()))


def test_cluster_rules_are_skipped_with_a_reason_in_a_single_node_check():
    from rulekit import run_rule

    for sym in ("cluster-link-slow", "cluster-allreduce-low"):
        findings, skipped = run_rule(sym, {"facts": {}, "unknown": {}})
        assert not findings and skipped and "cluster" in skipped[0]["reason"]


def test_hostile_values_from_other_ranks_are_rendered_inert_and_bounded():
    evil = "n\x1b]52;c;aGk=\x07\x1b[2J" + "x" * 10000
    doc = {"facts": {"system": {"hostname": evil}}, "findings": [
        {"severity": "warning", "code": "X\x1b[31m", "symbol": "s", "message": "m"}]}
    result = analysis.analyse({"world_size": 1, "missing": [], "nodes": {"0": doc},
                              "ranks": {"0": {"cpus": "0-4000000000", "leader": 0}}})
    text = cluster.render(result)
    assert "\x1b" not in text and "\x07" not in text and "\\x1b]52" in text
    assert max(len(line) for line in text.splitlines()) < 1000


def test_malformed_reports_from_other_ranks_are_missing_values_not_a_crash():
    junk = [{"facts": [1, 2]}, {"facts": {"gpus": ["x", 3], "bench": {"gpus": "no"}}, "findings": [1, {"x": 1}]},
            {"facts": {"system": {"hostname": ["a"]}}, "unknown": "z"}, "not a dict"]
    result = analysis.analyse({"world_size": 4, "missing": [], "nodes": {str(i): d for i, d in enumerate(junk)},
                              "ranks": {"0": {"cpus": 5, "leader": "x"}},
                              "links": {"leaders": [0, 1], "results": {"0": "x", "1": {"pairs": [1, {"a": 0}]}}}})
    assert len(result["nodes"]) == 3
    assert cluster.render(result).startswith("hpcdoctor cluster report: 3 node(s)")


def test_rank_placement_threads_over_cpus_and_a_remote_gpu_are_named():
    node = {"facts": {"system": {"hostname": "gpu01"},
                      "gpus": [{"index": 0, "local_cpus": list(range(0, 8))}, {"index": 1, "local_cpus": list(range(8, 16))}]}}
    ranks = {"0": {"cpus": "0-7", "leader": 0, "env": {"CUDA_VISIBLE_DEVICES": "0", "OMP_NUM_THREADS": "8"}},
             "1": {"cpus": "0-7", "leader": 0, "env": {"CUDA_VISIBLE_DEVICES": "1", "OMP_NUM_THREADS": "16"}}}
    result = analysis.analyse({"world_size": 2, "missing": [], "nodes": {"0": node}, "ranks": ranks})
    assert sorted((p["rank"], p["what"]) for p in result["rank_problems"]) == [
        (1, "GPU 1 is attached to CPUs this rank may not use"), (1, "OMP_NUM_THREADS=16 on 8 allowed CPU(s)")]
    assert result["shared_cpus"] == [{"node": "gpu01", "ranks": [0, 1]}]
    # well placed: each rank on its GPU's CPUs, one thread per CPU
    ranks["1"] = {"cpus": "8-15", "leader": 0, "env": {"CUDA_VISIBLE_DEVICES": "1", "OMP_NUM_THREADS": "8"}}
    result = analysis.analyse({"world_size": 2, "missing": [], "nodes": {"0": node}, "ranks": ranks})
    assert result["rank_problems"] == [] and result["shared_cpus"] == []


def test_the_leader_forwards_fresh_rank_files_only_and_bounded(tmp_path):
    import json
    import os
    import time

    from hpcdoctor.payload.cluster_probe import MAX_RANK_FILE, read_local

    (tmp_path / "rank-1.json").write_text(json.dumps({"cpus": "0"}))
    (tmp_path / "rank-2.json").write_text(json.dumps({"cpus": "1"}))
    (tmp_path / "rank-3.json").write_text("{" + " " * MAX_RANK_FILE + "}")
    (tmp_path / "rank-4.json").symlink_to(tmp_path / "rank-1.json")
    old = time.time() - 3600
    os.utime(tmp_path / "rank-2.json", (old, old))  # left by an earlier run on the same port
    found = read_local(str(tmp_path), done={0}, since=time.time() - 60)
    assert found == {1: {"cpus": "0"}}
    assert not list(tmp_path.glob("rank-[23].json"))  # the stale and the oversized are dropped


def test_slurm_layout_and_job_keys(tmp_path):
    from hpcdoctor.cluster import orchestrate

    assert orchestrate.tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert orchestrate.tasks_per_node("4(x2") == []
    env = {"SLURM_LOCALID": "1", "SLURM_STEP_TASKS_PER_NODE": "2(x3),1", "SLURM_NODEID": "3"}
    assert orchestrate.local_rank(env) == 1 and orchestrate.local_count(env) == 1
    assert orchestrate.local_count({"SLURM_TASKS_PER_NODE": "8(x2)", "SLURM_NODEID": "9"}) == 0  # unknown, not a guess
    job1 = orchestrate.job_identity({"SLURM_JOB_ID": "101", "SLURM_STEP_ID": "0"}, "gpu001", 20101)
    job2 = orchestrate.job_identity({"SLURM_JOB_ID": "102", "SLURM_STEP_ID": "0"}, "gpu001", 20101)
    home = {"HOME": str(tmp_path)}
    (k1, how1), (k2, _) = orchestrate.job_key(home, job1), orchestrate.job_key(home, job2)
    assert k1 != k2 and how1 == "a secret file private to this user, ~/.hpcdoctor/cluster-secret"
    k3, how3 = orchestrate.job_key({"HPCDOCTOR_CLUSTER_SECRET": "abc"}, job1)
    assert k3 not in (k1, k2) and how3 == "HPCDOCTOR_CLUSTER_SECRET" and "abc" not in how3


def test_cluster_refuses_a_format_it_does_not_write():
    from conftest import run_cli

    res = run_cli("check", "--cluster", "--format", "markdown")
    assert res.returncode == 2 and "--cluster writes --format terminal, json or prometheus" in res.stderr
