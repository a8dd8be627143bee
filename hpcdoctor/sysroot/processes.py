"""Running commands for checks: each in its own process group, under its timeout, its output
bounded, and every child ended when hpcdoctor stops (a pre-job step must leave nothing behind)."""

from __future__ import annotations

import atexit
import os
import selectors
import signal
import subprocess
import threading
import time
from typing import Callable, Dict, Optional, Sequence, Tuple

from hpcdoctor.sysroot.base import MAX_READ_BYTES, RC_TOO_MUCH_OUTPUT, CmdResult, decode


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
    return CmdResult(list(argv), rc, decode(out), err, time.monotonic() - start)


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
    return bytes(out), decode(bytes(err[-MAX_STDERR_BYTES:])), rc


def _call(on_line: Callable[[str], None], raw: bytes) -> None:
    try:
        on_line(raw.decode("utf-8", errors="replace").rstrip("\r"))
    except Exception:
        pass
