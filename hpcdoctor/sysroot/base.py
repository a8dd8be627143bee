"""The SysRoot interface: what a check may read (files, listings, commands, API probes), and the
limits every implementation keeps. A read that cannot be satisfied raises ``Missing``."""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence


# A file bigger than this is not something a check needs; reading it would only cost time.
MAX_READ_BYTES = 8 * 1024 * 1024
DEFAULT_CMD_TIMEOUT = 5.0
# A command ended for printing more than anyone reads; why_failed says so.
RC_TOO_MUCH_OUTPUT = 125
# What may stand in a recorded command's file name: anything else becomes "_".
SAFE_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")
# A recording is read whole up to this (a pasted `nvidia-smi -q` of 1000 GPUs is 12 MB; a paste is
# at most 16 MiB); a bigger one is refused with its reason, never cut silently.
MAX_RECORDED_BYTES = 16 * 1024 * 1024


def read_capped(source: Any, limit: int, regular_only: bool = False) -> Optional[bytes]:
    """All of a file (a path or a binary stream) up to ``limit`` bytes, or None when it holds more:
    input past a limit is refused, never cut. Reads one byte more than the limit, no further, so
    an endless stream costs ``limit`` bytes. OSError passes to the caller, who names the input.
    ``regular_only``: a FIFO or a device is refused before it is read (opening a FIFO for reading
    waits for a writer: a recording holding one blocked until the budget ran out)."""
    if isinstance(source, (str, Path)) and regular_only:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file")
            data = fh.read(limit + 1)
    elif isinstance(source, (str, Path)):
        with open(source, "rb") as fh:
            data = fh.read(limit + 1)
    else:
        data = source.read(limit + 1)
    return None if len(data) > limit else data

SNAPSHOT_FORMAT = "hpcdoctor-snapshot"
SNAPSHOT_VERSION = 1


class Missing(Exception):
    """The thing asked for cannot be had here; ``str(exc)`` says why."""


@dataclass
class CmdResult:
    argv: List[str]
    rc: int
    stdout: str
    stderr: str
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.rc == 0

    @property
    def not_found(self) -> bool:
        return self.rc == 127

    def why_failed(self) -> str:
        name = self.argv[0] if self.argv else "command"
        if self.rc == 127:
            return f"{name} is not installed"
        if self.rc == 124:
            return f"{' '.join(self.argv)} timed out"
        if self.rc == RC_TOO_MUCH_OUTPUT and self.stderr.startswith("printed more than"):
            return f"{' '.join(self.argv)} {self.stderr}"
        first = (self.stderr or self.stdout or "").strip().splitlines()
        detail = first[-1][:200] if first else "no output"
        return f"{' '.join(self.argv)} exited {self.rc}: {detail}"


class SysRoot:
    """The interface checks use. Paths are absolute paths on the inspected machine."""

    mode = "abstract"

    def __init__(self) -> None:
        self._env_cache: Optional[Dict[str, str]] = None
        # time.monotonic() by which every command must be over (the run's budget); set by the runner
        self.deadline: Optional[float] = None

    def cap(self, timeout: float) -> float:
        """A command's timeout, never past the run's deadline."""
        if self.deadline is None:
            return timeout
        return max(0.05, min(timeout, self.deadline - time.monotonic()))

    # -- files -------------------------------------------------------------------------------
    def read(self, path: str) -> str:
        raise NotImplementedError

    def read_or(self, path: str, default: Optional[str] = None) -> Optional[str]:
        try:
            return self.read(path)
        except Missing:
            return default

    def listdir(self, path: str) -> List[str]:
        raise NotImplementedError

    def glob(self, pattern: str) -> List[str]:
        """Absolute paths matching a glob whose wildcards sit in path components."""
        parts = [p for p in pattern.split("/") if p]
        found = ["/"]
        for part in parts:
            nxt = []
            for base in found:
                if any(ch in part for ch in "*?["):
                    try:
                        names = self.listdir(base)
                    except Missing:
                        continue
                    nxt.extend(_join(base, n) for n in sorted(names) if fnmatch.fnmatchcase(n, part))
                else:
                    nxt.append(_join(base, part))
            found = nxt
        return [p for p in found if self.exists(p)]

    def exists(self, path: str) -> bool:
        raise NotImplementedError

    # -- commands ----------------------------------------------------------------------------
    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True,
            keep: Optional[Callable[[str], str]] = None) -> CmdResult:
        """Run a command. ``live=False`` consults recordings only: for commands too slow to run
        on every check (``collect_env``) but worth reading from a snapshot or a paste. ``keep``:
        what a recording keeps of the output (all of it by default); the caller still gets it whole,
        so ``keep`` must leave everything the caller reads as it was (a kernel log's catalogued
        lines), and a replay of the recording reads the same."""
        raise NotImplementedError

    # -- environment and API probes ----------------------------------------------------------
    def environ(self) -> Dict[str, str]:
        """The job's environment, filtered to what matters and with secrets redacted."""
        if self._env_cache is None:
            self._env_cache = self._load_environ()
        return dict(self._env_cache)

    def _load_environ(self) -> Dict[str, str]:
        raise NotImplementedError

    def probe(self, name: str, fn: Callable[[], Any]) -> Any:
        """Result of an API probe that has no text source (NVML, sched_getaffinity, statvfs).

        ``fn`` runs on a live node and must return JSON-serialisable data; a snapshot replays it.
        """
        raise NotImplementedError

    def close(self) -> None:
        pass


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def decode(data: Optional[bytes]) -> str:
    if not data:
        return ""
    return data[:MAX_READ_BYTES].decode("utf-8", errors="replace")


def argv_key(argv: Sequence[str]) -> str:
    return "\x00".join(argv)
