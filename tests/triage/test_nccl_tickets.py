"""NCCL's and torch's /dev/shm messages in real tickets (issue 13): the shared-memory failures NCCL prints
(src/include/shm.h, src/misc/shmutils.cc, src/os/linux.cc) and its "unhandled system error"
(ncclGetErrorString). One cause gives one finding: a full /dev/shm is shm-too-small's, another
errno is nccl-shm-unusable's, and nccl-system-error answers only when no cause is pasted.
Held-out tickets (found after the rules were built) are in tickets.toml under "Held out"."""

from __future__ import annotations

import pytest

from conftest import NODES, alarms, report_of, run_main, ticket
from hpcdoctor.triage.messages import find_messages
from hpcdoctor.triage.paste import read_text, recognise
from rulekit import facts, fired

PASTES = NODES.parent / "pastes"
H100 = "h100-kvm-1gpu"


def ticket_facts(name: str):
    """A recorded node's facts with the symptoms of one real ticket, as a paste gives them."""
    return facts(H100, **{"ticket.symptoms": find_messages(ticket(name).read_text(encoding="utf-8"))})


@pytest.mark.parametrize("name, sid, fields", [
    # NCCL 2.4-2.11: SYSCHECK's "Call to shm_open failed : Permission denied", read line by line
    # (the next line's host prefix is not part of the errno).
    ("nccl-328-shm-open-permission-denied", "nccl:shm-syscall-failed", {"call": "shm_open", "error": "Permission denied"}),
    ("nccl-342-docker-shm-no-space", "nccl:shm-syscall-failed", {"call": "posix_fallocate", "error": "No space left on device"}),
    # NCCL 2.22+: "Error: failed to extend ... bytes, error: No space left on device (28)"
    ("pytorch-ci-infra-490-nccl-shm-extend-no-space", "nccl:shm-extend-failed",
     {"path": "/dev/shm/nccl-WU88OE", "size": "9637892", "error": "No space left on device", "errno": "28"}),
    ("pytorch-ci-infra-490-nccl-shm-extend-no-space", "nccl:shm-segment-failed", {"error": "No space left on device"}),
    ("pytorch-40622-nccl273-posix-fallocate-ci", "nccl:ncclSystemError", {"nccl": "2.7.3"}),
    ("vllm-19613-nccl-system-error-cupy-no-cause", "nccl:ncclSystemError", {}),
    ("minimax-42-vllm-nccl-shm-segment", "nccl:ncclSystemError", {}),
])
def test_nccl_message_is_read_with_its_facts(name, sid, fields):
    found = {}
    for s in find_messages(ticket(name).read_text(encoding="utf-8")):
        found.setdefault(s["id"], s)
    assert sid in found, sorted(found)
    for k, v in fields.items():
        assert found[sid][k] == v, (k, found[sid])


def test_a_refused_shm_open_is_not_a_size():
    (f,) = fired("nccl-shm-unusable", ticket_facts("nccl-328-shm-open-permission-denied"))
    assert "Permission denied" in f.message and "line 3" in f.message
    assert "--ipc=host" in f.fix and "chmod 1777 /dev/shm" in f.fix
    # NCCL_SHM_DISABLE is named as a stopgap with its cost, never printed as the fix
    assert "NCCL_SHM_DISABLE=1" in f.message and "NCCL_SHM_DISABLE" not in f.fix
    # the cause is pasted: the generic system-error finding stays silent
    assert not fired("nccl-system-error", ticket_facts("nccl-328-shm-open-permission-denied"))


@pytest.mark.parametrize("name", ["nccl-342-docker-shm-no-space", "pytorch-ci-infra-490-nccl-shm-extend-no-space",
                                  "minimax-42-vllm-nccl-shm-segment", "pytorch-40622-nccl273-posix-fallocate-ci"])
def test_a_full_dev_shm_is_shm_too_small_only(name):
    g = ticket_facts(name)
    assert not fired("nccl-shm-unusable", g)
    assert not fired("nccl-system-error", g)


def test_unhandled_system_error_without_a_cause_asks_for_the_warn_line():
    (f,) = fired("nccl-system-error", ticket_facts("nccl-473-unhandled-system-error-docker"))
    assert "no NCCL WARN line" in f.message
    assert f.fix.startswith("NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,SHM ")
    (f,) = fired("nccl-system-error", ticket_facts("vllm-19613-nccl-system-error-cupy-no-cause"))
    assert "line 3" in f.message


def test_a_warn_line_without_an_error_is_no_finding():
    # DeepSpeedExamples#310: every rank reached Init COMPLETE; "NET/IB : Got async event" is logged and acknowledged.
    g = ticket_facts("deepspeedexamples-310-nccl-ib-async-event-healthy")
    for sym in ("nccl-system-error", "nccl-shm-unusable"):
        assert not fired(sym, g)
    assert not fired("nccl-system-error", facts(H100))     # a live node has no ticket
    assert not fired("nccl-shm-unusable", facts(H100))


@pytest.mark.parametrize("name, symbol, silent", [
    ("nccl-328-shm-open-permission-denied", "nccl-shm-unusable", ["shm-too-small", "nccl-system-error"]),
    ("nccl-473-unhandled-system-error-docker", "nccl-system-error", ["shm-too-small", "nccl-shm-unusable"]),
    ("pytorch-ci-infra-490-nccl-shm-extend-no-space", "shm-too-small", ["nccl-system-error", "nccl-shm-unusable"]),
])
def test_one_cause_one_finding_through_the_cli(name, symbol, silent):
    hits = alarms(ticket(name))
    assert symbol in hits, sorted(hits)
    for s in silent:
        assert s not in hits


def test_a_listing_of_many_warn_lines_is_one_read_entry():
    doc = report_of("check", "--from", str(ticket("deepspeedexamples-310-nccl-ib-async-event-healthy")))
    reads = [r for r in doc["source"]["recognised"] if "nccl:nccl-warn" in r]
    assert reads == ["deepspeedexamples-310-nccl-ib-async-event-healthy.txt: message nccl:nccl-warn (4 lines from 11): "
                     "a warning NCCL printed: the cause of the error it returned next"]


def test_utf16_powershell_paste_of_an_nccl_ticket_is_read_the_same(tmp_path):
    # PowerShell's `>` writes UTF-16 LE with a BOM and CRLF: the same real ticket, so encoded.
    text = ticket("nccl-328-shm-open-permission-denied").read_text(encoding="utf-8")
    path = tmp_path / "ticket.txt"
    path.write_bytes(b"\xff\xfe" + text.replace("\n", "\r\n").encode("utf-16-le"))
    assert find_messages(read_text(str(path))) == find_messages(text)
    assert "nccl-shm-unusable" in alarms(path)


# The machine guard reads the host name of the shell prompt above a piece.

def test_prompt_host_is_read_and_a_container_id_is_not_compared():
    from hpcdoctor.triage.machines import identity

    (piece,) = recognise(ticket("sglang-14665-h100nvl-cu129-driver550-healthy").read_text(encoding="utf-8")).pieces
    assert piece.host == "4u8g-gen-0078" and identity(piece)["host"] == "4u8g-gen-0078"
    (piece,) = recognise((PASTES / "sglang-748-check_env-10x2080ti-sm75-cut.txt").read_text(encoding="utf-8")).pieces
    assert piece.host == "0bdb08439b5e"           # docker's container id: the container, not a machine
    assert "host" not in identity(piece)


def test_two_hosts_are_named_when_two_machines_are_pasted(tmp_path):
    # Two real tickets, each a collect_env/check_env under the reporter's own prompt.
    both = tmp_path / "paste.txt"
    both.write_text(ticket("efficientps-15-torch14-pypi-single-healthy").read_text(encoding="utf-8") + "\n"
                    + ticket("sglang-14665-h100nvl-cu129-driver550-healthy").read_text(encoding="utf-8"),
                    encoding="utf-8")
    res = run_main("check", "--from", str(both))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    err = res.stderr.strip()
    assert len(err.splitlines()) == 1 and "different machines" in err
    assert "host cmtcde5u157" in err and "host 4u8g-gen-0078" in err, err


def test_one_host_pasted_twice_and_nccl_lines_of_one_job_are_one_machine(tmp_path):
    # The same prompt and report twice: one host. NCCL's own "host:pid:tid" prefixes (one host,
    # or the nodes of one multi-node job) are never compared.
    text = ticket("efficientps-15-torch14-pypi-single-healthy").read_text(encoding="utf-8")  # under its prompt
    nccl = ticket("deepspeedexamples-310-nccl-ib-async-event-healthy").read_text(encoding="utf-8")
    path = tmp_path / "paste.txt"
    path.write_text(text + "\n" + nccl + "\n" + text, encoding="utf-8")
    doc = report_of("check", "--from", str(path))
    assert doc["source"]["mode"] == "paste"
    assert any("same machine" in n for n in doc["source"]["notes"])


# torch's own /dev/shm messages (DataLoader workers, shared tensors) feed the same shm-too-small.

@pytest.mark.parametrize("name, words", [
    ("hopsworks-1557-dataloader-shm-no-space-k8s", "/dev/shm is full"),     # the errno wins over the bus error
    ("protenix-2-dataloader-bus-error-docker", "bus error"),
])
def test_dataloader_shm_is_shm_too_small(name, words):
    hits = alarms(ticket(name))
    assert "shm-too-small" in hits and words in hits["shm-too-small"]["message"], sorted(hits)
    assert "--shm-size" in hits["shm-too-small"]["fix"]


def test_a_dataloader_ticket_without_a_shm_message_stays_silent():
    res = run_main("check", "--from", str(ticket("pytorch-53894-dataloader-segfault-18-healthy")), "--format", "json")
    assert "Traceback" not in res.stderr
    if res.returncode != 2:
        assert "shm-too-small" not in alarms(ticket("pytorch-53894-dataloader-segfault-18-healthy"))


def test_a_benign_warn_is_not_quoted_as_the_cause():
    # pytorch#40622's symptoms without its shared-memory lines: only "Failed to open
    # libibverbs.so[.1]" is left, after which NCCL falls back to sockets; it names no cause.
    found = find_messages(ticket("pytorch-40622-nccl273-posix-fallocate-ci").read_text(encoding="utf-8"))
    rest = [s for s in found if s["id"] == "nccl:ncclSystemError" or "libibverbs" in s.get("message", "")]
    assert any("libibverbs" in s.get("message", "") for s in rest)
    (f,) = fired("nccl-system-error", facts(H100, **{"ticket.symptoms": rest}))
    assert "no NCCL WARN line" in f.message and "libibverbs" not in f.message
