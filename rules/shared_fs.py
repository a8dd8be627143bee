"""A shared (parallel) file system not serving this node: the file system client's own words (IBM
Storage Scale/GPFS 6027-NNN, knowledge/messages/gpfs.toml), and, read at info level, a program's
lock that never came (Spack's LockTimeoutError, knowledge/messages/spack.toml), which is what a
locking file system in trouble looks like from above but also what another process holding the
lock looks like."""

from __future__ import annotations

from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "shared-filesystem-fault"
_LOCK = "spack:lock-timeout"

_GPFS_FIX = ("mmgetstate -a   # administrators: the GPFS daemon's state on every node (active, arbitrating, down)\n"
             "mmlsmount all -L   # which nodes have each file system mounted\n"
             "tail -n 50 /var/adm/ras/mmfs.log.latest   # the daemon's own account on this node\n"
             "sudo mmstartup && sudo mmmount all   # administrators, on this node once quorum is back: start the daemon, mount")
_LOCK_FIX = ("spack find --format '{name}' >/dev/null && echo 'database readable'   # whether Spack's database opens at all\n"
             "ps -u $USER -o pid,etime,args | grep '[s]pack'   # another Spack process of yours that holds the lock\n"
             "df -hT $(spack location -r)   # the file system Spack's tree is on (gpfs, lustre, nfs: ask its administrators "
             "whether it is healthy)\n"
             "spack config add 'config:db_lock_timeout:300'   # wait longer for a lock on a busy shared file system")


@rule("SYS048", SYMBOL, "error", "the shared file system is not serving this node (its client says so)", impact=7,
      also={"info": "only a program's lock that never came (Spack's lock timeout): another process holding it is as likely"})
def shared_filesystem_fault(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, IBM Storage Scale's (GPFS) own words that the cluster is not serving the
        node: 6027-725 "The mmfsd daemon is not ready to handle commands yet. Waiting for quorum.",
        6027-306 "Could not initialize inter-node communication", 6027-666 "Failed to determine
        file system manager", 6027-650 "The mmfs daemon is shutting down abnormally": an error.
        The daemon simply not running on the node (mmremote's "GPFS is not ready to handle
        commands yet.", 6027-665 "Failed to connect to file system daemon") is
        shared-filesystem-not-mounted's: one cause, one finding. Spack's "Timed out waiting
        for a read|write lock" alone is info: the lock's holder may be another Spack process, or
        the file system's lock manager may not be answering; the paste cannot tell.

    Why it matters:
        A parallel file system whose daemon lost quorum, or whose client cannot reach its peers,
        hangs or fails every job and every tool that touches it (installs, locks, reads of inputs),
        with errors that look like the program's own.

    How to fix:
        Administrators check the daemon's state across the cluster and its log, restore quorum or
        the network between the nodes, then start the daemon and mount on the node. For a lock
        timeout, first look for another Spack process of the user; then ask whether the file
        system is healthy, and lengthen Spack's lock timeout on a busy one.

    References:
        - https://www.ibm.com/docs/en/storage-scale/5.2.3?topic=messages-6027-725
        - https://www.ibm.com/docs/en/storage-scale/5.2.3?topic=logs-gpfs (/var/adm/ras/mmfs.log.latest)
        - https://github.com/spack/spack/blob/develop/lib/spack/llnl/util/lock.py (LockTimeoutError)
        - https://spack.readthedocs.io/en/latest/config_yaml.html (db_lock_timeout)
    """
    told = catalogued(f, SYMBOL)
    stated = next((s for s in told if s.get("id") != _LOCK), None)
    if stated is not None:
        yield Hit(message=f"the shared file system's client says it is not serving this node (line {stated.get('line')}: "
                          f"\"{told_text(stated)}\"): every job and tool that touches it hangs or fails until its "
                          "daemon is back",
                  fix=_GPFS_FIX, evidence=told_evidence(stated))
        return
    lock = next((s for s in told if s.get("id") == _LOCK), None)
    if lock is None:
        return
    where = f" on {lock['path']}" if lock.get("path") else ""
    yield Hit(message=f"Spack timed out waiting for a {lock.get('lock') or ''} lock{where} (line {lock.get('line')}: "
                      f"\"{told_text(lock)}\"): another process holds it, or the shared file system's locking is not "
                      "answering; the paste alone cannot tell which",
              fix=_LOCK_FIX, evidence=told_evidence(lock), severity="info")
