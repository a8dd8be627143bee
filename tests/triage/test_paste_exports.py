"""A ticket's own `export NAME=VALUE` lines of NCCL_/TORCH_ variables become the environment the
paste knows, and nothing else does: real pastes from the ticket corpora."""

from __future__ import annotations

import time

import pytest

from conftest import FIXTURES, report_of
from hpcdoctor.triage.exports import exported

OPEN_CLIP = FIXTURES / "tickets_blind_e" / "open-clip-1087-nccl-watchdog-long-validation-healthy.txt"


def test_export_lines_are_read_and_echo_lines_are_not():
    # The ticket also echoes each variable ("echo \"NCCL_TIMEOUT=$NCCL_TIMEOUT\""): not an assignment.
    assert exported(OPEN_CLIP.read_text(encoding="utf-8")) == {
        "NCCL_BLOCKING_WAIT": ("1", 8), "NCCL_ASYNC_ERROR_HANDLING": ("1", 9),
        "NCCL_TIMEOUT": ("7200", 10), "NCCL_DEBUG": ("INFO", 11)}


@pytest.mark.parametrize("paste", [
    "tickets/nccl-328-shm-open-permission-denied.txt",           # "I tried `export NCCL_DEBUG=INFO` and reran"
    "tickets/vllm-19613-nccl-system-error-cupy-no-cause.txt",     # "(run with NCCL_DEBUG=INFO for details)"
    "tickets/flashinfer-1107-v100-decode-kernel-launch-failed.txt",  # `export TORCH_CUDA_ARCH_LIST="7.5"` in prose
    "tickets_blind_c/pytorch-29482-bootstrap-no-socket-interface-eth0.txt",  # "- NCCL_SOCKET_IFNAME=eth0" bullet
    "tickets_blind_d/nccl-667-hang-pxb-pix-vtd.txt",             # "Setting NCCL_P2P_DISABLE=1 did workaround"
])
def test_a_variable_named_in_prose_is_not_taken_as_set(paste):
    assert exported((FIXTURES / paste).read_text(encoding="utf-8")) == {}


def test_quoting_comments_and_the_last_assignment_win_as_in_a_shell():
    text = "export NCCL_IB_HCA='mlx5_0,mlx5_1'  # both rails\nNCCL_DEBUG=WARN\nexport NCCL_DEBUG=\"INFO\"\r\n"
    assert exported(text) == {"NCCL_IB_HCA": ("mlx5_0,mlx5_1", 1), "NCCL_DEBUG": ("INFO", 3)}


def test_a_huge_line_is_read_in_bounded_time():
    text = "export NCCL_X=" + "a" * 2_000_000 + "\n" + "NCCL_" * 200_000
    start = time.monotonic()
    assert exported(text) == {}
    assert time.monotonic() - start < 2


def test_the_ticket_gets_the_timeout_answer_and_only_what_it_set_is_known():
    doc = report_of("check", "--from", str(OPEN_CLIP))
    env = doc["facts"]["env"]
    assert env["listed"] == {"source": "export lines", "prefixes": [], "hidden": []}
    assert env["vars"]["NCCL_TIMEOUT"] == "7200"
    by = {f["symbol"]: f for f in doc["findings"]}
    f = by["nccl-env-not-read"]
    assert f["severity"] == "advice" and "NCCL_TIMEOUT=7200" in f["message"] and "init_process_group" in f["message"]
    # A ticket that sets NCCL_DEBUG=INFO is debugging: no "debug logging left on" advice.
    assert "nccl-debug-left-on" not in by
    # TORCH_NCCL_ASYNC_ERROR_HANDLING is not in the paste: unknown, so ENV001 is skipped, not told it is unset.
    (skip,) = [s for s in doc["skipped"] if s["symbol"] == "nccl-async-error-handling"]
    assert "set only" in skip["reason"]
