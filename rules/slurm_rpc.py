"""Which Slurm daemon did not answer, and why: the controller (slurmctld) too busy or out of reach, a
node's slurmd not answering a step launch, and MUNGE refusing a credential (another key, clocks out
of step, munged not running). slurm_strerror's texts say how a request failed; the client line around
them says to whom (knowledge/messages/slurm_rpc.toml), and MUNGE's own codes say why a credential was
refused (knowledge/messages/munge.toml)."""

from __future__ import annotations

from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_catalogued, told_evidence, told_text

OVERLOADED = "slurm-controller-overloaded"
UNREACHABLE = "slurm-controller-unreachable"
SLURMD = "slurmd-unreachable"
KEY = "munge-key-mismatch"
MUNGED = "munged-not-running"
CLOCK = "munge-clock-skew"

_SLURMCTLD_PORT = "6817"   # slurm.conf SlurmctldPort's default; SlurmdPort's is 6818
_AUTH_WORDS = ("authentication", "credential")


def _munge_named(f: FactView) -> Optional[dict]:
    """A MUNGE line that names its own cause (munge.toml), which the rules of those causes answer."""
    return next((s for s in f.get("ticket.symptoms") or [] if s.get("family") == "munge"
                 and any(r in (s.get("rules") or []) for r in (KEY, MUNGED, CLOCK))), None)


_OVERLOADED_FIX = (
    "scontrol ping   # is slurmctld up and answering at all (DOWN: see slurm-controller-unreachable)\n"
    "sdiag | head -40   # server thread count, agent queue size and the slowest RPCs: how busy the controller is\n"
    "for i in 1 2 3 4 5; do sbatch job.sh && break; sleep $((i * 20)); done   # retry a refused submission with a growing pause\n"
    "sbatch --array=1-500%50 job.sh   # one job array in place of hundreds of sbatch calls (50 running at a time)\n"
    "# workflow managers: lower their submission rate (snakemake --max-jobs-per-second 1, nextflow "
    "executor.submitRateLimit = '10/1min'); administrators: MessageTimeout and the RPC rate limit in slurm.conf")


# slurm_strerror(ESLURM_MAX_JOB_COUNT), 2007 ("Unable to create job record, try again" in older Slurm's
# table): job_mgr.c job_allocate "MaxJobCount limit from slurm.conf reached" @ 284c3b95 (a job array counts
# each of its tasks there); sbatch.c
# prints "Slurm job queue full, sleeping and retrying" for it and, after its retries, this text.
_JOB_TABLE_FULL = ("slurm:ESLURM_MAX_JOB_COUNT", "slurm:ESLURM_ERROR_ON_DESC_TO_RECORD_COPY")
_JOB_TABLE_FIX = (
    "squeue -h -u \"$USER\" | wc -l; squeue -h | wc -l   # jobs of this user, and of everyone, that slurmctld holds now\n"
    "scontrol show config | grep -E 'MaxJobCount|MinJobAge|MaxArraySize'   # the cluster-wide limit, and how long ended jobs stay\n"
    "for i in 1 2 3 4 5; do sbatch job.sh && break; sleep 120; done   # retry after jobs end and are purged")


@rule("ENV068", OVERLOADED, "warning",
      "slurmctld did not answer a submission or query in time, or asked the client to slow down", impact=4)
def slurm_controller_overloaded(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a request to the Slurm controller that timed out or was throttled:
        "Batch job submission failed: Socket timed out on send/recv operation" (sbatch), the same
        after "Unable to allocate resources:" (srun) or "Job submit/allocate failed:" (salloc),
        "slurm_load_jobs error: Socket timed out ..." (squeue, scontrol, scancel), "Rate limit
        exceeded, please retry momentarily", "Slurm temporarily unable to accept job, sleeping and
        retrying" and "Slurm job queue full, sleeping and retrying", with the refusal that ends
        those retries, "MaxJobCount limit reached" (slurmctld's job table is full). A warning: the controller was
        too busy to answer within MessageTimeout, which is its usual cause, but a network that
        drops packets to it reads the same.

    Why it matters:
        slurmctld answers every sbatch, squeue and srun of the cluster; a burst of submissions (a
        workflow manager's loop, hundreds of sbatch calls), a slow state save or slurmdbd keep it
        from answering within MessageTimeout (10 s by default), and the client gives up. The job
        may or may not have been queued (sbatch can time out after the controller took it), so a
        blind resubmission can run it twice.

    How to fix:
        Check squeue for the job before resubmitting; retry with a growing pause; submit fewer,
        larger requests (a job array in place of many sbatch calls) and lower a workflow manager's
        submission rate. Administrators look at sdiag and may raise MessageTimeout.

    References:
        - https://slurm.schedmd.com/slurm.conf.html#OPT_MessageTimeout
        - https://slurm.schedmd.com/sdiag.html
        - https://slurm.schedmd.com/job_array.html
        - https://slurm.schedmd.com/high_throughput.html
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errno.c (SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT, SLURMCTLD_COMMUNICATIONS_BACKOFF)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/sbatch/sbatch.c (the retry lines)
    """
    said = first_catalogued(f, OVERLOADED)
    if said is None:
        return
    if said.get("id") in _JOB_TABLE_FULL:
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": slurmctld already holds slurm.conf's "
                          "MaxJobCount jobs (pending, running, and ended ones not yet purged after MinJobAge): it takes "
                          "no new job until some end and are purged; sbatch and srun retry it for a while, then give up",
                  fix=_JOB_TABLE_FIX, evidence=told_evidence(said))
        return
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the Slurm controller did not answer in time "
                      "or asked for fewer requests: it is too busy (many submissions at once), or the network to it "
                      "drops packets. Check squeue before resubmitting: a timed-out sbatch may have queued the job",
              fix=_OVERLOADED_FIX, evidence=told_evidence(said))


_UNREACHABLE_FIX = (
    "scontrol ping   # UP or DOWN for the primary and backup slurmctld\n"
    "scontrol show config | grep -E 'SlurmctldHost|SlurmctldPort|MessageTimeout'   # where the clients look for it\n"
    "nc -zv CONTROLLER_HOST 6817   # is the port reachable from here (SlurmctldPort; 6817 by default)\n"
    "sudo systemctl status slurmctld; sudo journalctl -u slurmctld -n 50   # administrators, on the controller: is it running, why it stopped")


# slurm_strerror(ESLURM_IN_STANDBY_MODE): a backup slurmctld's answer to any RPC while it is in standby
# (backup.c @ 284c3b95); the client (slurm_protocol_api.c slurm_send_recv_controller_msg) has
# already tried SlurmctldHost in order and retried the backup for 1.5 x SlurmctldTimeout before it prints it.
_STANDBY = "slurm:ESLURM_IN_STANDBY_MODE"
_STANDBY_FIX = (
    "scontrol ping   # UP or DOWN for the primary and each backup slurmctld, as this host sees them\n"
    "scontrol show config | grep -E 'SlurmctldHost|SlurmctldTimeout|StateSaveLocation'   # the controllers in order, "
    "and how long a backup waits before it takes over\n"
    "for i in 1 2 3 4 5; do sbatch job.sh && break; sleep 60; done   # during a failover: retry after the backup takes over\n"
    "# administrators: on the primary, systemctl status slurmctld; the backup takes over only with a StateSaveLocation it shares with it")


@rule("ENV069", UNREACHABLE, "error", "the client could not reach slurmctld at all", impact=8)
def slurm_controller_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, "Unable to contact slurm controller (connect failure)" (or send, receive,
        shutdown failure), after any client's words (sbatch, srun, squeue, sinfo), scontrol
        ping's "Slurmctld(primary) at HOST is DOWN", and "Slurm backup controller in standby
        mode" (the client could not reach the primary and the backup had not taken over).

    Why it matters:
        Nothing answered on SlurmctldPort of SlurmctldHost: slurmctld is not running, this host's
        slurm.conf names the wrong controller, or a firewall drops the port. Every submission and
        query fails until it is back; a retry does not help.

    How to fix:
        scontrol ping and the configured SlurmctldHost; from the node, test the port; the
        administrators start slurmctld (its log says why it stopped) or fix the host name or the
        firewall.

    References:
        - https://slurm.schedmd.com/slurm.conf.html#OPT_SlurmctldHost
        - https://slurm.schedmd.com/scontrol.html (ping)
        - https://slurm.schedmd.com/network.html
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/common/slurm_errno.c (SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR, ESLURM_IN_STANDBY_MODE)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/slurmctld/backup.c (a backup in standby answers ESLURM_IN_STANDBY_MODE)
        - https://github.com/NVIDIA/TensorRT-LLM/pull/17709 (sbatch refused during a slurmctld failover)
    """
    said = first_catalogued(f, UNREACHABLE)
    if said is None:
        return
    if first_catalogued(f, MUNGED) is not None:
        return   # the client could not even make a credential: munged-not-running says why
    if said.get("id") == _STANDBY:
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the client could not reach the primary "
                          "slurmctld and its request went to the backup controller, which had not taken over yet "
                          "(it waits SlurmctldTimeout after the primary stops answering): during a failover this "
                          "passes in minutes; if it lasts, the primary is up but out of this host's reach, or down "
                          "with a backup that cannot take over",
                  fix=_STANDBY_FIX, evidence=told_evidence(said))
        return
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": nothing answered at the Slurm controller's "
                      "address: slurmctld is not running, slurm.conf names the wrong SlurmctldHost, or a firewall "
                      "drops SlurmctldPort",
              fix=_UNREACHABLE_FIX, evidence=told_evidence(said))


_SLURMD_FIX = (
    "sinfo -N -l -n NODE   # the node's state and reason as the controller sees it\n"
    "scontrol ping; ssh NODE systemctl status slurmd   # slurmd running on the node\n"
    "nc -zv NODE 6818   # from the submit host: SlurmdPort (6818 by default) open, no firewall between (srun also needs its own ports: SrunPortRange)\n"
    "munge -n | ssh NODE unmunge   # the node's munged verifies this host's credentials: same munge.key, clocks in step\n"
    "ssh NODE date -u; date -u   # the clocks of both hosts")


@rule("ENV070", SLURMD, "warning", "a node's slurmd did not answer srun's step launch", impact=6)
def slurmd_unreachable(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted srun log, the launch of a step's tasks failing at one node's slurmd: "Task
        launch for StepId=N.0 failed on node NODE: Socket timed out on send/recv operation" (or a
        refused connection), and "slurm_receive_msgs: [[NODE]:6818] failed: ..." for a peer that
        is not the controller's port. A warning: the lines say the node's daemon did not answer,
        not why.

    Why it matters:
        srun opens a connection to slurmd on each node of the step; a slurmd that is not running,
        a firewall between the hosts (SlurmdPort, and srun's own ports for the reply), or a slurmd
        whose munged cannot verify this host's credential (another munge.key, clocks out of step)
        leave srun waiting until MessageTimeout, and the step is aborted. On a new cluster the
        munge key and the firewall are the usual causes.

    How to fix:
        Check slurmd on the node, the port from the submitting host, and MUNGE across the two
        hosts (munge -n | ssh NODE unmunge), then the clocks.

    References:
        - https://slurm.schedmd.com/network.html (SlurmdPort, SrunPortRange)
        - https://slurm.schedmd.com/quickstart_admin.html (MUNGE: the same key on every node)
        - https://github.com/dun/munge/wiki/Installation-Guide (munge -n | ssh host unmunge)
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/api/step_launch.c (Task launch for %ps failed on node %s)
    """
    said = next((s for s in catalogued(f, SLURMD) if str(s.get("port") or "") != _SLURMCTLD_PORT), None)
    if said is None:
        return
    named = _munge_named(f)
    if named is not None:
        return   # a MUNGE line names the cause: its own rule answers
    node = said.get("node") or said.get("host") or "the node"
    error = str(said.get("error") or "")
    why = ("its credential was refused: MUNGE on the two hosts disagrees (another munge.key, clocks out of step)"
           if any(w in error.lower() for w in _AUTH_WORDS) else
           "slurmd there is not running, a firewall drops the port, or it could not verify this host's MUNGE "
           "credential (another munge.key, clocks out of step) and never answered")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": the step could not be started on {node}: {why}",
              fix=_SLURMD_FIX, evidence=told_evidence(said))


_KEY_FIX = (
    "munge -n | unmunge   # on each host: the local munged works\n"
    "munge -n | ssh NODE unmunge   # from the controller to a node: 'Invalid credential' is another key\n"
    "sudo md5sum /etc/munge/munge.key; ssh NODE sudo md5sum /etc/munge/munge.key   # the same key on every host\n"
    "sudo systemctl restart munge   # administrators, after copying one key to every host (owner munge, mode 0400): munged reads it only at start")


@rule("ENV071", KEY, "error", "MUNGE on two hosts uses different keys: Slurm's credentials are refused", impact=8,
      also={"warning": "Slurm's \"Invalid authentication credential\" without MUNGE's own reason: another key, "
                       "the clock or munged may be the cause"})
def munge_key_mismatch(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, MUNGE's "Invalid credential" (EMUNGE_CRED_INVALID, 14): Slurm's "Munge
        decode failed: Invalid credential", unmunge's "unmunge: Error: Invalid credential" or its
        STATUS line, an error: munged sets it when the credential's MAC does not verify with its
        key. Slurm's own "Invalid authentication credential" (ESLURM_AUTH_CRED_INVALID), which it
        returns after any MUNGE failure, is a warning when no MUNGE line names the reason.

    Why it matters:
        Every Slurm message carries a MUNGE credential; a daemon whose munged holds another
        munge.key (or an old one: munged reads the key only when it starts) refuses every message
        from that host, so nodes do not register, srun cannot launch and jobs hang.

    How to fix:
        Copy one munge.key to every host (owner munge, mode 0400), restart munged everywhere, and
        check with munge -n | ssh NODE unmunge.

    References:
        - https://github.com/dun/munge/wiki/Installation-Guide
        - https://github.com/dun/munge/blob/9317fe8a7efe692d8c5547c3b5c83dacb2c26872/src/munged/dec.c (EMUNGE_CRED_INVALID on a MAC mismatch)
        - https://github.com/dun/munge/issues/62 (the maintainer: the keys differed when the daemons started)
        - https://slurm.schedmd.com/authentication.html
    """
    told = catalogued(f, KEY)
    said = next((s for s in told if s.get("family") == "munge"), None)
    if said is not None:
        yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": MUNGE could not verify the credential with "
                          "its key: the sending host's munged uses another munge.key (or was not restarted after the key "
                          "was copied)", fix=_KEY_FIX, evidence=told_evidence(said))
        return
    if not told or _munge_named(f) is not None:
        return
    said = told[0]
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": a Slurm daemon refused the sender's MUNGE "
                      "credential; the usual cause is another munge.key on one host, then clocks out of step or munged "
                      "not running (the daemon's own log has MUNGE's reason)", fix=_KEY_FIX,
              evidence=told_evidence(said), severity="warning")


_MUNGED_FIX = (
    "sudo systemctl status munge   # munged running on this host (it makes and checks every Slurm credential)\n"
    "munge -n | unmunge   # 'Failed to access ... (Did you start munged?)': it is not\n"
    "sudo systemctl enable --now munge   # administrators: start it (its log, /var/log/munge/munged.log, says why it would not)")


@rule("ENV072", MUNGED, "error", "munged is not running (or not reachable) on the host that printed this", impact=8)
def munged_not_running(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a client that could not reach its local munged: libmunge's "Failed to
        access \"/run/munge/munge.socket.2\": No such file or directory (Did you start munged?)",
        "Failed to connect to ...", "Socket communication error" (EMUNGE_SOCKET), after Slurm's
        "Munge encode failed:" or munge's "munge: Error:", and Slurm's "If munged is up, restart
        with --num-threads=10".

    Why it matters:
        Without munged a host can neither make nor check a credential: every sbatch, squeue and
        srun from it fails with "Protocol authentication error", and slurmd there cannot talk to
        the controller.

    How to fix:
        Start munged on that host (systemctl enable --now munge) and read its log if it will not
        start (the key file's owner and mode).

    References:
        - https://github.com/dun/munge/wiki/Installation-Guide
        - https://github.com/dun/munge/blob/9317fe8a7efe692d8c5547c3b5c83dacb2c26872/src/libmunge/m_msg_client.c (Failed to access ... (Did you start munged?))
        - https://github.com/SchedMD/slurm/blob/284c3b95f08a2dc2478499837b03355e1b9c5c75/src/plugins/auth/munge/auth_munge.c
    """
    said = first_catalogued(f, MUNGED)
    if said is None:
        return
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": this host's client could not reach munged "
                      "over its socket: munged is not running (or listens on another socket)",
              fix=_MUNGED_FIX, evidence=told_evidence(said))


_CLOCK_FIX = (
    "date -u; ssh NODE date -u   # the two hosts' clocks: MUNGE allows the credential's TTL (300 s) and no more\n"
    "chronyc tracking || ntpq -p   # the time service's offset on each host\n"
    "sudo chronyc makestep   # administrators: step the clock that is off, then keep chronyd running")


@rule("ENV073", CLOCK, "error", "MUNGE refused a credential because two hosts' clocks are out of step", impact=7)
def munge_clock_skew(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, MUNGE's "Rewound credential" (EMUNGE_CRED_REWOUND, 16: encoded in the
        future of this host's clock) or "Expired credential" (EMUNGE_CRED_EXPIRED, 15: older than
        its time-to-live), after Slurm's "Munge decode failed:" or in unmunge's output, and Slurm's
        "Check for out of sync clocks".

    Why it matters:
        munged checks a credential's encode time against its own clock; hosts whose clocks differ
        by more than the TTL (300 s by default) refuse each other's credentials, so nodes drop out
        and launches fail although the key is right.

    How to fix:
        Compare the clocks, step the one that is off and keep a time service running on every host.

    References:
        - https://github.com/dun/munge/blob/9317fe8a7efe692d8c5547c3b5c83dacb2c26872/src/munged/dec.c (dec_validate_time)
        - https://github.com/dun/munge/blob/9317fe8a7efe692d8c5547c3b5c83dacb2c26872/src/libmunge/munge.h (EMUNGE_CRED_EXPIRED, EMUNGE_CRED_REWOUND)
        - https://chrony-project.org/doc/4.3/chronyc.html (tracking, makestep)
    """
    said = first_catalogued(f, CLOCK)
    if said is None:
        return
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": MUNGE refused the credential by its time: the "
                      "encoding host's clock and this one's differ by more than the credential's lifetime",
              fix=_CLOCK_FIX, evidence=told_evidence(said))
