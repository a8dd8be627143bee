"""A crash inside the NVIDIA driver's user-space library (libcuda.so, libnvidia-*.so), from the
kernel's segfault line, GDB's stop or systemd-coredump's stack trace."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from hpcdoctor.engine import Hit, rule
from hpcdoctor.facts import FactView
from hpcdoctor.rules._common import told_evidence, told_text

_DRIVER_LIB = re.compile(r"(?:^|/)lib(?:cuda|nvidia-[a-z0-9-]{1,40})\.so(?P<version>[.0-9]{0,20})$")
_FRAMES = ("crash_frames:gdb-frame-in-nvidia-driver", "crash_frames:coredump-frame-in-nvidia-driver")
# GDB's report of the signal that stopped the program (errorlines.toml, its gdb-signal form feeds
# the signal's entries): the frame line after it is where it stopped, not a breakpoint.
_SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGABRT")


def _driver_version(obj: str) -> Optional[str]:
    """libcuda.so.565.77 is driver 565.77's; libcuda.so.1 names no driver."""
    m = _DRIVER_LIB.search(obj)
    v = (m.group("version") or "").strip(".") if m else ""
    return v if re.fullmatch(r"\d{3}\.\d{1,3}(?:\.\d{1,3})?", v) else None


def _crash(f: FactView) -> Optional[dict]:
    told = f.get("ticket.symptoms") or []
    for s in told:
        if s.get("id") == "kernel_fault:user-segfault" and _DRIVER_LIB.search(str(s.get("object") or "")):
            return s
        if s.get("id") == "crash_frames:coredump-frame-in-nvidia-driver":
            # the driver's entry point the program called (cuInit) says more than its unnamed frames
            frames = [t for t in told if t.get("id") == s["id"]]
            return next((t for t in frames if t.get("function") not in (None, "n/a", "??")), s)
        if s.get("id") == "crash_frames:gdb-frame-in-nvidia-driver":
            stopped = any(sig in str(t.get("text", "")) and "received signal" in str(t.get("text", ""))
                          for t in told for sig in _SIGNALS if (t.get("line") or 0) <= (s.get("line") or 0))
            if stopped:
                return s
    return None


@rule("GPU047", "crash-in-nvidia-driver-library", "warning",
      "a program crashed inside the NVIDIA driver's user-space library (libcuda.so)", impact=6)
def crash_in_nvidia_driver_library(f: FactView) -> Iterator[Hit]:
    """
    What it detects:
        In a pasted log, a process that died inside the NVIDIA driver's user-space library: the
        kernel's "python3[7777]: segfault at ... error 4 in libcuda.so.565.77[...]"
        (knowledge/messages/kernel_fault.toml), GDB's "Program received signal SIGSEGV" followed
        by "0x... in ?? () from /usr/lib64/nvidia/libcuda.so", or systemd-coredump's stack trace
        with a frame in "(libcuda.so.1)" (knowledge/messages/crash_frames.toml).

    Why it matters:
        libcuda.so is the driver's code, installed with the kernel module: the program reached it
        through CUDA (cuInit, a kernel launch, a memory call), OpenCL or NVML. A crash there is a
        driver bug, which a later driver of the same branch fixes (NVIDIA's release notes list
        them), or a bad pointer, stream or context the program handed the driver; recompiling or
        reinstalling the program's Python packages changes neither.

    How to fix:
        Note the driver version and update to the newest driver of its branch (or the newest the
        node's GPUs and CUDA take), then run again; if it still crashes, run the program under
        compute-sanitizer, which names an invalid argument the program passed to CUDA.

    References:
        - https://github.com/BVLC/caffe/issues/183 (segfault in libcuda.so; fixed by updating the driver)
        - https://github.com/nagadomi/waifu2x/issues/139 (a crash in cuInit under driver 370.23)
        - https://docs.nvidia.com/compute-sanitizer/ComputeSanitizer/index.html
        - https://www.kernel.org/doc/html/latest/admin-guide/sysctl/kernel.html (print-fatal-signals; the segfault line)
    """
    s = _crash(f)
    if s is None:
        return
    obj = str(s.get("object") or "libcuda.so")
    version = _driver_version(obj)
    where = f"{obj.rsplit('/', 1)[-1]}" + (f", driver {version}" if version else "")
    function = s.get("function")
    at = f" in {function}" if function and function not in ("??", "n/a") else ""
    yield Hit(message=f"the program crashed inside the NVIDIA driver's user-space library{at} ({where}; line {s.get('line')}: "
                      f"\"{told_text(s)}\"): a driver bug that a later driver fixes, or a bad pointer or handle the "
                      "program passed to CUDA",
              fix=("nvidia-smi --query-gpu=name,driver_version --format=csv,noheader   # the driver that crashed: update to "
                   "the newest of its branch (NVIDIA's release notes list fixed crashes), then run again\n"
                   "# if it still crashes: run the same command under compute-sanitizer --tool memcheck (CUDA toolkit), "
                   "which names an invalid argument the program passed to CUDA"),
              evidence=told_evidence(s))
