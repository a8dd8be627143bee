"""Launchers that start ranks or daemons over ssh, failing because ssh between the job's nodes is
refused: read from the OpenSSH client's and pdsh's own words (knowledge/messages/openssh.toml),
with Open MPI's daemon-launch failure (openmpi.toml) naming the launcher."""

from __future__ import annotations

import shlex
from typing import Iterator, List, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ssh-between-nodes-refused"
# ssh to a code forge is git's, not a launcher's: its refusals are the user's git credentials.
_FORGES = ("github.com", "gitlab.com", "bitbucket.org", "ssh.dev.azure.com", "codeberg.org", "huggingface.co")
_WHY = {
    "openssh:host-key-verification-failed": "the other node's host key is not in known_hosts and ssh, run without a terminal, may not ask",
    "openssh:no-host-key-known-strict": "the other node's host key is not in known_hosts and strict checking is on",
    "openssh:permission-denied-methods": "the other node refused the login: no key of this user is in its ~/.ssh/authorized_keys",
    "openssh:permission-denied-methods-bare": "the other host refused the login: no key of this user is in its ~/.ssh/authorized_keys",
    "openssh:connect-to-host-failed": "no ssh server answered on the other node",
    "openssh:could-not-resolve-hostname": "the node name given to ssh does not resolve here",
    "openssh:pdsh-ssh-exit-255": "pdsh's ssh to a node failed before running anything (exit status 255)",
    "openssh:sshd-drop-past-maxstartups": "the other node's sshd dropped the connection: too many were unauthenticated at once (MaxStartups)",
    "openssh:clush-ssh-exit-255": "clush's ssh to that node failed before running anything (exit status 255)",
    "intel_mpi:bstrap-proxy-failed": "mpiexec's ssh to that node failed before starting its proxy (exit code 65280: ssh's own status 255)",
}
# Intel MPI's hydra prints the raw wait status of the launcher (ssh) it ran: 65280 is 255 << 8, ssh's
# own failure; 256 (exit 1) and others are the proxy's or the remote shell's, not a refused ssh.
_SSH_WAIT_STATUS = "65280"
# the launcher's own line that only says ssh failed: the client's reason, where pasted, says why
_EXIT_LINES = ("openssh:pdsh-ssh-exit-255", "openssh:clush-ssh-exit-255", "intel_mpi:bstrap-proxy-failed")
# The server's side (openssh.toml, sshd.c @ V_10_5_P1): sshd -d serves one connection and exits, so
# the launcher's later connections are refused; MaxStartups (sshd_config(5), default 10:30:100)
# drops connections while too many are unauthenticated, and Open MPI's ssh launcher opens up to
# plm_rsh_num_concurrent (128, orte/mca/plm/rsh/plm_rsh_component.c @ v4.1.8) at once.
_SSHD_FIX = ("ps -o pid,args -C sshd   # on the other node: an sshd started with -d serves one connection, then exits\n"
             "/usr/sbin/sshd -D -p 12345 &   # in a container: -D stays in the foreground and still forks one process per "
             "connection (never -d); the launcher then uses that port (horovodrun -p 12345, mpirun --mca plm_rsh_args \"-p 12345\")")
_MAXSTARTUPS_FIX = ("sshd -T | grep -i maxstartups   # on the node that drops connections (as root): default 10:30:100\n"
                    "mpirun --mca plm_rsh_num_concurrent 8 -np 64 --hostfile hosts ./app   # Open MPI: fewer ssh connections "
                    "at once; or raise MaxStartups in /etc/ssh/sshd_config (the administrators)")
# strerror(ETIMEDOUT) is "Operation timed out" in the BSDs' libc, which macOS's derives from (FreeBSD
# lib/libc/gen/errlst.c, errno 60), and "Connection timed out" in glibc and musl: a connect failure in
# the BSD wording came from a user's own Mac, not from a Linux node reaching another.
_BSD_CLIENT = ("Operation timed out",)
# A login from outside names the site's public host (cluster.phy.cuhk.edu.hk: four dots); ssh between a
# job's nodes names them short (node002) or by the cluster's internal domain (hpc-mn101.hpc.lan). Without
# a launcher's line beside it, a refused connection to such a name is a login that failed, not a launch.
_PUBLIC_NAME_DOTS = 3


def _login_from_outside(s: dict, launcher: Optional[str]) -> bool:
    host = str(s.get("host") or "")
    if launcher is None and s.get("id") == "openssh:connect-to-host-failed" and host[:1] in _REDACTED:
        return True   # a host the user hid ("<IP>") and no launcher beside it: nothing says it was a node of a job
    return (launcher is None and s.get("id") == "openssh:connect-to-host-failed"
            and host.count(".") >= _PUBLIC_NAME_DOTS and not host.replace(".", "").isdigit())


_REDACTED = ("(", "<", "[")


_CHECK = ('for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do ssh -o BatchMode=yes "$h" true '
          '|| echo "ssh to $h refused"; done   # inside the job: which nodes refuse')
_KEYS = ("# without Slurm, or where the site allows ssh between a job's nodes (home shared by the nodes):\n"
         "# ssh-keygen -t ed25519 && cat ~/.ssh/id_ed25519.pub >> ~/.ssh/authorized_keys && chmod 600 ~/.ssh/authorized_keys\n"
         "# and the nodes' host keys per the site's known_hosts policy (ask the administrators; do not turn checking off)")
_NO_SERVER = ("ssh -v OTHER_NODE true 2>&1 | tail -3   # from this node: still refused means no sshd listens on port 22 there\n"
              "# a container or Kubernetes pod runs no sshd unless its image starts one: /usr/sbin/sshd -D -p 2222 in each "
              "worker, and the launcher told that port (mpirun --mca plm_rsh_args \"-p 2222\"); or launch with the "
              "scheduler or the operator (srun, the MPI Operator) instead of ssh")
_LAUNCH = {
    "openmpi": "# under Slurm, start the ranks with Slurm instead of ssh: srun with the same program and arguments, or "
               "mpirun inside the allocation from an Open MPI built with Slurm support (it then uses Slurm's launcher)",
    "pdsh": "# DeepSpeed: inside a Slurm allocation launch with Slurm, not pdsh over ssh: deepspeed --launcher slurm with the same "
            "arguments (or srun python with torch's env:// rendezvous)",
    "mpich": "# under Slurm, start the ranks with srun (an MPICH built with Slurm support), not mpiexec's ssh launcher",
    None: "# under Slurm, start every node's process with srun (srun torchrun ..., srun python ...), not with ssh",
}


def _launcher(f: FactView, told: List[dict]) -> Optional[str]:
    ids = [str(s.get("id", "")) for s in told] + [str(s.get("id", "")) for s in f.get("ticket.symptoms") or []]
    if any(i == "openssh:pdsh-ssh-exit-255" for i in ids):
        return "pdsh"
    if any(i.startswith("openmpi:") for i in ids):
        return "openmpi"
    if any(i.startswith(("mpich:", "hydra:", "intel_mpi:")) for i in ids):
        return "mpich"
    return None


def _ssh_status(s: dict) -> bool:
    return s.get("id") == "intel_mpi:bstrap-proxy-failed" and str(s.get("exitcode")) == _SSH_WAIT_STATUS


def _to_a_forge(s: dict) -> bool:
    host = str(s.get("host") or "").lower()
    return s.get("user") == "git" or host.endswith(_FORGES)


@rule("NET011", SYMBOL, "error", "ssh between the job's nodes is refused, so a launcher that uses it cannot start ranks",
      impact=7, also={"warning": "the other node's sshd runs in debug mode (-d) and no refusal is pasted yet",
                      "info": "the user says the other node's sshd stops"})
def ssh_between_nodes_refused(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the OpenSSH client refusing to log in to another node, as launchers that
        start ranks or daemons over ssh print it: "Host key verification failed.", "No ED25519 host
        key is known for <node> and you have requested strict checking.", "<user>@<node>:
        Permission denied (publickey,...).", "ssh: connect to host <node> port 22: Connection
        refused", "ssh: Could not resolve hostname <node>: ...", and pdsh's (DeepSpeed's default
        multi-node runner) "pdsh@<host>: <node>: ssh exited with exit code 255", ClusterShell's
        "clush: <node>: exited with exit code 255", Intel MPI's "unable to run bstrap_proxy on
        <node> (pid N, exit code 65280)" (the wait status of ssh's own 255; other codes are the
        proxy's and are left alone); Open MPI's "ORTE
        was unable to reliably start one or more daemons" beside one of them names mpirun's
        ssh launcher. ssh to a code forge (git@github.com) is git's, not a launcher's, and is
        left alone, and so is a connect failure in the BSD libc's words ("Operation timed out",
        which Linux spells "Connection timed out"): that ssh ran on the user's own Mac, reaching
        the cluster from outside, not on a node; so is a failed connection to a public name
        (three dots or more: cluster.example.ac.uk) or to a host the user redacted ("<IP>") with
        no launcher's line beside it, a login that failed rather than a launch. Where ssh says the host key changed (REMOTE HOST
        IDENTIFICATION HAS CHANGED), ssh-host-key-changed answers instead. The server's side:
        sshd's "Server will not fork when running in debugging
        mode." (sshd -d serves one connection and exits; a warning alone, an error beside a
        refusal), its "drop connection #n from [addr]:port on [addr]:22 past MaxStartups", and a
        user saying the other node's sshd quits (info).

    Why it matters:
        mpirun's rsh/ssh launcher, MPICH's Hydra, DeepSpeed's pdsh runner, Horovod's horovodrun
        and scripts that ssh to each node start the other nodes' processes over ssh. Many
        clusters do not allow ssh between compute nodes, or allow it only to nodes of the user's
        own job, or have no keys or known host keys set up for it; the launch fails before any
        rank runs. Under Slurm the scheduler can start the processes itself.

    How to fix:
        Under Slurm, start every node's processes with srun (or an MPI built with Slurm support,
        whose mpirun uses Slurm's launcher inside an allocation; DeepSpeed's --launcher slurm),
        not ssh. Where ssh between nodes is the intended way: a key whose public half is in
        ~/.ssh/authorized_keys on the shared home, and the nodes' host keys as the site's
        known_hosts policy says (never by turning host key checking off).

    References:
        - https://docs.open-mpi.org/en/v5.0.8/launching-apps/slurm.html
        - https://docs.open-mpi.org/en/v5.0.8/launching-apps/ssh.html
        - https://www.deepspeed.ai/getting-started/#resource-configuration-multi-node
        - https://wiki.mpich.org/mpich/index.php/Using_the_Hydra_Process_Manager
        - https://man.openbsd.org/ssh (StrictHostKeyChecking, BatchMode, authorized_keys)
        - https://github.com/openssh/openssh-portable/blob/V_10_5_P1/sshd.c (debug mode, drop_connection)
        - https://man.openbsd.org/sshd_config#MaxStartups
        - https://github.com/cea-hpc/clustershell/blob/master/lib/ClusterShell/CLI/Clush.py (exited with exit code %d)
        - https://www.intel.com/content/www/us/en/docs/mpi-library/developer-reference-linux/2021-8/hydra-environment-variables.html (I_MPI_HYDRA_BOOTSTRAP)
        - https://github.com/freebsd/freebsd-src/blob/main/lib/libc/gen/errlst.c (60 - ETIMEDOUT "Operation timed out")
    """
    told = [s for s in catalogued(f, SYMBOL) if not _to_a_forge(s)]
    if any(s.get("family") == "ssh_host_keys" for s in f.get("ticket.symptoms") or []):
        return   # ssh said why it refused (a changed or revoked host key): ssh-host-key-changed answers it
    debug = next((s for s in told if s.get("id") == "openssh:sshd-debug-no-fork"), None)
    refusals = [s for s in told if (str(s.get("id", "")).startswith("openssh:") or _ssh_status(s)) and s is not debug
                and not (s.get("id") == "openssh:connect-to-host-failed" and str(s.get("reason") or "").strip() in _BSD_CLIENT)]
    if debug is not None:
        yield Hit(message=f"the other node's sshd runs in debug mode (line {debug.get('line')}: \"{told_text(debug)}\"): "
                          "sshd -d serves one connection and exits, so every later ssh to that node is refused"
                          + (f" (line {refusals[0].get('line')}: \"{told_text(refusals[0])}\")" if refusals else ""),
                  severity="error" if refusals else "warning", fix=_SSHD_FIX, evidence=told_evidence(debug))
        return
    if not refusals:
        said = next((s for s in told if s.get("id") == "prose:sshd-stops-said"), None)
        if said is not None:
            yield Hit(message=f"the ticket says the other node's ssh server stops (\"{said.get('matched') or told_text(said)}\"): "
                              "a launcher that starts ranks over ssh (horovodrun, mpirun, pdsh) then meets \"Connection "
                              "refused\"; the usual cause is an sshd started by hand with -d (debug mode), which serves one "
                              "connection and exits (OpenSSH's sshd.c)",
                      severity="info", fix=_SSHD_FIX, evidence=told_evidence(said))
        return   # the daemon-launch failure alone has other causes (PATH, libraries, /tmp): not this rule's
    # the client's reason first: pdsh's exit line only says that ssh failed
    s = next((t for t in refusals if t.get("id") not in _EXIT_LINES), refusals[0])
    host = s.get("host")
    why = _WHY.get(str(s.get("id")), "ssh to another node was refused")
    launcher = _launcher(f, told)
    if _login_from_outside(s, launcher):
        return
    if s.get("id") == "openssh:sshd-drop-past-maxstartups":
        yield Hit(message=f"ssh between nodes was refused{f' (from {host})' if host else ''}: {why} (line {s.get('line')}: "
                          f"\"{told_text(s)}\"); a launcher that opens many ssh connections at once loses some of them",
                  fix=_MAXSTARTUPS_FIX, evidence=told_evidence(s))
        return
    if s.get("id") == "openssh:could-not-resolve-hostname" and host:
        # no login was tried: keys and host keys are not the matter, the list of nodes is
        yield Hit(message=f"ssh could not start a rank on {host}: {why} (line {s.get('line')}: \"{told_text(s)}\"); "
                          "the hostfile or host list names a node this host does not know (an example's placeholder, "
                          "another cluster's names), so a launcher that starts ranks over ssh cannot start them",
                  fix=(f"getent hosts {shlex.quote(str(host))}   # must print an address: else the name is not a node here\n"
                       "scontrol show hostnames \"$SLURM_JOB_NODELIST\"   # under Slurm, the job's own nodes: the names "
                       f"the hostfile must hold\n{_LAUNCH[launcher]}"),
                  evidence=told_evidence(s))
        return
    # "Connection refused" is the other node's TCP stack: no sshd listens there, so keys are not yet the matter
    no_server = s.get("id") == "openssh:connect-to-host-failed" and str(s.get("reason") or "").strip() == "Connection refused"
    yield Hit(message=f"ssh between nodes was refused{f' (to {host})' if host else ''}: {why} "
                      f"(line {s.get('line')}: \"{told_text(s)}\"); a launcher that starts ranks over ssh cannot start them",
              fix=f"{_CHECK}\n{_LAUNCH[launcher]}\n" + (_NO_SERVER if no_server else _KEYS), evidence=told_evidence(s))


_DAEMON_FIX = ("ssh OTHER_NODE 'command -v orted mpirun; echo \"$PATH\"'   # what a non-interactive shell there finds "
               "(the launcher's, not your login's)\n"
               "mpirun --prefix \"$(dirname \"$(dirname \"$(command -v mpirun)\")\")\" -np 4 --hostfile hosts ./app   "
               "# sets PATH and LD_LIBRARY_PATH on the remote nodes to this Open MPI (installed at the same path on every node)")


@rule("ENV034", "mpi-remote-daemon-not-found", "error",
      "Open MPI's daemon is not found on the other nodes' PATH", impact=7)
def mpi_remote_daemon_not_found(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the remote shell Open MPI's ssh launcher starts answering "orted: command
        not found" (prted for Open MPI 5), usually above "ORTE was unable to reliably start one
        or more daemons."

    Why it matters:
        mpirun starts a daemon on every other node through a non-interactive login shell, whose
        PATH is not the user's interactive one: where Open MPI is not on it (a module loaded only
        in the login session, ~/.bashrc returning early for non-interactive shells), or is
        installed at another path there, no rank starts off the first node. A single-node run
        works, which hides it.

    How to fix:
        Install Open MPI at the same path on every node and run mpirun --prefix with that path
        (it sets PATH and LD_LIBRARY_PATH on the remote nodes), or make the non-interactive
        shell's PATH include it; under a batch scheduler, launch inside the allocation (srun, or
        mpirun using the scheduler's launcher) instead of ssh.

    References:
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/mca/errmgr/base/help-errmgr-base.txt ([failed-daemon-launch])
        - https://github.com/open-mpi/ompi/blob/v4.1.8/orte/tools/orterun/orterun.1in (--prefix, Remote Execution)
        - https://github.com/open-mpi/ompi/issues/599
    """
    told = catalogued(f, "mpi-remote-daemon-not-found")
    if not told:
        return
    s = told[0]
    daemon = s.get("daemon") or s.get("zsh") or "orted"
    yield Hit(message=f"a remote node's shell cannot find Open MPI's daemon {daemon} (line {s.get('line')}: "
                      f"\"{told_text(s)}\"): Open MPI is not on that node's non-interactive PATH, or not at the same path",
              fix=_DAEMON_FIX, evidence=told_evidence(s))
