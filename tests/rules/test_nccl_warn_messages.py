"""NCCL's WARN and failure INFO lines beyond the ones a rule answers (knowledge/messages/nccl.toml,
issue 24): real pastes are read and quoted back with what the line establishes, and the rules wired
to a line (NET006 nccl-duplicate-gpu, NET008 nccl-topo-file) answer it, while healthy NCCL logs
that hold similar words fire nothing."""

from __future__ import annotations

from rulekit import fired, paste_facts, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages

# The NCCL rules that answer a pasted line; none may fire on a line that does not state its fact.
_NCCL_RULES = ("nccl-system-error", "nccl-roce-gid", "nccl-ib-memlock", "nccl-duplicate-gpu", "nccl-topo-file",
               "nccl-socket-ifname", "nccl-shm-unusable", "shm-too-small")


def _read(g) -> dict:
    return {s["id"]: s for s in g["facts"]["ticket"]["symptoms"] if not s.get("listing")}


def _silent(g) -> None:
    # a rule that needs facts a paste does not hold (the environment, /proc/meminfo) is skipped: not fired
    for symbol in _NCCL_RULES:
        findings, _skipped = run_rule(symbol, g)
        assert not findings, (symbol, findings)


def test_a_fatal_qp_event_is_read_and_a_status_4_completion_is_no_gid_fault():
    g = recorded_paste_facts("nccl-1905-ib-async-fatal-event-qp.txt")
    read = _read(g)
    assert read["nccl:ib-async-fatal-event"]["on"] == "QP"
    assert read["nccl:ib-async-fatal-event"]["event"] == "local access violation work queue error"
    assert read["nccl:ib-comm-fatal-error"]["where"] == "ncclIbTest"
    assert read["nccl:ib-completion-error"]["status"] == "4"
    _silent(g)  # status 4 (local protection error) is not the retry-exceeded status 12 that nccl-roce-gid reads


def test_port_error_events_of_every_wording_are_read():
    assert _read(recorded_paste_facts("lit-llama-380-nccl-ib-async-port-error.txt"))["nccl:ib-async-event"]["event"] == "port error"
    g = recorded_paste_facts("nccl-230-ib-async-catastrophic-error.txt")
    read = _read(g)
    assert read["nccl:ib-async-event"]["event"] == "local catastrophic error"
    assert read["nccl:ib-verbs-call-failed"]["call"] == "ibv_get_async_event"
    _silent(g)
    # NCCL 2.28+ wording, from its format string (src/transport/net_ib/common.cc @ 5067397c line 179)
    (s,) = [s for s in find_messages("h:1:2 [0] transport/net_ib/common.cc:179 NCCL WARN NET/IB : mlx5_0:1 Got "
                                     "non-fatal async event: port error(10)\n") if s["id"] == "nccl:ib-async-event"]
    assert s["event"] == "port error"


def test_a_user_writing_of_events_is_not_an_event():
    text = "dmesg shows no async event and no port error; ibstat says the link is up.\n"
    assert not [s for s in find_messages(text) if s["id"].startswith("nccl:ib-async")]


def test_nvls_bind_failure_after_torchs_last_error_is_read_with_its_cuda_error():
    g = recorded_paste_facts("pytorch-177472-nccl-nvls-bind-last-error.txt")
    s = _read(g)["nccl:nvls-bind-failed"]
    assert (s["code"], s["size"]) == ("401", "2097152")
    assert s["cuda_message"] == "the operation cannot be performed in the present state"
    _silent(g)


def test_no_plugin_found_is_read_as_harmless_and_fires_nothing():
    g = recorded_paste_facts("nccl-1126-net-plugin-not-found-socket-lo.txt")
    read = _read(g)
    assert "harmless" in read["nccl:net-plugin-absent"]["means"]
    assert "nccl:ib-no-device" in read
    _silent(g)


def test_a_healthy_plugin_load_is_not_a_missing_plugin():
    g = recorded_paste_facts("nccl-1584-net-plugin-loaded-ib-sharp-healthy.txt")
    read = _read(g)
    assert read["nccl:plugin-symbol-missing"]["symbol"] == "ncclNetPlugin_v9"
    # "PROFILER/Plugin: Could not find: libnccl-profiler.so." is the profiler, not the network plugin
    assert "nccl:net-plugin-absent" not in read and "nccl:ib-no-device" not in read
    _silent(g)


def test_collnet_and_proxy_accept_failures_are_read():
    read = _read(recorded_paste_facts("nccl-tests-133-collnet-not-supported.txt"))
    assert "nccl:collnet-init-failed" in read
    g = recorded_paste_facts("nccl-tests-166-proxy-accept-failed.txt")
    read = _read(g)
    assert read["nccl:socket-accept-failed"]["error"] == "Resource temporarily unavailable"
    assert "nccl:proxy-service-failed" not in read  # one line, one entry
    # the error code in the title is still ENV006's, which now says what the warning establishes
    (f,) = fired("nccl-system-error", g)
    assert "'internal error'" in f.message and "line 3" in f.message
    assert "says: accepting a connection from another rank failed" in f.message


def test_nccl_2_30s_multi_rank_warning_answers_duplicate_gpu(tmp_path):
    # src/init.cc @ 5067397c line 1057's format string, after torch's invalid-usage error (verl#161's form)
    text = ("h:1:2 [0] init.cc:1057 NCCL WARN Multiple Ranks are using the same GPU/Partition. Set "
            "NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this configuration.\n"
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
            "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.30.7\n")
    (f,) = fired("nccl-duplicate-gpu", paste_facts(tmp_path, text))
    assert "several ranks of one communicator run on the same GPU (line 1)" in f.message
    assert "LOCAL_RANK" in f.fix
    prose = "Multiple ranks are using the same GPU on purpose here (MPS), NCCL is not involved.\n"
    assert not [s for s in find_messages(prose) if s["id"] == "nccl:multi-rank-same-gpu"]


def test_an_xml_mismatch_is_a_topology_file_nccl_cannot_use(tmp_path):
    # src/graph/xml.cc @ 5067397c line 219's format string with an unexpected closing tag
    text = "h:1:2 [0] graph/xml.cc:219 NCCL WARN XML Mismatch : cpu / pci\nh:1:2 [0] NCCL INFO graph/topo.cc:1 -> 3\n"
    (f,) = fired("nccl-topo-file", paste_facts(tmp_path, text))
    assert "XML Mismatch : cpu / pci" in f.message
