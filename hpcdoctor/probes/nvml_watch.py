"""What a GPU was doing while the benchmark payload measured it: NVML read in a thread every
tenth of a second, each sample filed under the measurement the payload said it was in.

A figure alone cannot tell a slow card from a shared or power-capped one: on the H100 this was
written on, another process multiplying on the same GPU halved every GEMM figure, and under load
the card sat at its 700 W cap with the SM clock anywhere between 1380 and 1980 MHz. The rules read
these conditions beside the figure. Read-only queries only, as nvml.py.
"""

from __future__ import annotations

import os
import re
import statistics
import threading
from typing import Any, Dict, List, Optional, Set

from hpcdoctor.probes.nvml import clock_events, compute_processes, decode_clock_events

PERIOD_S = 0.1
# "hpcdoctor bench-status: 4/11 gpu0.gemm.bf16, 89 s of the budget left" starts a measurement;
# "hpcdoctor bench: ..." ends it (hpcdoctor/payload/bench_timing.py).
_STARTS = re.compile(r"^hpcdoctor bench-status: \d+/\d+ (gpu(\d+)\.\S+?),")


def _ours(pid: int) -> Optional[bool]:
    """Is pid the payload or one of its children? The payload leads a session of its own
    (run_process starts it so) whose leader is a child of this process. None where this PID
    namespace cannot see pid (NVML gives a container the host's PIDs): then nobody can tell."""
    if pid == os.getpid():
        return True
    try:
        sid = os.getsid(pid)
        with open(f"/proc/{sid}/stat") as fh:
            ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
    except ProcessLookupError:
        return None
    except (OSError, ValueError, IndexError):
        return False
    return ppid == os.getpid()


class Watch:
    def __init__(self, nv: Any = None, period: float = PERIOD_S) -> None:
        self._nv, self._period = nv, period
        self._lock = threading.Lock()
        self._step: Optional[str] = None
        self._gpu: Optional[int] = None
        self._samples: Dict[str, List[Dict[str, Any]]] = {}
        self._before: Dict[int, Set[int]] = {}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._handles: Dict[int, Any] = {}
        # Judged when a PID is first seen, while it lives: the payload is gone by stop().
        self._owner: Dict[int, Optional[bool]] = {}
        self.error: Optional[str] = None

    def start(self) -> bool:
        """Begin watching; False (with .error) where NVML cannot be read."""
        try:
            if self._nv is None:
                import pynvml
                self._nv = pynvml
            self._nv.nvmlInit()
            self._handles = {i: self._nv.nvmlDeviceGetHandleByIndex(i) for i in range(self._nv.nvmlDeviceGetCount())}
            # Whatever runs on a GPU before the payload starts is somebody else's.
            self._before = {i: {p["pid"] for p in compute_processes(self._nv, h)} for i, h in self._handles.items()}
        except Exception as exc:  # NVML absent, broken or a driver mismatch: no conditions, said why
            self.error = f"NVML could not be read: {exc}"
            return False
        self._thread = threading.Thread(target=self._run, name="hpcdoctor-nvml-watch", daemon=True)
        self._thread.start()
        return True

    def line(self, text: str) -> None:
        """The payload's progress lines, as they come."""
        m = _STARTS.match(text)
        with self._lock:
            if m:
                self._step, self._gpu = m.group(1), int(m.group(2))
            elif text.startswith("hpcdoctor bench:"):
                self._step = self._gpu = None

    def stop(self) -> Dict[int, Dict[str, Any]]:
        """{GPU index: {measurement: conditions}} for every GPU measurement that was sampled."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        try:
            self._nv.nvmlShutdown()
        except Exception:
            pass
        out: Dict[int, Dict[str, Any]] = {}
        with self._lock:
            samples = dict(self._samples)
        for step, rows in samples.items():
            index, name = step.split(".", 1)
            i = int(index[3:])
            out.setdefault(i, {})[name] = self._summary(i, rows)
        return out

    def _run(self) -> None:
        while not self._stop.wait(self._period):
            with self._lock:
                step, i = self._step, self._gpu
            if step is None or i not in self._handles:
                continue
            try:
                row = self._read(self._handles[i])
            except Exception:
                continue  # one failed read is not a condition; the others still are
            for p in row["processes"]:
                if p["pid"] not in self._owner:
                    self._owner[p["pid"]] = False if p["pid"] in self._before.get(i, set()) else _ours(p["pid"])
            with self._lock:
                self._samples.setdefault(step, []).append(row)

    def _read(self, h: Any) -> Dict[str, Any]:
        nv = self._nv
        return {"sm_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                "sm_max_mhz": nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM),
                "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                "power_limit_w": nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,
                "reasons": clock_events(nv, h), "processes": compute_processes(nv, h)}

    def _summary(self, i: int, rows: List[Dict[str, Any]]) -> Dict[str, Any]:
        clocks = [r["sm_mhz"] for r in rows]
        power = [r["power_w"] for r in rows]
        reasons: Dict[str, int] = {}
        for r in rows:
            for name in decode_clock_events(r["reasons"]):
                reasons[name] = reasons.get(name, 0) + 1
        others: Dict[int, Optional[int]] = {}
        unplaced: Set[int] = set()
        for r in rows:
            for p in r["processes"]:
                ours = self._owner.get(p["pid"])
                if ours is None:
                    unplaced.add(p["pid"])
                elif not ours:
                    others[p["pid"]] = max(others.get(p["pid"]) or 0, p["used_mib"] or 0) or None
        return {
            "samples": len(rows),
            "sm_mhz": {"min": min(clocks), "median": statistics.median(clocks), "max": max(clocks)},
            "sm_max_mhz": rows[-1]["sm_max_mhz"],
            "power_w": {"median": round(statistics.median(power), 1), "max": round(max(power), 1)},
            "power_limit_w": rows[-1]["power_limit_w"],
            "clock_event_reasons": {k: round(v / len(rows), 2) for k, v in sorted(reasons.items())},
            "other_processes": [{"pid": pid, "used_mib": mib} for pid, mib in sorted(others.items())],
            # Started during the run and invisible here: this benchmark's own, or another's.
            "unattributed_pids": sorted(unplaced),
        }
