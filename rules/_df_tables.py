"""df's table read from a paste (knowledge/messages/df_tables.toml): which file systems a pasted
df or df -i shows full. Each row at 100% (or 99%) takes the kind of the nearest df header above it:
space under "Use%"/"Capacity", inodes under "IUse%". A row with no header above it is not read: the
same numbers mean blocks in one table and files in the other."""

from __future__ import annotations

from typing import List, Optional

from hpcdoctor.facts import FactView

_HEADER = {"df_tables:df-header-blocks": "blocks", "df_tables:df-header-inodes": "inodes"}
_ROWS = ("df_tables:df-row-full", "df_tables:df-row-nearly-full")
# Full by design, never a finding: read-only images mounted whole (snaps, AppImages and container
# images are squashfs on loop devices; erofs and cramfs the same), optical media, and overlay mounts
# (a container's root: the image's layers below, its own writable layer beside, df reports the
# backing store only through the host's own row).
_BY_DESIGN_TYPES = ("squashfs", "iso9660", "udf", "cramfs", "erofs", "overlay", "fuse.squashfuse", "squashfuse")
_BY_DESIGN_MOUNTS = ("/snap/", "/media/", "/run/media/", "/cdrom", "/var/lib/snapd/")


def _by_design(row: dict) -> bool:
    fs, fstype, mount = str(row.get("fs") or ""), str(row.get("fstype") or ""), str(row.get("mount") or "")
    if fstype in _BY_DESIGN_TYPES or fs in ("overlay", "squashfs") or fs.startswith(("/dev/loop", "/dev/sr")):
        return True
    if mount == "/dev/shm":
        return True   # a full /dev/shm is shm-too-small's
    return any(mount.startswith(m) or mount + "/" == m for m in _BY_DESIGN_MOUNTS)


def df_rows(f: FactView, nearly: bool = False) -> List[dict]:
    """The pasted df rows at 100% (and at 99% with ``nearly``), each with ``kind`` "blocks" or
    "inodes", leaving out those full by design."""
    said = [s for s in f.get("ticket.symptoms") or [] if isinstance(s, dict) and isinstance(s.get("line"), int)]
    headers = sorted((s["line"], _HEADER[s["id"]]) for s in said if s.get("id") in _HEADER)
    out = []
    for s in said:
        if s.get("id") not in _ROWS or (s["id"] == _ROWS[1] and not nearly) or _by_design(s):
            continue
        kind: Optional[str] = None
        for line, k in headers:
            if line < s["line"]:
                kind = k
        if kind:
            out.append(dict(s, kind=kind))
    return out


def blocks_free(f: FactView, mount: str) -> bool:
    """A pasted df (space) table shows no full row for ``mount``: its blocks are not used up."""
    said = f.get("ticket.symptoms") or []
    if not any(isinstance(s, dict) and s.get("id") == "df_tables:df-header-blocks" for s in said):
        return False
    return not any(r["kind"] == "blocks" and r.get("mount") == mount for r in df_rows(f))


def describe(row: dict) -> str:
    fs = f"{row['fs']} " if row.get("fs") else ""
    if row["kind"] == "inodes":
        return (f"df -i shows {fs}on {row['mount']} with {row.get('used')} of {row.get('size')} inodes used "
                f"({row.get('pct')}%, {row.get('avail')} free)")
    return f"df shows {fs}on {row['mount']} {row.get('pct')}% used ({row.get('used')} of {row.get('size')}, {row.get('avail')} available)"
