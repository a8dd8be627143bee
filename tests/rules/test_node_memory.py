"""node-memory-taken-by-other-jobs (MEM008) on pasted free and top tables (tests/fixtures/pastes/SOURCES.md)
and on /proc/meminfo's facts; the tables are read by knowledge/messages/memory_summary.toml."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, paste_facts, recorded_paste_facts, run_rule

SYMBOL = "node-memory-taken-by-other-jobs"


def test_free_h_with_memory_and_swap_used_up_is_a_warning():
    (f,) = fired("node-memory-taken-by-other-jobs", recorded_paste_facts("dockermonitor-13-free-h-node-memory-and-swap-used-up.txt"))
    assert f.severity == "warning"
    assert "2.9G of 251G available (1.2%)" in f.message and "0B of 4.0G swap free" in f.message
    assert "whose processes" in f.message and "ps -eo user:20,pid,rss,comm --sort=-rss" in f.fix
    assert f.evidence["ticket.line"] == 10


@pytest.mark.parametrize("paste", [
    # swap used up, but 231 GB of 264 GB is page cache: free + buffers + cached leaves most of the node
    "cbio-cluster-65-top-swap-used-cache-large.txt",
    # procps < 3.3.10's -/+ buffers/cache row: 2345 of 7983 MiB available, no swap at all
    "eventsim-4-free-m-buffers-cache-row.txt",
    # busybox on a kernel without MemAvailable prints available 0; no swap
    "openipc-majestic-webui-28-busybox-free-no-memavailable.txt",
    # free -lm: Low:/High: rows push Swap: out of reach, and half the node is available
    "../tickets_blind_f/tusas-149-slurm-oom-kill-memory-growth.txt",
])
def test_tables_of_a_node_with_memory_to_give_say_nothing(paste):
    findings, _ = run_rule(SYMBOL, recorded_paste_facts(paste))
    assert findings == []


def test_each_layout_is_read_and_judged_by_its_own_columns(tmp_path):
    # the catalogue's own examples of the other layouts (free -w, top 3.3.10+), none of them a full node
    for text in ("              total        used        free      shared     buffers       cache   available\n"
                 "Mem:           7.6G        2.0G        3.3G        384M          0B        2.3G        4.9G\n"
                 "Swap:          511M        114M        397M\n",
                 "KiB Mem :  1798936 total,   734624 free,   649120 used,   415192 buff/cache\n"
                 "KiB Swap:        0 total,        0 free,        0 used.   999500 avail Mem\n"):
        g = paste_facts(tmp_path, text)
        read = [s for s in g["facts"]["ticket"]["symptoms"] if s["family"] == "memory_summary"]
        assert len(read) == 1 and read[0]["available"] in ("4.9G", "999500")
        assert run_rule(SYMBOL, g)[0] == []


def test_free_g_rounding_a_small_node_to_nothing_is_not_read_as_empty(tmp_path):
    # the same CentOS node printed by free -g (1 1 0 ... 0) and free -m (402 of 1821 MiB available):
    # whole GiB are too coarse to divide
    text = ("[root@CentOS ~]# free -g\n"
            "              total        used        free      shared  buff/cache   available\n"
            "Mem:              1           1           0           0           0           0\n"
            "Swap:             1           1           0\n")
    assert run_rule(SYMBOL, paste_facts(tmp_path, text))[0] == []


def test_live_meminfo_with_little_available_and_swap_used_up():
    gib = 2 ** 30
    g = facts("h100-kvm-1gpu", **{"memory.total_bytes": 256 * gib, "memory.available_bytes": 3 * gib,
                                  "memory.swap_total_bytes": 4 * gib, "memory.swap_free_bytes": 0})
    (f,) = fired(SYMBOL, g)
    assert f.severity == "warning" and "3.0 GiB of 256.0 GiB available" in f.message


@pytest.mark.parametrize("available, swap_free", [(64, 0), (3, 4)])
def test_live_meminfo_with_room_or_swap_says_nothing(available, swap_free):
    gib = 2 ** 30
    g = facts("h100-kvm-1gpu", **{"memory.total_bytes": 256 * gib, "memory.available_bytes": available * gib,
                                  "memory.swap_total_bytes": 4 * gib, "memory.swap_free_bytes": swap_free * gib})
    assert run_rule(SYMBOL, g)[0] == []


def test_a_node_without_swap_is_not_called_out_of_swap():
    gib = 2 ** 30
    g = facts("h100-kvm-1gpu", **{"memory.total_bytes": 256 * gib, "memory.available_bytes": 1 * gib,
                                  "memory.swap_total_bytes": 0, "memory.swap_free_bytes": 0})
    assert not fired("node-memory-taken-by-other-jobs", g)


@pytest.mark.parametrize("recording, total, available", [
    ("recorded-h100-free-h.txt", "125Gi", "125Gi"),      # procps free -h on the lent H100 node
    ("recorded-h100-free-w-m.txt", "128887", "128362"),  # free -w -m: buffers and cache apart
])
def test_real_free_tables_of_a_gpu_node_are_read_and_judged_quiet(recording, total, available):
    # recorded on the lent H100 node on 2026-11-27 (tests/fixtures/pastes/SOURCES.md): a node with
    # nearly all its memory available and no swap configured
    g = recorded_paste_facts(recording)
    read = [s for s in g["facts"]["ticket"]["symptoms"] if s["family"] == "memory_summary"]
    assert len(read) == 1 and read[0]["total"] == total and read[0]["available"] == available
    assert run_rule(SYMBOL, g)[0] == []
