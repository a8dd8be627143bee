"""The parsed message catalogues, kept per user between runs of paste triage.

Reading a paste needs every catalogue: about a hundred TOML files that tomllib takes 0.5 s to
parse on the development VM, against 0.02 s for the same data as one JSON document. Support staff
triage paste after paste, so the parsed documents are kept in ``$XDG_CACHE_HOME/hpcdoctor`` (else
``~/.cache/hpcdoctor``), one file per hpcdoctor version, each document under the (mtime, size) of
the TOML it came from: a catalogue edited in place is parsed again.

Only the all-families read of paste triage uses it. The live kernel-log check reads a few small
families on every rank of a job, and there a shared home directory written by a thousand ranks at
once would cost more than it saves. ``HPCDOCTOR_CACHE=off`` turns it off; a cache that cannot be
read or written is ignored, never an error.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

from hpcdoctor import __version__

Stamp = Tuple[int, int]


def _folder() -> Optional[Path]:
    if os.environ.get("HPCDOCTOR_CACHE", "").lower() in ("off", "0", "no"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "hpcdoctor" if os.path.isabs(base) else None


def _file(folder: Path) -> Path:
    return folder / f"messages-{__version__}.json"


def _read(folder: Path) -> Dict[str, Any]:
    try:
        with open(_file(folder), encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        return {}
    ok = isinstance(doc, dict) and isinstance(doc.get("stamps"), dict) and isinstance(doc.get("docs"), dict)
    return doc if ok else {}


def _write(folder: Path, doc: Dict[str, Any]) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=".messages-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, separators=(",", ":"))
            os.replace(tmp, _file(folder))  # readers see the old file or the new one, whole
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, TypeError, ValueError):
        pass  # a read-only home, a full disk, a value JSON cannot hold: run uncached


def documents(paths: List[Path], stamps: List[Stamp], parse: Callable[[Path], Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The parsed document of each path: from the cache where its stamp matches, else parsed (and
    the cache rewritten once, with every document)."""
    folder = _folder()
    cached = _read(folder) if folder is not None else {}
    known, docs = cached.get("stamps", {}), cached.get("docs", {})
    out, parsed = [], False
    for path, stamp in zip(paths, stamps):
        hit = docs.get(path.name) if known.get(path.name) == list(stamp) else None
        if not isinstance(hit, dict):
            hit = parse(path)
            parsed = True
        out.append(hit)
    if folder is not None and (parsed or set(known) != {p.name for p in paths}):
        _write(folder, {"stamps": {p.name: list(s) for p, s in zip(paths, stamps)},
                        "docs": {p.name: d for p, d in zip(paths, out)}})
    return out
