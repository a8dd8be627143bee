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


# PEP 538: Python 3.7+ started in the C locale (or in one that does not load, which falls back to
# it) sets LC_CTYPE to the first of these that loads, in its own environment, before any of
# hpcdoctor's code runs. /proc/self/environ still holds the environment the process was started with.
_COERCED_TO = ("C.UTF-8", "C.utf8", "UTF-8")


def _as_started(environ: Dict[str, str], initial: str = "/proc/self/environ") -> Dict[str, str]:
    """The environment as the user's shell gave it: Python's own LC_CTYPE coercion undone, so a
    locale the node lacks (LC_CTYPE=UTF-8 forwarded from a Mac) is judged, not the one Python chose."""
    now = environ.get("LC_CTYPE")
    if now not in _COERCED_TO:
        return dict(environ)
    try:
        with open(initial, "rb") as fh:
            raw = fh.read(1 << 20)
    except OSError:
        return dict(environ)
    started = None
    for item in raw.split(b"\0"):
        if item.startswith(b"LC_CTYPE="):
            started = item[len(b"LC_CTYPE="):].decode("utf-8", "replace")
    out = dict(environ)
    if started is None:
        out.pop("LC_CTYPE", None)
    else:
        out["LC_CTYPE"] = started
    return out


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
        return envfilter.relevant(_as_started(os.environ))

    def probe(self, name: str, fn: Callable[[], Any]) -> Any:
        return fn()
