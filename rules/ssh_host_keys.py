"""ssh refusing a node whose host key changed since the user's known_hosts recorded it (a node
reinstalled with new keys): the OpenSSH client's own lines (knowledge/messages/ssh_host_keys.toml),
with the stale entry's file and line when the paste has them. Launchers that start ranks over ssh
(Intel MPI's hydra, Open MPI's rsh launcher, pdsh) fail on that node."""

from __future__ import annotations

import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "ssh-host-key-changed"
_REVOKED = "ssh_host_keys:revoked-host-key"


def _field(told: list, name: str) -> Optional[str]:
    return next((str(s[name]) for s in told if s.get(name)), None)


@rule("NET033", SYMBOL, "error",
      "ssh refuses a host whose key differs from the one in known_hosts (a reinstalled node)", impact=7)
def ssh_host_key_changed(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, the OpenSSH client's refusal of a changed host key: "WARNING: REMOTE HOST
        IDENTIFICATION HAS CHANGED!", "Offending <type> key in <file>:<line>", "Host key for
        <host> has changed and you have requested strict checking." (and the older "<TYPE> host
        key for <host> has changed ..."), "WARNING: POSSIBLE DNS SPOOFING DETECTED!" and
        "WARNING: REVOKED HOST KEY DETECTED!". ssh prints "Host key verification failed." after
        them; that line alone (no key known, or changed) stays with ssh-between-nodes-refused.

    Why it matters:
        ssh compares the host's key with the one recorded in ~/.ssh/known_hosts (and the system's
        ssh_known_hosts). A node reinstalled or re-imaged gets new host keys; a user's old entry
        then makes ssh refuse it under strict checking, and without a terminal (a launcher's ssh)
        it cannot ask. MPI launchers that start their proxies over ssh (Intel MPI's pmi_proxy,
        Open MPI's orted, pdsh) do not start on that node and the job hangs or fails. Rarely the
        change is a real interception: compare the fingerprint with the administrators' one.

    How to fix:
        Remove the stale entry with ssh-keygen -R <host> (the file and line are in the paste's
        "Offending ... key in" line), then connect once to record the new key after checking its
        fingerprint. Administrators: publish the nodes' keys in /etc/ssh/ssh_known_hosts (and
        keep host keys across reinstalls), so users need no per-node entries.

    References:
        - https://github.com/openssh/openssh-portable/blob/0ef0f5a839831c213f24e3f2ae434765c607fb50/sshconnect.c (check_host_key, warn_changed_key)
        - https://man.openbsd.org/ssh-keygen#R
        - https://man.openbsd.org/ssh_config#StrictHostKeyChecking
        - https://man.openbsd.org/sshd#SSH_KNOWN_HOSTS_FILE_FORMAT
        - https://github.com/kftsehk/phy-clusters/issues/29
    """
    told = catalogued(f, SYMBOL)
    if not told:
        return
    said = told[0]
    host = _field(told, "host")
    where = _field(told, "file")
    lineno = _field(told, "lineno")
    revoked = any(s.get("id") == _REVOKED for s in told)
    target = host or "NODE"
    known = where or "~/.ssh/known_hosts"
    stale = f"{known}:{lineno}" if lineno else known
    why = ("the key it presented is marked revoked in known_hosts" if revoked else
           "its key differs from the one recorded in " + stale + ": the node was reinstalled or got new host keys")
    fix = (f"ssh-keygen -R {shlex.quote(target)} -f {shlex.quote(known) if where else '~/.ssh/known_hosts'}   "
           "# remove the stale entry (the \"Offending ... key in\" line names file and line)\n"
           f"ssh-keyscan -t ed25519,rsa {shlex.quote(target)} | ssh-keygen -lf -   "
           "# the new key's fingerprint: compare it with the administrators' before trusting it\n"
           f"ssh {shlex.quote(target)} true   # then connect once to record the new key (answer yes only if the fingerprint matched)\n"
           "# administrators: publish the nodes' host keys in /etc/ssh/ssh_known_hosts (and keep them across reinstalls), "
           "so users keep no per-node entries")
    yield Hit(message=f"line {said.get('line')}: \"{told_text(said)}\": ssh refuses {host or 'the host'}: {why}; "
                      "a launcher that starts ranks over ssh (Intel MPI's hydra, Open MPI, pdsh) cannot start them there",
              fix=fix, evidence=told_evidence(said))
