"""Writing a report to a file: complete or absent, never half a file, whoever reads it when."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any


class OutputError(Exception):
    """The file could not be written: one line naming it and why."""


def write_atomic(path: str, text: str) -> None:
    """Write atomically: a pre-job record is either complete or absent, never half a file."""
    target = Path(path)
    # A lone surrogate (from a hostile snapshot's JSON) cannot be UTF-8: written escaped, not fatal.
    data = text.encode("utf-8", errors="backslashreplace")
    tmp = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=str(target.parent))
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            # mkstemp makes 0600: a file replaced keeps its mode, a new one gets the umask's, as
            # the shell's ">" would give it.
            try:
                mode = os.stat(target).st_mode & 0o7777
            except FileNotFoundError:
                mask = os.umask(0o077)
                os.umask(mask)
                mode = 0o666 & ~mask
            os.fchmod(fh.fileno(), mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def write_with(path: str, write: Any) -> None:
    """The Prometheus client's own atomic writer (temporary file, then rename), which node_exporter's
    textfile collector needs: it may read the file at any moment."""
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write(path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
