"""TORQUE / OpenPBS client and server words (knowledge/messages/pbs_clients.toml, pbs_server_msg.toml) on
public pastes (tests/fixtures/pastes, SOURCES.md there): no trqauthd on the submitting host feeds
slurm-submit-from-compute-node-refused, pbs_server refusing connections batch-system-not-in-service,
the server's spool out of space disk-full; a plain submission and a typo'd queue fire none of them."""

from __future__ import annotations

import pytest

from rulekit import facts, fired, recorded_paste_facts, run_rule
from hpcdoctor.triage.messages import find_messages

SUBMIT = "slurm-submit-from-compute-node-refused"
NODE = "h100-kvm-1gpu"
# a home with room, so that disk-full judges only the paste's lines
ROOMY = [{"roles": ["home"], "paths": ["/home/alice"], "free_bytes": 10**12, "free_inodes": 10**8}]


def _told(text: str) -> dict:
    return facts(NODE, **{"ticket.symptoms": find_messages(text), "limits.filesystems": ROOMY})


@pytest.mark.parametrize("paste, line", [
    ("atac-seq-pipeline-232-qsub-from-inside-pbs-job.txt", 26),     # Caper inside a PBS job (set X's ticket)
    ("juicer-105-qsub-trqauthd-on-pbs.txt", 3),
    ("bcbio-1939-qstat-inside-torque-job-trqauthd.txt", 7),         # qstat from inside a running TORQUE job
    ("cbio-cluster-393-trqauthd-unix-socket-refused.txt", 16),
])
def test_no_trqauthd_on_the_host_is_a_warning_with_a_pbs_fix(paste, line):
    (f,) = fired(SUBMIT, recorded_paste_facts(paste))
    assert f.severity == "warning" and f"line {line}:" in f.message and "could not connect to trqauthd" in f.message
    assert "compute node, inside a job" in f.message and "login node whose trqauthd stopped" in f.message
    assert f.fix.startswith("pgrep -l trqauthd; ls -l /tmp/trqauthd-unix")
    assert "caper init local" in f.fix and "qmgr -c 'set server allow_node_submit = True'" in f.fix
    assert "sbatch" not in f.fix and "srun" not in f.fix   # a PBS paste gets PBS's commands, not Slurm's


def test_socket_connect_unix_alone_is_the_same_failure():
    (f,) = fired(SUBMIT, _told("socket_connect_unix failed: 15137\n"))
    assert f.severity == "warning" and "socket_connect_unix failed: 15137" in f.message


def test_a_refusal_that_names_its_cause_wins_over_trqauthd():
    text = ("socket_connect_unix failed: 15137\n"
            "qsub: submit error (Bad UID for job execution MSG=ruserok failed validating alice/alice from node01)\n")
    (f,) = fired(SUBMIT, _told(text))
    assert f.severity == "error" and "(node01)" in f.message


def test_pbs_server_refusing_connections_is_the_daemon_down_not_the_submit_host():
    g = recorded_paste_facts("cbio-cluster-178-torque-pbs-server-connection-refused.txt")
    (f,) = fired("batch-system-not-in-service", g)
    assert "line 4:" in f.message and "no pbs_server" in f.message and f.fix.startswith("cat /var/spool/torque/server_name")
    assert not fired(SUBMIT, g)


def test_the_commands_errno_111_line_alone():
    (f,) = fired("batch-system-not-in-service", _told("qstat: cannot connect to server head01 (errno=111) Connection refused\n"))
    assert "TORQUE" in f.message


def test_pbs_iff_out_of_reserved_ports_is_neither_submit_host_nor_daemon_down():
    # OpenPBS's pbs_iff under a driver's polling (equinor/ert#7357): read, fed to no rule
    g = recorded_paste_facts("ert-7357-pbs-iff-reserved-ports.txt")
    ids = {s["id"] for s in g["facts"]["ticket"]["symptoms"]}
    assert {"pbs_clients:pbs-iff-cannot-connect", "pbs_clients:pbs-iff-reserved-ports-in-use"} <= ids
    assert not fired(SUBMIT, g)
    assert not fired("batch-system-not-in-service", g)


def test_torque_25_server_spool_write_is_disk_full_on_the_server_host():
    (f,) = fired("disk-full", recorded_paste_facts("fds-9419-pbs-server-spool-disk-full.txt"))
    assert f.severity == "warning" and "cannot write job command file" in f.message
    assert "server host" in f.message and "not the user's" in f.message
    assert "df -h /var/spool/torque; df -i /var/spool/torque" in f.fix and f.fix.startswith("qstat -B")
    assert "TMPDIR" not in f.fix   # the user's own directories are not the cure


def test_torque_enospc_in_the_spool_names_its_pbs_home():
    # the format of req_quejob.c req_jobscript with ENOSPC (no public paste recorded for this wording)
    text = ("qsub: submit error (PBS server internal error MSG=cannot write to file "
            "/opt/torque/server_priv/jobs/77.head.SC (28-No space left on device) Unable to write script file)\n")
    (f,) = fired("disk-full", _told(text))
    assert f.severity == "error" and "/opt/torque/server_priv/jobs" in f.message and "ENOSPC" in f.message
    assert "df -h /opt/torque; df -i /opt/torque" in f.fix


def test_another_errno_in_the_spool_is_not_a_full_disk():
    # the format of req_quejob.c req_jobscript with EIO (no public paste recorded)
    text = ("qsub: submit error (PBS server internal error MSG=cannot write to file "
            "/var/spool/torque/server_priv/jobs/77.head.SC (5-Input/output error) Unable to write script file)\n")
    told = find_messages(text)
    assert [s["id"] for s in told] == ["pbs_server_msg:torque-script-write-failed"]
    assert not fired("disk-full", _told(text))


def test_a_plain_qsub_success_fires_nothing():
    # qsub's own output on success: the job id (TORQUE qsub_functions.c prints it; the id is a filled-in one)
    text = "$ qsub job.pbs\n4126.head01.cluster\n$ qstat -u alice\n"
    g = _told(text)
    for symbol in (SUBMIT, "batch-system-not-in-service", "disk-full"):
        assert not fired(symbol, g), symbol


def test_a_typod_queue_fires_none_of_these():
    g = recorded_paste_facts("canu-891-torque-qsub-unknown-queue.txt")
    assert not fired(SUBMIT, g)
    assert not fired("batch-system-not-in-service", g)
    findings, _ = run_rule("disk-full", g)
    assert findings == []
