"""torch's own words about its environment (knowledge/messages torch.toml, elastic.toml,
frameworks.toml, build.toml; issue 24): each recorded or public paste is read as its message, the
two wired to a rule fire it, and words that only resemble them fire nothing."""

from __future__ import annotations

import pytest

from conftest import FIXTURES, check_from
from rulekit import fired, message_ids, recorded_paste_facts
from hpcdoctor.triage.messages import find_messages

PASTES = FIXTURES / "pastes"


# (paste, the entry it must be read as): recorded from the torch 2.13.0 wheel or public (SOURCES.md)
READ = [
    ("torch-2.13-cpu-load-cuda-checkpoint.txt", "torch:deserialize-cuda-unavailable"),
    ("torch-2.13-cpu-amp-pin-memory-warnings.txt", "torch:autocast-cuda-unavailable"),
    ("torch-2.13-cpu-amp-pin-memory-warnings.txt", "torch:gradscaler-cuda-unavailable"),
    ("torch-2.13-cpu-amp-pin-memory-warnings.txt", "torch:pin-memory-no-accelerator"),
    ("torch-2.13-dataloader-timeout.txt", "torch:dataloader-timeout"),
    ("torch-2.13-cpu-alloc-enomem.txt", "torch:cpu-alloc-failed"),
    ("torch-2.13-cpu-nccl-backend.txt", "torch:no-nccl-built-in"),
    ("torch-2.13-tcpstore-server-exited.txt", "torch:store-recv-connection-closed"),
    ("torch-2.13-tcpstore-wait-timeout.txt", "torch:store-wait-timeout"),
    ("torch-2.13-gloo-peer-exited.txt", "torch:gloo-connection-closed-by-peer"),
    ("torch-2.13-cpu-cuda-device-context.txt", "torch:compiled-without-cuda"),
    ("torchrun-2.13-worker-sigkill.txt", "elastic:agent-worker-failed"),
    ("torchrun-2.13-worker-sigkill.txt", "elastic:agent-closing-signal"),
    ("torchrun-2.13-sigterm.txt", "elastic:agent-death-signal"),
    ("torchrun-2.13-sigterm.txt", "elastic:agent-signal-exception"),
    ("torchrun-2.13-rdzv-c10d-store-unreachable.txt", "elastic:rendezvous-connection-failed"),
    ("torchrun-2.13-rdzv-c10d-store-unreachable.txt", "torch:store-client-retrying"),
    ("torchrun-2.13-rdzv-store-ping-failed-tail.txt", "torch:store-ping-failed"),
    ("torch-2.13-compile-no-cxx.txt", "frameworks:inductor-no-working-cxx"),
    ("gcc-12-python-h-missing.txt", "build:python-h-missing"),
    ("smoke-21-received-0-items-of-ancdata.txt", "torch:dataloader-ancdata"),
]


@pytest.mark.parametrize("paste, entry", READ, ids=[f"{p}:{e}" for p, e in READ])
def test_each_paste_is_read_as_torchs_own_message(paste, entry):
    assert entry in message_ids((PASTES / paste).read_text())


def test_torch_loads_refusal_is_torchs_words_not_a_users_sentence():
    ids = message_ids((PASTES / "torch-2.13-cpu-load-cuda-checkpoint.txt").read_text())
    assert "torch:deserialize-cuda-unavailable" in ids and "faq_pytorch:cuda-not-available-said" not in ids
    # a user's own sentence is still the FAQ's
    assert "faq_pytorch:cuda-not-available-said" in message_ids("torch.cuda.is_available() returns False on the node\n")


def test_the_worker_exit_code_and_the_signal_are_read():
    (s,) = [s for s in find_messages((PASTES / "torchrun-2.13-worker-sigkill.txt").read_text())
            if s["id"] == "elastic:agent-worker-failed"]
    assert (s["exitcode"], s["local_rank"]) == ("-9", "0")
    (t,) = [s for s in find_messages((PASTES / "torchrun-2.13-sigterm.txt").read_text())
            if s["id"] == "elastic:agent-death-signal"]
    assert t["signal"] == "15"
    # the older wording names the signal ("Received Signals.SIGTERM death signal")
    old = "WARNING:torch.distributed.elastic.agent.server.api:Received Signals.SIGTERM death signal, shutting down workers\n"
    assert [s["signal"] for s in find_messages(old) if s["id"] == "elastic:agent-death-signal"] == ["Signals.SIGTERM"]


def test_ancdata_is_the_dataloaders_open_files_limit():
    (f,) = fired("dataloader-open-files", recorded_paste_facts("smoke-21-received-0-items-of-ancdata.txt"))
    assert f.severity == "warning" and "ran out of file descriptors" in f.message and "ulimit -n" in f.fix


def test_a_cpu_builds_cuda_device_switch_is_torch_cpu_only():
    (f,) = fired("torch-cpu-only", recorded_paste_facts("torch-2.13-cpu-cuda-device-context.txt"))
    assert "torch says it was built without CUDA" in f.message


def test_the_store_reached_but_closed_is_not_the_store_unreachable():
    # the server went away after the connection: rank 0's log holds the cause, not MASTER_ADDR
    assert not fired("c10d-store-unreachable", recorded_paste_facts("torch-2.13-tcpstore-server-exited.txt"))
    assert not fired("c10d-store-unreachable", recorded_paste_facts("torch-2.13-tcpstore-wait-timeout.txt"))


# Pastes whose messages feed no rule: the CLI reads them (a read: line, exit 0) and finds nothing.
# (torch-2.13-compile-no-cxx.txt left this list when compile-toolchain-missing was built: tests/rules/test_toolchain.py.)
QUIET = ["torch-2.13-cpu-load-cuda-checkpoint.txt", "torch-2.13-cpu-nccl-backend.txt",
         "torch-2.13-gloo-peer-exited.txt", "torchrun-2.13-sigterm.txt"]


@pytest.mark.parametrize("paste", QUIET)
def test_read_and_quoted_back_but_no_finding(paste):
    run = check_from(PASTES / paste)
    assert run["rc"] == 0 and run["doc"] is not None, run["stderr"]
    assert not [f["symbol"] for f in run["doc"]["findings"]]


@pytest.mark.parametrize("text", [
    "I read that 'received 0 items' can mean the socket's ancillary data buffer was too small\n",
    "DataLoader(timeout=60) keeps the worker from hanging forever\n",
    "is Python.h needed to build the extension? I have python3-dev installed\n",
    "Process group watchdog thread is a feature of ProcessGroupNCCL\n",
])
def test_words_that_only_resemble_the_messages_are_not_read(text):
    ours = {"torch:dataloader-ancdata", "torch:dataloader-timeout", "build:python-h-missing",
            "torch:watchdog-thread-terminated"}
    assert not message_ids(text) & ours


def test_every_paste_here_says_where_it_comes_from():
    rows = {line.split(" | ")[0] for line in (PASTES / "SOURCES.md").read_text().splitlines() if " | " in line}
    assert {p for p, _ in READ} - rows == set()


# Healthy controls of the blind sets (the program's data, the memory share asked of vLLM): read now,
# with the cause the catalogue gives, and still no finding.
HEALTHY = [
    ("tickets_blind_b/detectron2-4158-device-assert-index-out-of-bounds-healthy.txt", "torch:cuda-kernel-assertion"),
    ("tickets_blind_h/vllm-3358-kv-cache-raise-gpu-memory-utilization-healthy.txt", "frameworks:vllm-max-len-exceeds-kv-cache"),
]


@pytest.mark.parametrize("paste, entry", HEALTHY, ids=[e for _, e in HEALTHY])
def test_a_healthy_tickets_own_message_is_read_and_fires_nothing(paste, entry):
    run = check_from(FIXTURES / paste)
    assert run["rc"] == 0 and run["doc"] is not None, run["stderr"]
    assert entry in message_ids((FIXTURES / paste).read_text())
    assert not [f["symbol"] for f in run["doc"]["findings"] if f["severity"] in ("error", "warning")]
