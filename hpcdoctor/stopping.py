"""Stopping cleanly: SIGTERM and SIGHUP (Slurm at a time limit, a closed terminal) unwind like
Ctrl-C, so temporary folders are removed and child process groups ended; a closed stdout pipe is
not a failure."""

from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any, Dict

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """SIGTERM or SIGHUP (Slurm at a time limit, a closed terminal): unwound like Ctrl-C, so that
    temporary folders are removed and child process groups ended, then exit 128 + the signal.
    A BaseException, so that no ``except Exception`` in a check swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: Any) -> None:
    # Later signals are ignored so that the clean-up they interrupt can finish.
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signum)


def install_handlers() -> Dict[int, Any]:
    """Handlers for the stop signals; returns the previous ones (main() restores them, for
    callers that run it in their own process)."""
    previous: Dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for sig in STOP_SIGNALS:
        old = signal.getsignal(sig)
        # A signal ignored by whoever started us (nohup's SIGHUP) stays ignored.
        if old is not signal.SIG_IGN:
            previous[sig] = old
            signal.signal(sig, _on_signal)
    return previous


def silence_stdout() -> None:
    """The reader closed the pipe (``| head -1``): that is not a failure. Point stdout at
    /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
