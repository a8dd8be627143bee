"""Shared-memory segments left by runs that crashed: a program that cannot create its segment because
one of that name is left, System V limits used up, and on a live node the user's /dev/shm files no
process of the user holds and System V segments with no process attached (checks/shm_segments.py).
/dev/shm too small for a run is shm-too-small's (MEM003)."""

from __future__ import annotations

import shlex
from typing import Iterator

from hpcdoctor import knowledge
from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import catalogued, ticket_evidence, told_evidence, told_text

_MIB = 2 ** 20
# Which of the user's files are still open, and the System V segments with no process attached
# (ipcs -m columns: key shmid owner perms bytes nattch status).
_LOOK = ("find /dev/shm -maxdepth 1 -user $USER -type f -printf '%k KiB  %TY-%Tm-%Td %TH:%TM  %p\\n' | sort -n | tail   "
         "# the user's POSIX segments, largest last\n"
         "fuser -v /dev/shm/* 2>&1 | grep -w $USER   # which of them a process still holds (remove only the others)\n"
         "ipcs -m | awk -v u=$USER '$3==u && $6==0'   # the user's System V segments with no process attached\n")
# shmget(2) failing, in the kernel's errno words (shm.toml) and in UCX's (ucx.toml): with ENOSPC, System V's
# segment count or total is used up (limits.py leaves a "No space left on device" beside them to this rule).
SHMGET_FAILED = ("shm:shmget-enospc", "ucx:shmget-failed")
_SYSV_RM = "ipcs -m | awk -v u=$USER '$3==u && $6==0 {print $2}' | xargs -r -n1 ipcrm -m   # remove those System V segments\n"


# the MPI transports' own words and /dev/shm rows (knowledge/messages/shm.toml): PSM2's fault handler,
# its names used up, and the segments of Open MPI's vader BTL, PSM2 and UCX listed by ls -l
_PSM2_FAULT = "shm:psm2-intra-node-shm-fault"
_ROWS = {"shm:dev-shm-vader-segment": "Open MPI's vader BTL", "shm:dev-shm-psm2-segment": "PSM2",
         "shm:dev-shm-ucx-segment": "UCX's posix transport"}
_MPI_IDS = frozenset({_PSM2_FAULT, "shm:psm2-shm-namespace-exhausted", *_ROWS})
_MPI_RM = ("find /dev/shm -maxdepth 1 -user $USER \\( -name 'vader_segment.*' -o -name 'psm2_shm.*' -o -name 'ucx_shm_posix_*' \\) "
           "! -exec fuser -s {} \\; -print -delete   # remove this user's MPI segments that no process holds\n")


def _mpi_segments(f: FactView, told: list) -> Hit:
    """An MPI transport that met segments of runs that ended, or a listing of them."""
    # every row of the listing (catalogued keeps one message per entry)
    rows = [t for t in f.get("ticket.symptoms") or [] if isinstance(t, dict) and t.get("id") in _ROWS]
    said = next((t for t in told if t.get("id") not in _ROWS), None)
    listed = ""
    if rows:
        owners = sorted({str(r.get("owner")) for r in rows if r.get("owner")})
        kinds = sorted({_ROWS[str(r["id"])] for r in rows})
        listed = (f"{len(rows)} MPI segment(s) of {' and '.join(kinds)} listed in /dev/shm (owner {', '.join(owners) or 'unknown'}; "
                  f"line {rows[0].get('line')}: \"{str(rows[0].get('name') or told_text(rows[0]))}\"): each stays until removed "
                  "or the node reboots, and a run killed before its cleanup leaves them")
    if said is not None:
        what = ("PSM2 faulted on its intra-node shared memory and exited; its own advice is to delete stale shared-memory "
                "files in /dev/shm (segments of runs that ended: psm2_shm.*, Open MPI's vader_segment.*)"
                if said.get("id") == _PSM2_FAULT else
                "PSM2 found every shared-memory name it tries held by segments of other users' runs")
        message = f"{what} (line {said.get('line')}: \"{told_text(said)}\")" + (f"; {listed}" if listed else "")
    else:
        message = listed
    return Hit(message=message, fix=(_LOOK + _MPI_RM).rstrip("\n"), evidence=told_evidence(said or rows[0]))


@rule("SYS022", "stale-shm-segments", "warning", "shared-memory segments left by runs that ended hold memory and names",
      impact=6)
def stale_shm_segments(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a program that cannot create its shared-memory segment because one is left:
        posix_ipc's "Shared memory with the specified name already exists", Python's
        multiprocessing.shared_memory ending in "FileExistsError: [Errno 17] File exists: '/name'",
        and "shmget: No space left on device" (System V's segment count or total used up; UCX's
        "shmget(size=... flags=...) for mm_recv_desc failed: No space left on device"); the MPI
        transports' own words: PSM2's "Unable to allocate shared memory for intra-node messaging.
        Delete stale shared memory files in /dev/shm." and "shm_open: namespace exhausted", and rows
        of ls -l /dev/shm naming Open MPI's vader_segment.*, PSM2's psm2_shm.* or UCX's
        ucx_shm_posix_* segments (their owner and count are quoted). On a live
        node, the user's files in /dev/shm that no process of the user has open or mapped, with the
        user's System V segments that no process is attached to, together holding at least a
        quarter of /dev/shm (knowledge/thresholds.toml [shm] stale_min_fraction).

    Why it matters:
        A POSIX or System V segment lives until it is removed or the node reboots, whatever became
        of the process that made it. A run that crashed leaves its segments: they hold memory (tmpfs
        pages count as the node's memory) and /dev/shm room, and a program that creates its segment
        by a fixed name fails, or crashes again, when it meets the old one.

    How to fix:
        List the user's segments and which a process still holds (find, fuser, ipcs -m), then remove
        the others: rm of the /dev/shm files, ipcrm -m of the System V ids. A program's own cleanup
        (posix_ipc's unlink, SharedMemory.unlink()) does the same by name.

    References:
        - https://man7.org/linux/man-pages/man3/shm_open.3.html (a segment lives until shm_unlink; EEXIST)
        - https://man7.org/linux/man-pages/man2/shmget.2.html (ENOSPC: SHMMNI, SHMALL)
        - https://man7.org/linux/man-pages/man1/ipcrm.1.html
        - https://github.com/osvenskan/posix_ipc/issues/6 (a segment left by Ctrl-C)
        - https://github.com/cornelisnetworks/opa-psm2/blob/master/ptl_am/am_reqrep_shmem.c (amsh_mmap_fault, psm2_shm names)
        - https://github.com/open-mpi/ompi/issues/6322 (vader segments left in /dev/shm after an aborted run, Open MPI 3.1)
    """
    told = catalogued(f, "stale-shm-segments")
    mpi = [t for t in told if t.get("id") in _MPI_IDS]
    if mpi:
        yield _mpi_segments(f, mpi)
        return
    # UCX's shmget failure is System V's limits used up only with ENOSPC (shmget(2); EINVAL: above shmmax)
    told = [t for t in told if t.get("id") != "ucx:shmget-failed" or "No space left" in str(t.get("error", ""))]
    if told:
        s = told[0]
        name = s.get("name")
        rm = f"rm -f /dev/shm/{shlex.quote(str(name))}   # the segment the program met, once no run holds it\n" if name else ""
        sysv = s.get("id") in SHMGET_FAILED
        what = ("System V shared memory is used up (the system's segment count or total): the usual cause is segments "
                "of programs that crashed, which nothing holds any longer" if sysv else
                "a shared-memory segment of the name the program creates already exists: left by a run that crashed "
                "or was killed before removing it, or held by a run still going")
        yield Hit(message=f"{what} (line {s['line']}: \"{told_text(s)}\")",
                  fix=(_LOOK + rm + (_SYSV_RM if sysv else "")).rstrip("\n"), evidence=ticket_evidence(s))
        return
    seg = f["shm_segments.posix"]
    sysv = f.get("shm_segments.sysv")
    sysv_bytes = sysv.get("orphan_bytes", 0) if isinstance(sysv, dict) else 0
    size = f.get("memory.shm_size_bytes")
    if not isinstance(size, int) or size <= 0:
        return
    stale = int(seg.get("orphan_bytes") or 0) + int(sysv_bytes or 0)
    fraction = float(knowledge.load("thresholds")["shm"]["stale_min_fraction"])
    if stale < fraction * size:
        return
    names = [str(x.get("path")) for x in seg.get("largest") or [] if isinstance(x, dict) and x.get("path")]
    rm = ("rm -f " + " ".join(shlex.quote(n) for n in names) + "   # the largest of them (check fuser's list first)\n") if names else ""
    said = []
    if seg.get("orphans"):
        said.append(f"{seg['orphans']} file(s) in /dev/shm no process of this user holds ({seg['orphan_bytes'] / _MIB:.0f} MiB)")
    if isinstance(sysv, dict) and sysv.get("orphans"):
        said.append(f"{sysv['orphans']} System V segment(s) with no process attached ({sysv_bytes / _MIB:.0f} MiB)")
    yield Hit(message=f"this user's shared memory left by runs that ended: {' and '.join(said)}, "
                      f"{stale / size:.0%} of /dev/shm ({size / _MIB:.0f} MiB); it stays until removed or the node reboots",
              fix=(_LOOK + rm + (_SYSV_RM if isinstance(sysv, dict) and sysv.get("orphans") else "")).rstrip("\n"),
              evidence={"shm_segments.posix": {k: seg.get(k) for k in ("files", "orphans", "orphan_bytes")},
                        "memory.shm_size_bytes": size,
                        "shm_segments.sysv": sysv if isinstance(sysv, dict) else None, "threshold_fraction": fraction})
