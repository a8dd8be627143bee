"""A file system the kernel took out of writing after an error: ext4's and ext2's remount read-only
(errors=remount-ro), ext4's aborted journal, Btrfs's forced read-only, XFS's shutdown (knowledge/messages/
kernel_storage.toml). storage-device-errors answers for the disk under it; this rule says what every job
writing there now gets and how the file system comes back. A job's own "Read-only file system" alone is
only consistent with it: images, squashfs and read-only binds are read-only by design."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "filesystem-remounted-read-only"

# ext4_abort's reason for the aborted journal: ext4 forces the file system read-only with it (fs/ext4/
# ext4_jbd2.c ext4_journal_check_start -> ext4_abort -> ext4_handle_error(force_ro)), so the line states it.
_ABORTED_JOURNAL = "Detected aborted journal"
_EROFS = "errno:EROFS"
# A read-only file system by design: a container's image or its binds, read-only where the runtime made them so.
_CONTAINER = re.compile(r"^(?:apptainer|singularity|enroot|docker|podman|container|container_fs|container_binds|charliecloud|shifter)[_:]")
_DEVICE = re.compile(r"[\w.:-]{1,40}")


def _repair(s: dict, dev: str) -> str:
    """The file system's own checker, by the family of the line that reported it."""
    key, disk = str(s.get("id", "")), shlex.quote(f"/dev/{dev}" if dev else "/dev/DEVICE")
    if ":xfs-" in key:
        return f"sudo xfs_repair {disk}"
    if ":btrfs-" in key:
        return f"sudo btrfs check {disk}"
    return f"sudo e2fsck -f {disk}"


def _fix(s: Optional[dict], dev: str) -> str:
    disk = shlex.quote(f"/dev/{dev}") if dev else "/dev/DEVICE"
    lines = [f"findmnt -o TARGET,SOURCE,FSTYPE,OPTIONS {disk}   # where it is mounted; 'ro' in OPTIONS: writes there fail" if dev else
             "findmnt -o TARGET,SOURCE,FSTYPE,OPTIONS -T DIRECTORY   # the directory the job wrote: 'ro' in OPTIONS, and the device under it",
             "sudo dmesg -T | grep -E 'EXT[234]-fs|XFS|BTRFS|I/O error|journal' | tail -30   # the error that made it read-only, and the disk's errors before it"]
    if s is not None:
        lines.append(f"sudo umount {disk} && {_repair(s, dev)} && sudo mount -a   # administrators, on a drained node: repair it "
                     "unmounted, then mount it again (the root file system: repair from a rescue boot, then reboot)")
    lines.append("# users: write to another file system meanwhile (scratch, a $TMPDIR elsewhere) and resubmit; "
                 "a read-only mount by design (a container image, a read-only bind) is not this")
    return "\n".join(lines)


def _stated(f: FactView) -> list:
    """The kernel's lines that a file system stopped taking writes: those the catalogue feeds here, and
    ext4's aborted journal (an ext4-error line whose reason is that)."""
    told = list(catalogued(f, SYMBOL))
    told += [s for s in f.get("ticket.symptoms") or [] if s.get("id") == "kernel_storage:ext4-error"
             and _ABORTED_JOURNAL in str(s.get("text", ""))]
    return sorted(told, key=lambda s: s.get("line") if isinstance(s.get("line"), int) else 0)


def _erofs(f: FactView) -> Optional[dict]:
    symptoms = f.get("ticket.symptoms") or []
    if any(_CONTAINER.match(str(s.get("id", ""))) for s in symptoms):
        return None
    return next((s for s in symptoms if s.get("id") == _EROFS), None)


@rule("SYS036", SYMBOL, "error", "the kernel made a file system read-only after an error", impact=7,
      also={"info": "a write failed with \"Read-only file system\": consistent with a file system the kernel remounted, not shown"})
def filesystem_remounted_read_only(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log, each file system's own line that it stopped taking writes after an
        error: ext4's "EXT4-fs (<dev>): Remounting filesystem read-only" and its "Detected aborted
        journal" (ext4_abort forces the file system read-only), ext2's "error: remounting filesystem
        read-only", Btrfs's "forced readonly", XFS's "Shutting down filesystem" (all wordings since
        2.6), "Filesystem has been shut down due to log error" (5.15 and later) and the older
        "xfs_log_force: error -5 returned." that a shut-down log repeats every 30 s: errors. A
        program's "Read-only file system" (EROFS) with none of them is info: a file system made
        read-only by the kernel is one cause, a read-only mount by design another; nothing is said
        where the paste shows a container runtime, whose images and binds are read-only by design.

    Why it matters:
        Every job that writes there fails ("Read-only file system", or "Input/output error" on a
        shut-down XFS) until the administrators repair and remount the file system; a local
        scratch, /tmp or the container store fails every job placed on the node.

    How to fix:
        Drain the node; unmount the file system, repair it (e2fsck -f, xfs_repair, btrfs check) and
        mount it again, or reboot for the root file system; read the disk's own health first
        (storage-device-errors). Users write to another file system meanwhile.

    References:
        - https://github.com/torvalds/linux/blob/v6.1/fs/ext4/super.c (ext4_handle_error: "Remounting filesystem read-only")
        - https://github.com/torvalds/linux/blob/v6.1/fs/ext4/ext4_jbd2.c (ext4_journal_check_start: "Detected aborted journal")
        - https://github.com/torvalds/linux/blob/v6.1/fs/ext2/super.c (ext2_error: "error: remounting filesystem read-only")
        - https://github.com/torvalds/linux/blob/v6.1/fs/btrfs/super.c (__btrfs_handle_fs_error: "forced readonly")
        - https://github.com/torvalds/linux/blob/v6.1/fs/xfs/xfs_log.c (xlog_force_shutdown: "Filesystem has been shut down due to log error")
        - https://docs.kernel.org/admin-guide/ext4.html (errors=remount-ro)
        - https://github.com/Seagate/cortx-hare/issues/852 (ext4 on dm-25 remounted read-only: mkdir fails)
    """
    told = _stated(f)
    if told:
        s = told[0]
        raw = str(s.get("device") or s.get("dev") or "")
        dev = raw if _DEVICE.fullmatch(raw) else ""
        xfs = ":xfs-" in str(s.get("id", ""))
        more = f"; {len(told) - 1} more such line(s)" if len(told) > 1 else ""
        gets = ("\"Input/output error\" (XFS shut it down)" if xfs else "\"Read-only file system\"")
        yield Hit(message=f"the kernel took {dev or 'a file system'} out of writing after an error (line {s.get('line')}: "
                          f"\"{told_text(s)}\"{more}): every write there now fails with {gets} until the administrators "
                          "repair it unmounted and mount it again",
                  fix=_fix(s, dev), evidence=told_evidence(s))
        return
    s = _erofs(f)
    if s is not None:
        yield Hit(message=f"line {s.get('line')}: \"{told_text(s)}\": a write was refused because the file system is "
                          "read-only; if it was writable before, the kernel may have remounted it after an error (its log "
                          "says so: 'Remounting filesystem read-only', 'forced readonly', 'Shutting down filesystem'); "
                          "a mount read-only by design is the other cause",
                  fix=_fix(None, ""), evidence=told_evidence(s), severity="info")
