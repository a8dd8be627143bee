"""``RecordingSysRoot``: reads the live machine and keeps a copy of everything read, in snapshot
layout (``hpcdoctor snapshot``)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from hpcdoctor import envfilter
from hpcdoctor.sysroot.base import (DEFAULT_CMD_TIMEOUT, SAFE_NAME_RE, SNAPSHOT_FORMAT, SNAPSHOT_VERSION, CmdResult,
                                     Missing)
from hpcdoctor.sysroot.live import LiveSysRoot
from hpcdoctor.sysroot.processes import run_process

class RecordingSysRoot(LiveSysRoot):
    """Reads the live machine and keeps a copy of everything read, in snapshot layout."""

    mode = "record"

    def __init__(self, out_dir: Path) -> None:
        super().__init__()
        self.out = Path(out_dir)
        self._lock = threading.Lock()
        self._index: List[Dict[str, Any]] = []
        self._names: Dict[str, int] = {}
        self.unreadable: Dict[str, str] = {}
        # A listing is kept whole: a check may list a folder without reading every entry in it.
        self.listings: Dict[str, List[str]] = {}
        (self.out / "fs").mkdir(parents=True, exist_ok=True)
        (self.out / "cmd").mkdir(exist_ok=True)
        (self.out / "probes").mkdir(exist_ok=True)

    def read(self, path: str) -> str:
        try:
            text = super().read(path)
        except Missing as exc:
            with self._lock:
                self.unreadable[path] = str(exc)
            raise
        dest = self.out / "fs" / os.path.normpath("/" + path).lstrip("/")
        with self._lock:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")
        return text

    def listdir(self, path: str) -> List[str]:
        try:
            names = super().listdir(path)
        except Missing as exc:
            with self._lock:
                self.unreadable[path] = str(exc)
            raise
        with self._lock:
            (self.out / "fs" / os.path.normpath("/" + path).lstrip("/")).mkdir(parents=True, exist_ok=True)
            self.listings[path] = sorted(names)
        return names

    def exists(self, path: str) -> bool:
        found = os.path.exists(path)
        if found:
            # Replay must see the same answer; a marker (or the folder) stands in for the file,
            # and a later read() overwrites the marker with the content.
            dest = self.out / "fs" / os.path.normpath("/" + path).lstrip("/")
            with self._lock:
                if os.path.isdir(path):
                    dest.mkdir(parents=True, exist_ok=True)
                elif not dest.exists():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    dest.touch()
        return found

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True,
            keep: Optional[Callable[[str], str]] = None) -> CmdResult:
        # live=False commands (collect_env) are too slow for every check but worth their seconds
        # in a snapshot: support staff read them, and they are what users paste.
        res = run_process(argv, self.cap(timeout))
        if keep is not None and res.ok:
            self._store_cmd(CmdResult(res.argv, res.rc, keep(res.stdout), res.stderr), kept=True)
        else:
            self._store_cmd(res)
        return res

    def _store_cmd(self, res: CmdResult, kept: bool = False) -> None:
        with self._lock:
            stem = SAFE_NAME_RE.sub("_", "_".join(res.argv))[:60].strip("_") or "cmd"
            n = self._names.get(stem, 0)
            self._names[stem] = n + 1
            name = f"{stem}.txt" if n == 0 else f"{stem}.{n}.txt"
            out_name = None
            if res.rc != 127:
                (self.out / "cmd" / name).write_text(res.stdout, encoding="utf-8")
                out_name = name
            entry = {"argv": res.argv, "rc": res.rc, "stdout": out_name, "stderr": res.stderr[-4000:]}
            if kept:  # support staff reading cmd/ should know the blank lines were not blank on the node
                entry["kept"] = "only the lines hpcdoctor reads; the others are blanked"
            self._index.append(entry)


    def _load_environ(self) -> Dict[str, str]:
        env = envfilter.relevant(os.environ)
        # A line break inside a value would start a variable of its own when the recording is read
        # back ("X=a\nOMP_NUM_THREADS=999"): recorded as the two characters \n, never as a line.
        text = "".join(f"{k}={envfilter.one_line(v)}\n" for k, v in sorted(env.items()))
        self._store_cmd(CmdResult(["env"], 0, text, ""))
        return env

    def probe(self, name: str, fn: Callable[[], Any]) -> Any:
        path = self.out / "probes" / f"{name}.json"
        try:
            data = fn()
        except Missing as exc:
            path.write_text(json.dumps({"__missing__": str(exc)}), encoding="utf-8")
            raise
        path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str), encoding="utf-8")
        return data

    def finish(self, meta: Dict[str, Any]) -> None:
        with self._lock:
            (self.out / "cmd" / "index.json").write_text(json.dumps(self._index, indent=1), encoding="utf-8")
            meta = dict(meta)
            meta["format"] = SNAPSHOT_FORMAT
            meta["version"] = SNAPSHOT_VERSION
            meta["unreadable"] = dict(sorted(self.unreadable.items()))
            meta["listings"] = dict(sorted(self.listings.items()))
            (self.out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
