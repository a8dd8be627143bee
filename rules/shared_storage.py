"""Shared storage set up so that a job or a group cannot use it: a site file system the login node
has and the compute nodes do not, and a project folder whose new files do not take the project's
group (no setgid bit). No program prints either; what the user writes (knowledge/messages/prose.toml)
is quoted back at info, with the commands that show it on the node."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, first_stated, told_evidence, told_text

# ----------------------------------------------------------------------------------------------
# SYS023 shared-filesystem-not-mounted
NOT_MOUNTED = "shared-filesystem-not-mounted"
_MOUNT_FIX = (
    "findmnt -T /path/to/fs; df -h /path/to/fs   # on the login node: the file system and the mount that serves it\n"
    "srun -N1 -p PARTITION bash -c 'hostname; findmnt -T /path/to/fs || echo not mounted here'   # the same from a job\n"
    "grep -h /path/to/fs /etc/fstab /etc/auto.* 2>/dev/null   # administrators: the login node's entry, to add on the "
    "compute nodes (read-only where it is archive storage)")
# GPFS's daemon not running on the node (knowledge/messages/gpfs.toml): nothing of it is mounted
# there. Started by hand as IBM's "GPFS daemon does not come up" says; mmautoload's start at boot
# is the autoload attribute (mmchconfig autoload=yes).
_GPFS_DOWN_FIX = (
    "/usr/lpp/mmfs/bin/mmgetstate   # this node's GPFS daemon: down (not started), arbitrating, active\n"
    "tail -n 50 /var/adm/ras/mmfs.log.latest   # why it did not come up (no \"mmfsd ready\" line after the start)\n"
    "sudo /usr/lpp/mmfs/bin/mmstartup && sudo /usr/lpp/mmfs/bin/mmmount all   # administrators: start the daemon on "
    "this node, then mount\n"
    "/usr/lpp/mmfs/bin/mmlsconfig autoload   # administrators: yes, so the daemon starts at boot (mmchconfig autoload=yes)")


# slurmstepd's "couldn't chdir to `PATH': No such file or directory: going to /tmp instead"
# (knowledge/messages/slurmstepd.toml): the job's working directory is not on the node that ran it.
_CHDIR_MISSING = "slurmstepd:chdir-missing-fallback-tmp"


def _chdir_fix(path: str) -> str:
    p = shlex.quote(path)
    return (f"findmnt -T {p}   # on the submitting host: the file system that holds the job's directory (TARGET, SOURCE)\n"
            f"srun -N1 -p PARTITION --chdir=/tmp ls -ld {p}   # the same directory seen from a compute node: "
            "\"No such file or directory\" there confirms it\n"
            "sbatch --chdir=\"$HOME\" job.sh   # meanwhile: submit from, or --chdir to, a directory on a file system every "
            "node mounts (home, project, scratch), not a login node's local disk\n"
            "grep -h \"$(findmnt -n -o TARGET -T " + p + ")\" /etc/fstab /etc/auto.* 2>/dev/null   # administrators: the "
            "login node's entry, to add on the compute nodes")


@rule("SYS029", NOT_MOUNTED, "error", "a shared file system is not mounted on this node (its client's daemon is not "
      "running), or the user says the compute nodes lack it", impact=5,
      also={"info": "only the user's sentence that the compute nodes lack a file system the login node has",
            "warning": "slurmstepd could not enter the job's working directory on the node and ran it in /tmp"})
def shared_filesystem_not_mounted(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, IBM Storage Scale's (GPFS) own words that its daemon is not running on the
        node, so nothing of it is mounted there: mmremote's "GPFS is not ready to handle commands
        yet." (under mmmount and every mm* command), 6027-665 "Failed to connect to file system
        daemon", 6027-602 "ERROR: file system not mounted": an error. A cluster that lost quorum
        (6027-725, 6027-666) is shared-filesystem-fault's. In a pasted ticket, the user's statement
        that a file system (storage, a mount, a directory) is not accessible or not mounted on the
        compute nodes: no program says this in its own words (a job sees only "No such file or
        directory"), so the statement is quoted back at info with the commands that show it.
        Slurm's own view of it is slurmstepd's "couldn't chdir to `PATH': No such file or
        directory: going to /tmp instead" (src/slurmd/slurmstepd/mgr.c, the same since 20.11): the
        job's working directory, which exists where it was submitted, does not on the node that
        ran it; a warning, since the task still ran (in /tmp).

    Why it matters:
        Jobs that read or write a path on a file system the login node mounts and the compute
        nodes do not fail, or land in a temporary working directory when the job's directory does
        not exist there.

    How to fix:
        GPFS: the administrators start the daemon on the node (mmstartup) and mount (mmmount all),
        read /var/adm/ras/mmfs.log.latest for why it did not come up, and set autoload so it starts
        at boot. Otherwise compare findmnt -T PATH on the login node and in a job; the
        administrators mount the file system on the compute nodes with the login node's entry.

    References:
        - https://www.ibm.com/docs/en/storage-scale/6.0.1?topic=issues-gpfs-daemon-does-not-come-up
        - https://www.ibm.com/support/knowledgecenter/STXKQY_5.0.0/com.ibm.spectrum.scale.v5r00.doc/6027-665.htm
        - https://github.com/cBio/cbio-cluster/issues/48 (mmautoload did not start the daemon; mmstartup fixed it)
        - https://man7.org/linux/man-pages/man8/findmnt.8.html
        - https://slurm.schedmd.com/srun.html (--chdir: a job whose directory does not exist on the node)
        - https://github.com/SchedMD/slurm/blob/slurm-25-05-8-1/src/slurmd/slurmstepd/mgr.c (couldn't chdir ... going to /tmp instead)
        - https://github.com/marbits-icm/marbits-public/issues/30
    """
    gpfs = next((s for s in catalogued(f, NOT_MOUNTED) if str(s.get("id", "")).startswith("gpfs:")), None)
    if gpfs is not None:
        yield Hit(message=f"line {gpfs.get('line')}: \"{told_text(gpfs)}\": the GPFS daemon (mmfsd) is not running on "
                          "this node, so its file systems are not mounted here; jobs see missing paths until it is "
                          "started and the file systems mounted", fix=_GPFS_DOWN_FIX, evidence=told_evidence(gpfs))
        return
    chdir = next((s for s in catalogued(f, NOT_MOUNTED) if s.get("id") == _CHDIR_MISSING), None)
    if chdir is not None:
        path = str(chdir.get("path") or "")
        yield Hit(message=f"line {chdir.get('line')}: \"{told_text(chdir)}\": the job's working directory {path} does not "
                          "exist on the node that ran it, so slurmstepd started the task in /tmp (relative paths and "
                          "output then land there or fail): a file system the submitting host mounts and this node does "
                          "not, or a directory on the submitting host's local disk",
                  fix=_chdir_fix(path), evidence=told_evidence(chdir), severity="warning")
        return
    s = first_stated(f, NOT_MOUNTED)
    if s is not None:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": a file system the login node has and the compute "
                          "nodes do not mount; compare findmnt on both", fix=_MOUNT_FIX, evidence=told_evidence(s),
                  severity="info")


# ----------------------------------------------------------------------------------------------
# SYS024 shared-dir-group-inheritance-missing
NO_SETGID = "shared-dir-group-inheritance-missing"
_SETGID_FIX = (
    "stat -c '%A %G %n' PROJECT_DIR   # an 's' in the group's execute place (drwxrws---) makes new entries take the folder's group\n"
    "chgrp -R PROJECT_GROUP PROJECT_DIR && find PROJECT_DIR -type d -exec chmod g+s {} +   # the folder's owner or the "
    "administrators: the project's group on everything, and the setgid bit on every directory\n"
    "umask 007   # members, in ~/.bashrc: new files group-writable, so the project can use them")


@rule("SYS030", NO_SETGID, "info", "new files in a shared folder take their creator's group, not the folder's", impact=3)
def shared_dir_group_inheritance_missing(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted ticket, the user's statement that files or folders created in a project
        folder get the creator's own group rather than the folder's. Nothing prints this; the
        statement is quoted back at info.

    Why it matters:
        Without the setgid bit on a directory, a new file takes its creator's primary group;
        other members of the project then cannot read or change it, and group quotas count it
        against the wrong group.

    How to fix:
        Give the folder tree the project's group and set the setgid bit on every directory
        (chmod g+s), so new files and subdirectories inherit the group; members set umask 007.

    References:
        - https://man7.org/linux/man-pages/man2/open.2.html (O_CREAT: the group of a new file, bsdgroups/S_ISGID)
        - https://man7.org/linux/man-pages/man1/chmod.1.html (SETUID AND SETGID BITS on directories)
        - https://github.com/c3nl-neuraldynamics/c3nl_cluster/issues/9
    """
    s = first_stated(f, NO_SETGID)
    if s is not None:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": new entries take their creator's group because "
                          "the folder lacks the setgid bit", fix=_SETGID_FIX, evidence=told_evidence(s))
