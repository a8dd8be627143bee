"""SysRoot: every byte a check reads comes through here.

Three implementations share one interface, so checks run unchanged on a live node, on a recorded
snapshot (a support ticket) and while recording one:

* ``LiveSysRoot`` reads the machine;
* ``ReplaySysRoot`` reads a snapshot folder laid out as DESIGN.md describes;
* ``RecordingSysRoot`` reads the machine and writes what it read into a snapshot folder.

A read that cannot be satisfied raises ``Missing`` with the reason; checks turn that into an
Unknown fact. Nothing here judges what it reads.
"""

from __future__ import annotations

import atexit
import errno
import fnmatch
import json
import os
import re
import selectors
import signal
import stat
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from hpcdoctor import jsonbound
from hpcdoctor import envfilter

# A file bigger than this is not something a check needs; reading it would only cost time.
MAX_READ_BYTES = 8 * 1024 * 1024
DEFAULT_CMD_TIMEOUT = 5.0
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
    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True) -> CmdResult:
        """Run a command. ``live=False`` consults recordings only: for commands too slow to run
        on every check (``collect_env``) but worth reading from a snapshot or a paste."""
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


# ---------------------------------------------------------------------------------------------
# live


# Every child still running, so that exit can end them: a hung nvidia-smi whose check the runner
# gave up on must not outlive hpcdoctor (a pre-job step that leaves processes behind harms the job).
_LIVE: "set[subprocess.Popen[bytes]]" = set()
_LIVE_LOCK = threading.Lock()
# Set once hpcdoctor is stopping (a signal): a check thread still running must not start more.
_STOPPING = threading.Event()


def _register(proc: "subprocess.Popen[bytes]") -> bool:
    with _LIVE_LOCK:
        if _STOPPING.is_set():
            return False
        _LIVE.add(proc)
        return True


def _unregister(proc: "subprocess.Popen[bytes]") -> None:
    with _LIVE_LOCK:
        _LIVE.discard(proc)


def kill_children(final: bool = False) -> int:
    """End every child process group still running; returns how many were ended. ``final``:
    hpcdoctor is stopping, and commands started from now on are ended at once."""
    with _LIVE_LOCK:
        if final:
            _STOPPING.set()
        procs = list(_LIVE)
        _LIVE.clear()
    for proc in procs:
        if proc.poll() is None:
            _kill_group(proc)
    return len(procs)


atexit.register(kill_children, True)


def _kill_group(proc: "subprocess.Popen[bytes]") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except ProcessLookupError:
        pass


def run_process(argv: Sequence[str], timeout: float, env: Optional[Dict[str, str]] = None,
                on_stderr_line: Optional[Callable[[str], None]] = None) -> CmdResult:
    """Run argv with a hard timeout. The child gets its own process group so that a hung
    ``nvidia-smi`` and anything it spawned are killed together, and no stdin, so nothing can
    wait on a terminal. ``on_stderr_line`` receives stderr as it comes (benchmark progress).

    What is read is bounded too: past ``MAX_READ_BYTES`` of output the command is ended (a tool
    that prints without end must not fill the node's memory), and once the command has exited,
    a descendant that keeps its output open (a ``setsid`` child) is not waited for."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, env=env)
    except FileNotFoundError:
        return CmdResult(list(argv), 127, "", "command not found", 0.0)
    except OSError as exc:
        return CmdResult(list(argv), 126, "", f"cannot execute: {exc}", 0.0)
    if not _register(proc):
        _kill_group(proc)
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            pass
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        return CmdResult(list(argv), 124, "", "hpcdoctor is stopping", 0.0)
    try:
        # Counted once the command has started, as communicate() did: a command capped at the
        # run's deadline then outlasts the runner's wait, so its probe reads "stopped by the
        # budget" rather than racing it with "timed out".
        out, err, rc = _collect(proc, time.monotonic() + max(timeout, 0.01), on_stderr_line)
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        _unregister(proc)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    if rc == 124:
        err = f"timed out after {timeout:.1f}s"
    elif rc == RC_TOO_MUCH_OUTPUT:
        err = f"printed more than {MAX_READ_BYTES >> 20} MiB; stopped reading and ended it"
    return CmdResult(list(argv), rc, _decode(out), err, time.monotonic() - start)


# A command ended for printing more than anyone reads; why_failed says so.
RC_TOO_MUCH_OUTPUT = 125
MAX_STDERR_BYTES = 256 * 1024
# Once the command has exited, what its descendants still write is read while it keeps coming,
# with gaps no longer than this; a descendant holding the pipe open in silence is not waited for.
EXIT_GRACE_S = 0.2
_POLL_S = 0.05


def _collect(proc: "subprocess.Popen[bytes]", deadline: float,
             on_line: Optional[Callable[[str], None]]) -> Tuple[bytes, str, int]:
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    out, err, pending = bytearray(), bytearray(), bytearray()
    sel = selectors.DefaultSelector()
    sel.register(out_fd, selectors.EVENT_READ)
    sel.register(err_fd, selectors.EVENT_READ)
    outcome = None  # None: pipes closed; "timeout", "too much", "held open"
    try:
        while sel.get_map():
            now = time.monotonic()
            if now >= deadline:
                outcome = "timeout"
                break
            exited = proc.poll() is not None
            events = sel.select(min(deadline - now, EXIT_GRACE_S if exited else _POLL_S))
            if not events and exited:
                outcome = "held open"
                break
            for key, _ in events:
                data = os.read(key.fd, 65536)
                if not data:
                    sel.unregister(key.fd)
                elif key.fd == out_fd:
                    out += data
                    if len(out) > MAX_READ_BYTES:
                        del out[MAX_READ_BYTES:]
                        outcome = "too much"
                else:
                    err += data
                    if on_line is not None:
                        pending += data
                        *lines, rest = pending.split(b"\n")
                        pending[:] = rest
                        for raw in lines:
                            _call(on_line, raw)
                    if len(err) > 2 * MAX_STDERR_BYTES:
                        del err[:-MAX_STDERR_BYTES]
            if outcome == "too much":
                break
    finally:
        sel.close()
    if on_line is not None and pending:
        _call(on_line, bytes(pending))
    if outcome is None:
        # Both pipes closed: the command may still be finishing, within its deadline.
        try:
            proc.wait(timeout=max(0.01, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            outcome = "timeout"
    if outcome is not None:
        # Ends the command, or what is left of its group holding the pipe: a process group
        # outlives its leader while members remain, and its id is not reused until then.
        _kill_group(proc)
    try:
        proc.wait(timeout=1.0)
    except subprocess.TimeoutExpired:
        pass  # unkillable (uninterruptible sleep in a driver): not waited for
    if outcome == "timeout":
        return bytes(out), "", 124
    if outcome == "too much":
        return bytes(out), "", RC_TOO_MUCH_OUTPUT
    rc = proc.returncode if proc.returncode is not None else 124
    return bytes(out), _decode(bytes(err[-MAX_STDERR_BYTES:])), rc


def _call(on_line: Callable[[str], None], raw: bytes) -> None:
    try:
        on_line(raw.decode("utf-8", errors="replace").rstrip("\r"))
    except Exception:
        pass


def _decode(data: Optional[bytes]) -> str:
    if not data:
        return ""
    return data[:MAX_READ_BYTES].decode("utf-8", errors="replace")


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

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True) -> CmdResult:
        if not live:
            raise Missing(f"{' '.join(argv)} is only read from recordings")
        return run_process(argv, self.cap(timeout))

    def _load_environ(self) -> Dict[str, str]:
        return envfilter.relevant(os.environ)

    def probe(self, name: str, fn: Callable[[], Any]) -> Any:
        return fn()


# ---------------------------------------------------------------------------------------------
# replay

_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]+")


def argv_key(argv: Sequence[str]) -> str:
    return "\x00".join(argv)


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

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True) -> CmdResult:
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


# ---------------------------------------------------------------------------------------------
# record


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

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_CMD_TIMEOUT, live: bool = True) -> CmdResult:
        # live=False commands (collect_env) are too slow for every check but worth their seconds
        # in a snapshot: support staff read them, and they are what users paste.
        res = run_process(argv, self.cap(timeout))
        self._store_cmd(res)
        return res

    def _store_cmd(self, res: CmdResult) -> None:
        with self._lock:
            stem = _NAME_RE.sub("_", "_".join(res.argv))[:60].strip("_") or "cmd"
            n = self._names.get(stem, 0)
            self._names[stem] = n + 1
            name = f"{stem}.txt" if n == 0 else f"{stem}.{n}.txt"
            out_name = None
            if res.rc != 127:
                (self.out / "cmd" / name).write_text(res.stdout, encoding="utf-8")
                out_name = name
            self._index.append(
                {"argv": res.argv, "rc": res.rc, "stdout": out_name, "stderr": res.stderr[-4000:]}
            )

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
