"""``ReplaySysRoot``: reads a recorded snapshot folder, which is untrusted input (a user's ticket):
every read is bounded and confined to the folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from hpcdoctor import jsonbound
from hpcdoctor import envfilter
from hpcdoctor.sysroot.base import (DEFAULT_CMD_TIMEOUT, MAX_RECORDED_BYTES, SNAPSHOT_FORMAT, SNAPSHOT_VERSION,
                                     CmdResult, Missing, SysRoot, argv_key, read_capped)


class ReplaySysRoot(SysRoot):
    """A snapshot folder. Every byte comes through ``_inside`` and ``_read_bytes``: a symlink in a
    user's snapshot (a probe, a listing, ``meta.json``, ``index.json``, a command's output) that
    leads out of the folder is refused, whatever the way in."""

    mode = "replay"

    def __init__(self, root: Path, label: Optional[str] = None) -> None:
        super().__init__()
        self.root = Path(root)
        self.label = label or str(root)
        self._base = os.path.realpath(self.root)
        self.fs = self.root / "fs"
        self.meta: Dict[str, Any] = {}
        meta_path = self.root / "meta.json"
        if self._is_file(meta_path):
            self.meta = self._load_json(meta_path, "meta.json")
            if not isinstance(self.meta, dict) or self.meta.get("format") != SNAPSHOT_FORMAT:
                raise SnapshotError(f"{self.label}: meta.json is not an hpcdoctor snapshot")
            version = self.meta.get("version", SNAPSHOT_VERSION)
            # A newer layout may mean something else by the same file names: refused, not guessed at.
            if type(version) is not int or not 1 <= version <= SNAPSHOT_VERSION:
                raise SnapshotError(f"{self.label}: snapshot format version {str(version)[:20]!r} is not one this "
                                    f"hpcdoctor reads (1 to {SNAPSHOT_VERSION}); read it with the hpcdoctor that wrote it")
        unreadable = self.meta.get("unreadable")
        self.unreadable: Dict[str, str] = dict(unreadable) if isinstance(unreadable, dict) else {}
        listings = self.meta.get("listings") or {}
        self.listings: Dict[str, List[str]] = listings if isinstance(listings, dict) else {}
        self.commands: Dict[str, Dict[str, Any]] = {}
        index = self.root / "cmd" / "index.json"
        if self._is_file(index):
            entries = self._load_json(index, "cmd/index.json")
            if not isinstance(entries, list):
                raise SnapshotError(f"{self.label}: cmd/index.json is not a list")
            for entry in entries:
                if not isinstance(entry, dict) or not isinstance(entry.get("argv"), list):
                    raise SnapshotError(f"{self.label}: cmd/index.json has an entry without argv")
                self.commands[argv_key([str(a) for a in entry["argv"]])] = entry

    # -- the one guard ------------------------------------------------------------------------
    def _inside(self, path: Path) -> Path:
        """``path`` with its links resolved, or Missing when they lead out of the snapshot."""
        real = os.path.realpath(path)
        if real != self._base and not real.startswith(self._base + os.sep):
            raise Missing(f"{path} points outside the snapshot")
        return Path(real)

    def _is_file(self, path: Path) -> bool:
        try:
            return self._inside(path).is_file()
        except Missing:
            raise SnapshotError(f"{self.label}: {path.name} points outside the snapshot") from None

    def _read_bytes(self, path: Path, what: str) -> bytes:
        """A recorded file, whole, up to MAX_RECORDED_BYTES; a bigger one is refused, not cut."""
        real = self._inside(path)
        try:
            data = read_capped(real, MAX_RECORDED_BYTES, regular_only=True)
        except OSError as exc:
            raise Missing(f"{what}: {exc.strerror or exc}") from None
        if data is None:
            raise Missing(f"{what} is larger than the {MAX_RECORDED_BYTES >> 20} MiB hpcdoctor reads of a recording")
        return data

    def _load_json(self, path: Path, what: str) -> Any:
        try:
            data = self._read_bytes(path, what)
        except Missing as exc:
            raise SnapshotError(f"{self.label}: {exc}") from None
        return _parse_json(data, what)

    # -- the interface ------------------------------------------------------------------------
    def _host_path(self, path: str) -> Path:
        rel = os.path.normpath("/" + path).lstrip("/")
        return self.fs / rel

    def read(self, path: str) -> str:
        target = self._host_path(path)
        if self._inside(target).is_file():
            return self._read_bytes(target, path).decode("utf-8", errors="replace")
        reason = self.unreadable.get(path)
        raise Missing(reason or f"{path} was not recorded")

    def listdir(self, path: str) -> List[str]:
        recorded = self.listings.get(path)
        if isinstance(recorded, list):
            return [str(n) for n in recorded]
        target = self._host_path(path)
        real = self._inside(target)
        if real.is_dir():
            try:
                return os.listdir(real)
            except OSError as exc:
                raise Missing(f"{path}: {exc.strerror or exc}") from None
        raise Missing(self.unreadable.get(path) or f"{path} was not recorded")

    def exists(self, path: str) -> bool:
        try:
            return self._inside(self._host_path(path)).exists()
        except Missing:
            return False

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True,
            keep: Optional[Callable[[str], str]] = None) -> CmdResult:
        entry = self.commands.get(argv_key(list(argv)))
        if entry is None:
            raise Missing(f"{' '.join(argv)} was not recorded")
        stdout = ""
        if entry.get("stdout"):
            out_path = self.root / "cmd" / str(entry["stdout"])
            try:
                stdout = self._read_bytes(out_path, f"recorded output of {' '.join(argv)}").decode("utf-8", errors="replace")
            except Missing as exc:
                raise Missing(f"{' '.join(argv)}: {exc}") from None
        rc = entry.get("rc")
        return CmdResult(list(argv), rc if isinstance(rc, int) else 1, stdout, str(entry.get("stderr") or ""))

    def _load_environ(self) -> Dict[str, str]:
        try:
            res = self.run(["env"])
        except Missing:
            return {}
        if not res.ok:
            return {}
        return envfilter.relevant(envfilter.parse_env_output(res.stdout))

    def has_environ(self) -> bool:
        return argv_key(["env"]) in self.commands

    def probe(self, name: str, fn: Callable[[], Any]) -> Any:
        path = self.root / "probes" / f"{name}.json"
        if not self._inside(path).is_file():
            raise Missing(f"probe {name} was not recorded")
        data = _parse_json(self._read_bytes(path, f"probes/{name}.json"), f"probes/{name}.json")
        if isinstance(data, dict) and "__missing__" in data:
            raise Missing(str(data["__missing__"]))
        return data


class SnapshotError(Exception):
    """A snapshot that cannot be used at all (corrupt, foreign, hostile)."""


def _parse_json(data: bytes, what: str) -> Any:
    try:
        return jsonbound.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as exc:
        raise SnapshotError(f"{what} is not valid JSON ({exc.__class__.__name__}: {exc})") from None
