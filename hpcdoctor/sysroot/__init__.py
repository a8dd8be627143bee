"""SysRoot: every byte a check reads comes through here.

Three implementations share one interface (``base.SysRoot``), so checks run unchanged on a live
node, on a recorded snapshot (a support ticket) and while recording one:

* ``LiveSysRoot`` (``live``) reads the machine;
* ``ReplaySysRoot`` (``replay``) reads a snapshot folder laid out as docs/design.md describes;
* ``RecordingSysRoot`` (``record``) reads the machine and writes what it read into a snapshot folder.

Commands run through ``processes``: their own process group, a timeout, bounded output. A read
that cannot be satisfied raises ``Missing`` with the reason; checks turn that into an Unknown
fact. Nothing here judges what it reads. The names below are the package's interface: import them
from ``hpcdoctor.sysroot``.
"""

from hpcdoctor.sysroot.base import (DEFAULT_CMD_TIMEOUT, MAX_READ_BYTES, MAX_RECORDED_BYTES, RC_TOO_MUCH_OUTPUT,
                                     SNAPSHOT_FORMAT, SNAPSHOT_VERSION, CmdResult, Missing, SysRoot, argv_key,
                                     read_capped)
from hpcdoctor.sysroot.live import LiveSysRoot
from hpcdoctor.sysroot.processes import kill_children, run_process
from hpcdoctor.sysroot.record import RecordingSysRoot
from hpcdoctor.sysroot.replay import ReplaySysRoot, SnapshotError

__all__ = [
    "DEFAULT_CMD_TIMEOUT", "MAX_READ_BYTES", "MAX_RECORDED_BYTES", "RC_TOO_MUCH_OUTPUT", "SNAPSHOT_FORMAT",
    "SNAPSHOT_VERSION", "CmdResult", "Missing", "SysRoot", "argv_key", "read_capped", "LiveSysRoot",
    "kill_children", "run_process", "RecordingSysRoot", "ReplaySysRoot", "SnapshotError",
]
