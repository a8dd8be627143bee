"""A snapshot keeps of the kernel log only the lines hpcdoctor reads, and replays to the same facts."""

from __future__ import annotations

import json

from conftest import FIXTURES
from hpcdoctor.checks import kernel_log
from hpcdoctor.sysroot import CmdResult, RecordingSysRoot, ReplaySysRoot
from hpcdoctor.sysroot import record as record_mod
from hpcdoctor.triage.messages import find_messages, kept_for

# Every real paste the project holds: pasted kernel logs among them (journals, dmesg, syslog).
PASTES = sorted(p for d in ("pastes", "tickets", "tickets_blind_a", "tickets_blind_b", "tickets_blind_c",
                            "tickets_blind_d", "tickets_blind_e") for p in (FIXTURES / d).glob("*.txt"))


def _read(text):
    return [(m["id"], m["line"], m["text"]) for m in find_messages(text, families=kernel_log.FAMILIES)]


def test_what_is_kept_reads_as_the_whole_log_does():
    differ, read = [], 0
    for paste in PASTES:
        text = paste.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        whole = _read(text)
        read += bool(whole)
        if _read(kept_for(text, kernel_log.FAMILIES)) != whole:
            differ.append(paste.name)
    assert not differ
    assert read >= 5  # the property was tried on real kernel logs, not only on pastes with none


# https://gist.github.com/ZackMattor/34b6e600e6dc6a1a2b5cb3fc91a0d438 (the Xid 79 lines) between two
# lines in the shape every kernel prints for a NIC (drivers/net/ethernet/intel/e1000e/netdev.c
# e1000_probe: "(PCI Express:2.5GT/s:Width x1) %pM", the MAC) and for a DHCP lease (systemd-networkd).
NIC = "Sep 09 15:50:02 saturn kernel: e1000e 0000:00:1f.6 eth0: (PCI Express:2.5GT/s:Width x1) 3c:52:82:6a:1b:04\n"
LEASE = "Sep 09 15:50:09 saturn systemd-networkd[811]: eth0: DHCPv4 address 192.168.17.42/24 via 192.168.17.1\n"
XID79 = ("Sep 09 15:53:19 saturn kernel: NVRM: GPU at PCI:0000:10:00: GPU-072931a9-3c93-2239-0583-43798217258d | |\n"
         "Sep 09 15:53:19 saturn kernel: NVRM: Xid (PCI:0000:10:00): 79, pid=0, GPU has fallen off the bus. | |\n")
FILLER = "".join(f"Sep 09 15:5{n}:00 saturn kernel: usb 1-{n}: new high-speed USB device number {n}\n" for n in range(6))


def _record_with(monkeypatch, tmp_path, stdout):
    def fake_run(argv, timeout, env=None, **kw):
        return CmdResult(list(argv), 0, stdout, "")
    monkeypatch.setattr(record_mod, "run_process", fake_run)
    root = RecordingSysRoot(tmp_path / "snap")
    live = kernel_log.collect(root, None)
    root.finish({})
    return live, tmp_path / "snap"


def test_a_recorded_kernel_log_holds_no_address_and_replays_the_same(monkeypatch, tmp_path):
    log = NIC + LEASE + FILLER + XID79 + FILLER
    live, snap = _record_with(monkeypatch, tmp_path, log)
    assert [m["key"] for m in live["kernel_log"]["messages"]]  # the Xid was read live...
    stored = (snap / "cmd" / "dmesg.txt").read_text()
    assert "3c:52:82:6a:1b:04" not in stored and "192.168.17.42" not in stored  # ...the addresses not kept
    assert "Xid (PCI:0000:10:00): 79" in stored
    assert stored.count("\n") == log.count("\n")  # blanked, not removed: line numbers stay the node's
    entry = next(e for e in json.loads((snap / "cmd" / "index.json").read_text()) if e["argv"] == ["dmesg"])
    assert "blanked" in entry["kept"]
    assert kernel_log.collect(ReplaySysRoot(snap), None) == live


def test_a_log_with_nothing_to_read_replays_as_read_not_as_empty(monkeypatch, tmp_path):
    live, snap = _record_with(monkeypatch, tmp_path, NIC + LEASE + FILLER)
    assert live == {"kernel_log": {"source": "dmesg", "messages": []}}
    assert "192.168.17.42" not in (snap / "cmd" / "dmesg.txt").read_text()
    assert kernel_log.collect(ReplaySysRoot(snap), None) == live


def test_a_message_a_terminal_wrapped_keeps_its_continuation():
    # https://github.com/leptonai/gpud/pull/46 (dmesg --ctime): an Xid 109 line as a narrow terminal
    # breaks it after "Xid (PCI:0000:cb:00): ", so its number is on the next line, which holds no needle.
    head = "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): "
    tail = "109, pid=1797828, name=pt_main_thread, Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005"
    wrapped = FILLER + head + "\n" + tail + "\n" + FILLER
    whole = _read(wrapped)
    assert whole and whole[0][0] == "xid:ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR"  # Xid 109
    assert _read(kept_for(wrapped, kernel_log.FAMILIES)) == whole
