"""``LiveSysRoot``: reads the machine hpcdoctor runs on."""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Sequence

from hpcdoctor import envfilter
from hpcdoctor.sysroot.base import DEFAULT_CMD_TIMEOUT, MAX_READ_BYTES, CmdResult, Missing, SysRoot
from hpcdoctor.sysroot.processes import run_process


def _read_chunked(path: str) -> bytes:
    # procfs sysctl handlers allocate a kernel buffer of the size asked for: one 8 MiB read of
    # /proc/sys/kernel/hostname fails with ENOMEM. Small reads work everywhere.
    parts = []
    total = 0
    with open(path, "rb", buffering=0) as fh:
        while total < MAX_READ_BYTES:
            chunk = fh.read(65536)
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
    return b"".join(parts)[:MAX_READ_BYTES]


class LiveSysRoot(SysRoot):
    mode = "live"

    def read(self, path: str) -> str:
        try:
            data = _read_chunked(path)
        except FileNotFoundError:
            raise Missing(f"{path} does not exist") from None
        except PermissionError:
            raise Missing(f"{path}: permission denied") from None
        except IsADirectoryError:
            raise Missing(f"{path} is a directory") from None
        except OSError as exc:
            # sysfs answers some reads with EIO/ENODEV/EINVAL (a device that went away, an
            # attribute the driver does not implement): that is Unknown, not a crash.
            raise Missing(f"{path}: {exc.strerror or exc}") from None
        return data.decode("utf-8", errors="replace")

    def listdir(self, path: str) -> List[str]:
        try:
            return os.listdir(path)
        except FileNotFoundError:
            raise Missing(f"{path} does not exist") from None
        except OSError as exc:
            raise Missing(f"{path}: {exc.strerror or exc}") from None

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True,
            keep: Optional[Callable[[str], str]] = None) -> CmdResult:
        if not live:
            raise Missing(f"{' '.join(argv)} is only read from recordings")
        return run_process(argv, self.cap(timeout))

    def _load_environ(self) -> Dict[str, str]:
        return envfilter.relevant(os.environ)

    def probe(self, name: str, fn: Callable[[], Any]) -> Any:
        return fn()
