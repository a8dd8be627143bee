"""A disk, or the file system on it, that the kernel says failed: the block layer's failed requests,
the buffer cache's lost writes, ext4's and XFS's errors and shutdowns, NVMe timeouts and a controller
that is gone (knowledge/messages/kernel_storage.toml, Linux 6.1.192's own strings). Jobs that write
there fail with "Input/output error" or "Read-only file system" in words of their own."""

from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.knowledge import messages
from hpcdoctor.rules._common import catalogued, told_evidence, told_text

SYMBOL = "storage-device-errors"

# Optical and floppy drives answer every read of an empty drive with an I/O error, and a loop device's
# errors are its backing file's (a full file system under it): none of them is a failing disk.
_NOT_A_DISK = re.compile(r"(?:sr|fd|loop)\d{1,4}\b")
# The catalogue's action for each entry: "drain" where the line itself says data or the file system
# was lost (a medium or target error, a journal aborted, a shutdown, a controller gone): an error;
# "inspect" where a request failed or timed out and the device may still answer: a warning.
_DRAIN = "drain"


def _device(s: dict) -> str:
    """The disk or partition the line names: sdb, sdb1 (jbd2's 'sdb1-8' is the journal of sdb1), dm-1, nvme0."""
    if s.get("ctrl") is not None:
        return f"nvme{s.get('ctrl')}"
    dev = str(s.get("dev") or s.get("device") or "")
    if str(s.get("id", "")).endswith("jbd2-aborting-journal"):
        dev = dev.rsplit("-", 1)[0] if re.search(r"-\d{1,4}$", dev) else dev
    return dev if re.fullmatch(r"[\w.:-]{1,40}", dev) else ""


def _fix(dev: str) -> str:
    disk = f"/dev/{dev}" if dev else "/dev/DISK"
    smart = (f"sudo nvme smart-log {disk}   # the controller's own health: critical_warning, media_errors"
             if dev.startswith("nvme") else
             f"sudo smartctl -H -A {disk}   # the disk's own health (smartmontools): reallocated and pending sectors")
    return (f"lsblk -s -o NAME,TYPE,MODEL,SERIAL,MOUNTPOINT {shlex.quote(disk)}   # which disk this is, and what is mounted from it\n"
            "sudo dmesg -T | grep -E 'I/O error|EXT4-fs|XFS|Buffer I/O|nvme|journal' | tail -30   # how many requests "
            "failed, since when\n"
            f"{smart}\n"
            "scontrol update nodename=$(hostname -s) state=drain reason=\"disk errors\"   # Slurm; or your scheduler's drain, "
            "before more jobs write there\n"
            "# administrators: replace the disk (or fix its path: cable, controller, SAN), then repair the file system "
            "unmounted (e2fsck -f, xfs_repair) before the node takes jobs again")


def _errno(s: dict) -> str:
    """The errno an XFS line carries (xfs_log_force, log I/O, metadata I/O), named from errno.toml: -5 is EIO,
    the device failed the I/O; 117 EFSCORRUPTED (EUCLEAN) is corruption, not the disk."""
    raw = str(s.get("error") or "").lstrip("-")
    if not raw.isdigit():
        return ""
    entry = next((fam.by_code.get(int(raw)) for fam in messages.families(("errno",))), None)
    return f" (error {s.get('error')}: {entry.key}, {entry.get('message')})" if entry is not None else f" (error {s.get('error')})"


def _first(told: list) -> Optional[dict]:
    drain = [s for s in told if s.get("action") == _DRAIN]
    return (drain or told or [None])[0]


@rule("SYS035", SYMBOL, "error", "the kernel reports a disk or its file system failing", impact=7,
      also={"warning": "a request to a disk failed or timed out, and the device may still answer"})
def storage_device_errors(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted kernel log (dmesg, journalctl -k), the kernel's own report that storage
        failed: the block layer's "critical medium error", "critical target error", "protection
        error" and "device offline error, dev <disk>" (blk_print_req_error, with the older
        "blk_update_request:", "print_req_error:" and "end_request:" prefixes), ext4's "Remounting
        filesystem read-only" and "I/O error while writing superblock", jbd2's "Aborting journal",
        XFS's "Shutting down filesystem", "Metadata corruption detected" and "metadata I/O
        error", and NVMe's "controller is down; will reset": errors. A plain "I/O error" or
        "timeout error, dev <disk>", the buffer cache's "Buffer I/O error on dev", ext4's "EXT4-fs
        error" and its ext4_end_bio write warning, and an NVMe command timeout are warnings: a
        request failed and the device may still answer. Optical, floppy and loop devices are not
        read (an empty drive, or a loop device's full backing file system).

    Why it matters:
        Every job that writes to that file system fails ("Input/output error", or "Read-only file
        system" once ext4 remounts it read-only or XFS shuts it down), and data written just
        before may be lost ("lost async page write"). A failing local disk (scratch, /tmp, the
        container store) fails every job scheduled on the node until it is replaced.

    How to fix:
        Find the disk (lsblk), read its own health (smartctl, nvme smart-log), and drain the node
        until the administrators replace the disk or fix its path (cable, controller, SAN) and
        repair the file system unmounted.

    References:
        - https://github.com/torvalds/linux/blob/v6.1/block/blk-core.c (blk_errors: the status names)
        - https://github.com/torvalds/linux/blob/v6.1/block/blk-mq.c (blk_print_req_error)
        - https://github.com/torvalds/linux/blob/v6.1/fs/ext4/super.c (ext4_handle_error: errors=remount-ro)
        - https://github.com/torvalds/linux/blob/v6.1/fs/xfs/xfs_fsops.c (xfs_do_force_shutdown)
        - https://github.com/torvalds/linux/blob/v6.1/drivers/nvme/host/pci.c (nvme_timeout)
        - https://github.com/longhorn/longhorn/issues/193 (critical medium errors: a failing disk under a volume)
        - https://github.com/coolsnowwolf/lede/issues/6147 (critical target error, then ext4 read-only: bad sectors)
    """
    told = [s for s in catalogued(f, SYMBOL) if not _NOT_A_DISK.fullmatch(_device(s) or "-")]
    s = _first(told)
    if s is None:
        return
    dev = _device(s)
    stated = s.get("action") == _DRAIN
    what = ("the disk or the file system on it failed: writes there fail, and data written just before may be lost"
            if stated else
            "a request to the disk failed or timed out: the disk, its path or its controller is failing, or was removed")
    what += _errno(s)
    others = len(told) - 1
    more = f"; {others} more such line(s)" if others else ""
    yield Hit(message=f"the kernel reports {dev or 'a disk'} failing (line {s.get('line')}: \"{told_text(s)}\"{more}): {what}",
              fix=_fix(dev), evidence=told_evidence(s), severity=None if stated else "warning")
